SOLUTIONS: dict[int, str] = {
    1: """event_ms = {
    "gpu(20, side); side.wait_stream(default); gpu(10)": 10,  # side waits for default, not default for side
    "gpu(10); gpu(20, side); default.wait_stream(side)": 20,  # both ran at once; the end waits for the longer
    "gpu(10); side.wait_stream(default); gpu(20, side); default.wait_stream(side)": 30,  # one after the other
    "gpu(10); host(40); gpu(10)": 50,  # the GPU sits idle until Python queues the second gpu(10)
    "gpu(10); torch.cuda.synchronize(); host(40); gpu(10)": 60,  # and Python first waits 10 ms for the GPU
}""",
    2: """def double_buffered(bufs, side, rounds, produce, consume):
    current, results, read = torch.cuda.current_stream(), [], [torch.cuda.Event(), torch.cuda.Event()]
    side.wait_stream(current)  # the caller's earlier work on the buffers comes first
    for r in range(rounds):
        with torch.cuda.stream(side):
            side.wait_event(read[r % 2])  # write-after-read: round r - 2's consume of this buffer (if any) is done
            produce(bufs[r % 2], r)
        current.wait_event(side.record_event())  # read-after-write: this round's produce is done
        results.append(consume(bufs[r % 2]))
        read[r % 2].record()
    return results""",
    3: """def time_side_work(fn, side):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(side)  # mark the queue of the stream that runs the work
    fn()
    end.record(side)
    end.synchronize()
    return start.elapsed_time(end)""",
}
