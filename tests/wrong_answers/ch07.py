"""Chapter 07's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch07 import SOLUTIONS

from . import lines_of


def _upload(*body: str) -> str:
    """Code of an `upload_all` with one pinned staging buffer, running `body` for each batch."""
    head = (
        "def upload_all(batches, device):\n"
        "    staging = torch.empty_like(batches[0], pin_memory=True)\n"
        "    on_device = []\n"
        "    for batch in batches:\n"
    )
    return head + "".join(f"        {line}\n" for line in body) + "    return on_device"


_REFILL, _COPY = "staging.copy_(batch)", "on_device.append(staging.to(device, non_blocking=True))"
_RECORD = ("read = torch.cuda.Event()", "read.record()")
_TO_HOST = lines_of(SOLUTIONS[2], 1, 2)  # def to_host(t): and its non_blocking copy
_MOVE = "{k: v.to(device, non_blocking=True) for k, v in batch.items()}"
_TO_DEVICE = f"def to_device(batch, device):\n    return {_MOVE}"


def _on_stream(stream: str, before: str = "", after: str = "") -> str:
    """Code of a `to_device` that makes its copies inside `with torch.cuda.stream(stream)`, between two lines."""
    return (
        f"def to_device(batch, device):\n    {before}\n    with torch.cuda.stream({stream}):\n        out = {_MOVE}\n"
        f"    {after}\n    return out"
    )


_CACHED = "_s = None\n\n" + _on_stream(
    "_s",
    "global _s\n    _s = _s or torch.cuda.Stream()\n    current = torch.cuda.current_stream()\n"
    "    _s.wait_stream(current)",
    "current.wait_stream(_s)",
)


#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            "def to_device(batch, device):\n"
            "    for key, t in batch.items():\n"
            "        batch[key] = t.to(device, non_blocking=True)\n"
            "    return dict(batch)",
            "changed its arguments: build a new dict and leave `batch` as it was",
        ),
        # the device named in the code: right on the meta device only
        (
            "def to_device(batch, device):\n    return {k: v.to('meta', non_blocking=True) for k, v in batch.items()}",
            "to_device({'image': …, 'label': …}, cuda)['image'] is a torch.float32 tensor of shape (4, 3, 8, 8) on "
            "meta, not batch['image'] on cuda",
        ),
        (
            "def to_device(batch, device):\n    return {key: t.to(device) for key, t in batch.items()}",
            "the host waited for a blocking copy to the device; it need not wait at all",
        ),
        (
            "def to_device(batch, device):\n"
            "    moved = {}\n"
            "    for key, t in batch.items():\n"
            "        moved[key] = t.to(device, non_blocking=True)\n"
            "        torch.cuda.synchronize()\n"
            "    return moved",
            "the host waited for torch.cuda.synchronize(); it need not wait at all",
        ),
        (
            "def to_device(batch, device):\n"
            "    for t in batch.values():\n"
            "        t.to(device, non_blocking=True)\n"
            "    return batch",
            "returned batch; expected a new dict with its keys",
        ),
        (
            "def to_device(batch, device):\n    return [t.to(device, non_blocking=True) for t in batch.values()]",
            "expected a new dict with its keys",
        ),
        (
            "def to_device(batch, device):\n    return {key: t.cuda(non_blocking=True) for key, t in batch.items()}",
            "['image'] is a torch.float32 tensor of shape (4, 3, 8, 8) on the GPU, not batch['image'] on meta",
        ),
        # every tensor made float32 on the way: the integer, bool and half ones change
        (
            "def to_device(batch, device):\n"
            "    return {k: v.to(device, non_blocking=True).float() for k, v in batch.items()}",
            "['label'] is a torch.float32 tensor of shape (4,) on meta, not batch['label'] on meta",
        ),
        # a wait of the stream for each tensor is a wait of the host too
        (
            "def to_device(batch, device):\n"
            "    moved = {}\n"
            "    for key in batch:\n"
            "        moved[key] = batch[key].to(device, non_blocking=True)\n"
            "        torch.cuda.current_stream().synchronize()\n"
            "    return moved",
            "the host waited for caller's stream.synchronize()",
        ),
        # the keys of the example batch written out: the other batches lose theirs
        (
            "def to_device(batch, device):\n"
            "    return {'image': batch['image'].to(device, non_blocking=True),\n"
            "            'label': batch['label'].to(device, non_blocking=True)}",
            "raised KeyError (line 2 of your code): 'image'",
        ),
        # one wait for the whole batch: the host still waits, which the task rules out
        (
            f"def to_device(batch, device):\n    moved = {_MOVE}\n    torch.cuda.synchronize()\n    return moved",
            "the host waited for torch.cuda.synchronize(); it need not wait at all (later GPU work on the current "
            "stream waits for host→device copies by itself)",
        ),
        (
            _TO_DEVICE.replace("    return ", "    moved = ")
            + "\n    torch.accelerator.synchronize()\n    return moved",
            "the host waited for torch.cuda.synchronize()",
        ),
        (
            _on_stream("torch.cuda.current_stream()", after="torch.cuda.current_stream().synchronize()"),
            "the host waited",
        ),
        # a blocking copy of a pageable clone: the host waits for each
        (
            "def to_device(batch, device):\n    return {k: v.clone().to(device) for k, v in batch.items()}",
            "the host waited for a blocking copy to the device; it need not wait",
        ),
        # a dtype named on the way: the integer, bool and half tensors become float32
        (
            _TO_DEVICE.replace("non_blocking=True", "torch.float32, non_blocking=True"),
            "['label'] is a torch.float32 tensor of shape (4,) on meta, not batch['label'] on meta",
        ),
        (
            _TO_DEVICE.replace("non_blocking=True", "dtype=torch.float32, non_blocking=True"),
            "['label'] is a torch.float32 tensor of shape (4,) on meta",
        ),
        # a host read of each tensor, to check it: on a GPU it waits for the copy
        (
            "def to_device(batch, device):\n"
            "    out = {}\n"
            "    for k, v in batch.items():\n"
            "        out[k] = v.to(device, non_blocking=True)\n"
            "        assert out[k].sum().item() == v.sum().item()\n"
            "    return out",
            "to_device({'image': …, 'label': …}, meta): the host waited for .item(); it need not",
        ),
        (
            "def to_device(batch, device):\n"
            "    out = {}\n"
            "    for k, v in batch.items():\n"
            "        out[k] = v.to(device, non_blocking=True)\n"
            "        print(k, out[k].device, out[k].float().sum().item())\n"
            "    return out",
            "the host waited for .item()",
        ),
        # non_blocking only for pinned tensors: a tensor not pinned is copied blocking, and the host waits
        (
            "def to_device(batch, device):\n"
            "    return {k: v.to(device, non_blocking=v.is_pinned()) for k, v in batch.items()}",
            "to_device({'torch.int32': …, 'torch.int64': …, 'torch.bool': …, 'torch.float16': …, 'torch.bfloat16': …, "
            "'torch.float32': …} (not pinned), meta): the host waited for a blocking copy to the device; it need "
            "not wait at all",
        ),
        # an operator whose result's size depends on the values, after the copies: the host waits to learn it
        *(
            (
                f"def to_device(batch, device):\n    out = {_MOVE}\n    {use}\n    return out",
                f"to_device({{'image': …, 'label': …}}, meta): the host waited for {how} (its size depends on the "
                "values)",
            )
            for use, how in (
                ("torch.nonzero(out['label'])", "nonzero()"),
                ("out['label'].nonzero()", "nonzero()"),
                ("torch.unique(out['label'])", "unique()"),
                ("out['label'][out['label'] >= 0]", "a[mask]"),
            )
        ),
        # copies on a stream of their own that the current stream never waits for
        (
            _on_stream("torch.cuda.Stream()"),
            "to_device({'image': …, 'label': …}, meta): a copy ran on the stream 2 and the current stream did not wait "
            "for it: make it wait for the stream 2 before you return",
        ),
        (
            _CACHED.replace("    _s.wait_stream(current)\n", "").replace("    current.wait_stream(_s)\n", ""),
            "and the current stream did not wait for it",
        ),
    ),
    2: (
        (
            "def to_host(t):\n    return t.to('cpu', non_blocking=True)",
            "the copy had not arrived when to_host returned",
        ),
        (
            "def to_host(t):\n"
            "    copied = torch.cuda.Event()\n"
            "    copied.record()\n"
            "    host = t.to('cpu', non_blocking=True)\n"
            "    copied.synchronize()\n"
            "    return host",
            "the copy ran on the caller's stream until 4 ms; the host waited but not for it (event.synchronize())",
        ),
        (
            _TO_HOST + "    copied = torch.cuda.Event()\n    copied.record()\n    copied.wait()\n    return host",
            "you recorded an event but the host never waited for it",
        ),
        (
            "def to_host(t):\n    return t.cpu()",
            "the values are right, but it read t with a blocking copy to the host: return what a non_blocking copy "
            "fills",
        ),
        # the GPU tensor itself, after a wait
        ("def to_host(t):\n    torch.cuda.synchronize()\n    return t", "on the GPU; expected a tensor on the host"),
        # a float copy of integer values: right for float32 only
        (
            "def to_host(t):\n"
            "    host = t.to('cpu', torch.float32, non_blocking=True)\n"
            "    torch.cuda.synchronize()\n"
            "    return host",
            "returned a torch.float32 tensor of shape (2, 3) on cpu holding [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]; "
            "expected torch.int64 [[0, 2, 4], [1, 3, 5]]",
        ),
        # the default stream waited for: the copy runs on the current stream, the caller's
        (
            _TO_HOST + "    torch.cuda.default_stream().synchronize()\n    return host.clone()",
            "the copy ran on the caller's stream until 4 ms; the host waited but not for it "
            "(default stream.synchronize())",
        ),
        (
            "def to_host(t):\n    torch.cuda.synchronize()\n    return t.to('cpu', non_blocking=True)",
            "the host waited only before the copy was queued (torch.cuda.synchronize())",
        ),
        # the event recorded on a stream of its own, which holds nothing
        (
            _TO_HOST
            + "    copied = torch.cuda.Event()\n    copied.record(torch.cuda.Stream())\n    copied.synchronize()\n"
            "    return host",
            "the copy ran on the caller's stream until 4 ms; the host waited but not for it (event.synchronize())",
        ),
        # read before the wait: the host buffer did not hold the values yet
        (
            _TO_HOST + "    out = host.clone()\n    torch.cuda.synchronize()\n    return out",
            "holding [-1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0]; expected torch.float32 [1.0, 2.0, 3.0, 4.0, "
            "5.0, 6.0, 7.0, 8.0]: what the host buffer held before the copy landed: read it after waiting",
        ),
        # the copy on a stream that does not wait for the kernel writing t
        (
            "def to_host(t):\n"
            "    s = torch.cuda.Stream()\n"
            "    with torch.cuda.stream(s):\n"
            "        host = t.to('cpu', non_blocking=True)\n"
            "    s.synchronize()\n"
            "    return host",
            "the copy on the stream 2 started before the kernel writing t on the current stream had finished at 3 ms: "
            "make its stream wait for the current stream",
        ),
        # the event asked once: query() says whether the copy is done, and does not wait
        (
            _TO_HOST + "    copied = torch.cuda.Event()\n    copied.record()\n    copied.query()\n    return host",
            "expected torch.float32 [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]: you recorded an event but the host never "
            "waited for it: call event.synchronize()",
        ),
        # the wait comes before the record: an event not yet recorded is no wait at all
        (
            _TO_HOST
            + "    copied = torch.cuda.Event()\n    copied.synchronize()\n    copied.record()\n    return host",
            "you recorded an event but the host never waited for it",
        ),
    ),
    3: (
        (
            _upload(_REFILL, _COPY),
            "upload_all(3 torch.float32 batches of shape (2, 3), cuda): the tensor for batch 0 holds batch 2's values: "
            "its copy read the buffer after a refill: make the host wait for an event recorded after it",
        ),
        (_upload(_REFILL, *_RECORD, "read.synchronize()", _COPY), "its copy read the buffer after a refill"),
        # the waits on the device, not on the host: the refills do not wait for them
        (
            _upload(_REFILL, _COPY, *_RECORD, "read.wait()"),
            "its copy read the buffer after a refill: make the host wait for an event recorded after it, on its "
            "stream, before the next refill",
        ),
        (
            _upload(_REFILL, _COPY, *_RECORD, "torch.cuda.current_stream().wait_event(read)"),
            "the tensor for batch 0 holds batch 2's values: its copy read the buffer after a refill: make the host",
        ),
        # the event recorded on a stream of its own, which the copies are not on
        (
            _upload(
                _REFILL, _COPY, "read = torch.cuda.Event()", "read.record(torch.cuda.Stream())", "read.synchronize()"
            ),
            "its copy read the buffer after a refill: the copy ran on the caller's stream until 1 ms; the host waited "
            "but not for it (event.synchronize()): make the host wait for an event recorded after it, on its stream",
        ),
        # waits on the wrong thing: the default stream's event or queue, or the device after the refill
        (
            _upload(_REFILL, _COPY, _RECORD[0], "read.record(torch.cuda.default_stream())", "read.synchronize()"),
            "the host waited but not for it (event.synchronize())",
        ),
        (
            _upload(_REFILL, _COPY, "torch.cuda.default_stream().synchronize()"),
            "the tensor for batch 0 holds batch 2's values: its copy read the buffer after a refill: the copy ran on "
            "the caller's stream until 1 ms; the host waited but not for it (default stream.synchronize())",
        ),
        (
            _upload(_REFILL, "torch.cuda.synchronize()", _COPY),
            "the tensor for batch 0 holds batch 1's values: its copy read the buffer after a refill: the copy ran on "
            "the caller's stream until 1 ms; the host waited for it after that refill (torch.cuda.synchronize()): make "
            "the host wait for an event recorded after it, on its stream, before the next refill",
        ),
        (
            _upload(_REFILL, "on_device.append(staging.to(device))"),
            "right values, but copies from pageable memory: 0, blocking copies: 3, pinned buffers: 1; copy from the "
            "one pinned staging buffer, non_blocking",
        ),
        (
            _upload(_REFILL, "on_device.append(batch.pin_memory().to(device, non_blocking=True))"),
            "right values, but copies from pageable memory: 0, blocking copies: 0, pinned buffers: 4; copy from the "
            "one pinned staging buffer",
        ),
        (
            _upload(_REFILL, "on_device.append(batch.to(device, non_blocking=True))"),
            "right values, but copies from pageable memory: 3, blocking copies: 0, pinned buffers: 1",
        ),
        (
            _upload(
                "torch.cuda.synchronize()", _REFILL, "on_device.append(staging.clone().to(device, non_blocking=True))"
            ),
            "copies from pageable memory: 3",
        ),
        # one wait at the end: every copy is still queued when the buffer is refilled
        (
            _upload(_REFILL, _COPY).replace(
                "    return on_device", "    torch.cuda.synchronize()\n    return on_device"
            ),
            "the tensor for batch 0 holds batch 2's values: its copy read the buffer after a refill",
        ),
        # a wait before the second refill only: right for two batches, not for three
        (
            _upload("if len(on_device) == 1:", "    torch.cuda.synchronize()", _REFILL, _COPY),
            "upload_all(3 torch.float32 batches of shape (2, 3), cuda): the tensor for batch 1 holds batch 2's values",
        ),
        # a clone on the device, queued after the copy: it does not stop the refill
        (
            _upload(_REFILL, "on_device.append(staging.to(device, non_blocking=True).clone())"),
            "the tensor for batch 0 holds batch 2's values: its copy read the buffer after a refill",
        ),
        # two buffers and no wait: right for two batches, not for three
        (
            "def upload_all(batches, device):\n"
            "    buffers = [torch.empty_like(batches[0], pin_memory=True) for _ in range(2)]\n"
            "    out = []\n"
            "    for i, batch in enumerate(batches):\n"
            "        buffers[i % 2].copy_(batch)\n"
            "        out.append(buffers[i % 2].to(device, non_blocking=True))\n"
            "    return out",
            "the tensor for batch 0 holds batch 2's values: its copy read the buffer after a refill",
        ),
        # two buffers, each with its own event: right values, but the task keeps the one buffer
        (
            "def upload_all(batches, device):\n"
            "    buffers = [torch.empty_like(batches[0], pin_memory=True) for _ in range(2)]\n"
            "    done = [None, None]\n"
            "    out = []\n"
            "    for i, batch in enumerate(batches):\n"
            "        if done[i % 2] is not None:\n"
            "            done[i % 2].synchronize()\n"
            "        buffers[i % 2].copy_(batch)\n"
            "        out.append(buffers[i % 2].to(device, non_blocking=True))\n"
            "        done[i % 2] = torch.cuda.Event()\n"
            "        done[i % 2].record()\n"
            "    return out",
            "pinned buffers: 2; copy from the one pinned staging buffer",
        ),
        # a new pinned buffer for every batch: safe, but not the one staging buffer the task keeps
        (
            _upload(
                "fresh = torch.empty_like(batch, pin_memory=True)",
                "fresh.copy_(batch)",
                "on_device.append(fresh.to(device, non_blocking=True))",
            ),
            "pinned buffers: 4",
        ),
        # the starting code's float32 buffer: integers that float32 cannot hold come back changed
        (
            _upload("torch.cuda.synchronize()", _REFILL, _COPY).replace(
                "torch.empty_like(batches[0], pin_memory=True)", "torch.empty(batches[0].shape, pin_memory=True)"
            ),
            "upload_all(5 torch.int64 batches of shape (4,), meta): the tensor for batch 0 is a torch.float32 tensor "
            "of shape (4,) on meta; expected torch.int64",
        ),
        # the copies on a stream of their own, waited for by the host but not by the current stream
        (
            _upload(
                "copied.synchronize()", _REFILL, "with torch.cuda.stream(side):", f"    {_COPY}", "    copied.record()"
            ).replace(
                "    on_device = []\n", "    on_device, side, copied = [], torch.cuda.Stream(), torch.cuda.Event()\n"
            ),
            "upload_all(3 torch.float32 batches of shape (2, 3), cuda): a copy ran on the stream 2 and the current "
            "stream did not wait for it: make it wait for the stream 2 before you return",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # a copy stream made once and kept across calls, waiting for the current stream and waited for
        _CACHED,
        _on_stream(
            "side",
            "current, side = torch.cuda.current_stream(), torch.cuda.Stream()\n    side.wait_stream(current)",
            "current.wait_stream(side)",
        ),
        "def to_device(batch, device):\n"
        "    out = {}\n"
        "    for key in batch:\n"
        "        out[key] = batch[key].to(device=device, non_blocking=True)\n"
        "    return out",
        "def to_device(batch, device):\n"
        "    return {k: torch.empty_like(v, device=device).copy_(v, non_blocking=True) for k, v in batch.items()}",
        "def to_device(batch, device):\n"
        "    return dict(zip(batch, (torch.Tensor.to(t, device, None, True) for t in batch.values())))",
    ),
    2: (
        "def to_host(t):\n    host = t.to('cpu', non_blocking=True)\n    torch.cuda.synchronize()\n    return host",
        "def to_host(t):\n"
        "    host = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)\n"
        "    host.copy_(t, non_blocking=True)\n"
        "    torch.cuda.current_stream().synchronize()\n"
        "    return host",
        "def to_host(t):\n"
        "    host = t.to(device='cpu', non_blocking=True)\n"
        "    copied = torch.cuda.Event()\n"
        "    copied.record(torch.cuda.current_stream())\n"
        "    copied.synchronize()\n"
        "    return host",
        _TO_HOST + "    torch.accelerator.synchronize()\n    return host",
        "def to_host(t):\n"
        "    host = t.to('cpu', non_blocking=True)\n"
        "    while not torch.cuda.current_stream().query():  # ask until the copy has landed\n"
        "        pass\n"
        "    return host",
        # asking the event recorded after the copy, and the device-generic event
        _TO_HOST + "    copied = torch.Event()\n    copied.record()\n    while not copied.query():\n        pass\n"
        "    return host",
        # a non_blocking copy to the host lands in pinned memory, as on a GPU
        _TO_HOST + "    torch.cuda.current_stream().synchronize()\n    assert host.is_pinned()\n    return host",
        # the copy on a stream of its own that waits for the current one
        "def to_host(t):\n"
        "    s = torch.cuda.Stream()\n"
        "    s.wait_stream(torch.cuda.current_stream())\n"
        "    with torch.cuda.stream(s):\n"
        "        host = t.to('cpu', non_blocking=True)\n"
        "        done = torch.cuda.Event()\n"
        "        done.record()\n"
        "    done.synchronize()\n"
        "    return host",
    ),
    3: (
        # a clone on the device after each copy, both before the event the next refill waits for
        SOLUTIONS[3].replace("non_blocking=True))", "non_blocking=True).clone())"),
        # the copies on a stream of their own, ordered after the current stream's work and waited for by it
        "def upload_all(batches, device):\n"
        "    staging = torch.empty_like(batches[0], pin_memory=True)\n"
        "    side, copied, out = torch.cuda.Stream(), torch.cuda.Event(), []\n"
        "    side.wait_stream(torch.cuda.current_stream())\n"
        "    for batch in batches:\n"
        "        copied.synchronize()\n"
        "        staging.copy_(batch)\n"
        "        with torch.cuda.stream(side):\n"
        "            out.append(staging.to(device, non_blocking=True))\n"
        "            copied.record()\n"
        "    torch.cuda.current_stream().wait_stream(side)\n"
        "    return out",
        # a wait of the whole device before each refill
        _upload("torch.cuda.synchronize()", _REFILL, _COPY),
        # copies into tensors made on the device, a new event each time
        "def upload_all(batches, device):\n"
        "    staging = torch.empty_like(batches[0], pin_memory=True)\n"
        "    out = [torch.empty_like(b, device=device) for b in batches]\n"
        "    for batch, target in zip(batches, out):\n"
        "        staging.copy_(batch)\n"
        "        target.copy_(staging, non_blocking=True)\n"
        "        copied = torch.cuda.Event()\n"
        "        copied.record()\n"
        "        copied.synchronize()\n"
        "    return out",
        # the event made once and recorded again, asked until it is reached; a tuple returned
        "def upload_all(batches, device):\n"
        "    staging = torch.empty_like(batches[0], pin_memory=True)\n"
        "    copied, out = torch.cuda.Event(), []\n"
        "    for batch in batches:\n"
        "        while not copied.query():\n"
        "            pass\n"
        "        staging.copy_(batch)\n"
        "        out.append(staging.to(device, non_blocking=True))\n"
        "        copied.record()\n"
        "    return tuple(out)",
        # the stream's wait, and .to(device) spelled with a keyword
        _upload("torch.cuda.current_stream().synchronize()", _REFILL, _COPY.replace("to(device", "to(device=device")),
    ),
}

#: Round 3's findings: constructors and `.to(other)` copy blocking; lists said to be on the GPU; the list emptied.
_BLOCKING = "the host waited for a blocking copy to the device"
WRONG_ANSWERS[1] += (
    *(
        (_TO_DEVICE.replace("v.to(device, non_blocking=True)", copy), _BLOCKING)
        for copy in (
            "torch.as_tensor(v, device=device)",
            "torch.as_tensor(v, dtype=v.dtype, device=device)",
            "torch.tensor(v, device=device)",
            "v.new_tensor(v, device=device)",
            "v.to(torch.empty(0, dtype=v.dtype, device=device))",
        )
    ),
    (
        _TO_DEVICE.replace(_MOVE, "[v.to(device, non_blocking=True) for v in batch.values()]"),
        "returned [a torch.float32 tensor of shape (4, 3, 8, 8) on meta, a torch.int64 tensor of shape (4,) on meta]",
    ),
)
WRONG_ANSWERS[2] += tuple(
    (
        f"def to_host(t):\n    return {copy}",
        "it read t with a blocking copy to the host: return what a non_blocking copy fills",
    )
    for copy in ('torch.as_tensor(t, device="cpu")', "t.to(torch.empty(0, dtype=t.dtype, pin_memory=True))")
)
#: Round 6's finding: a non_blocking copy started, then thrown away, and t read another way
WRONG_ANSWERS[2] += tuple(
    (
        f"def to_host(t):\n    t.to('cpu', non_blocking=True)\n    return {read}",
        "but it returned a tensor no such copy filled",
    )
    for read in ("t.to('cpu')", "torch.tensor(t.tolist(), dtype=t.dtype)", "t.cpu().clone()")
)
WRONG_ANSWERS[3] += (
    (
        SOLUTIONS[3].replace("    for batch in batches:", "    for batch in batches[:-1]:"),
        "returned [a torch.float32 tensor of shape (2, 3) on the GPU, a torch.float32 tensor of shape (2, 3) on the "
        "GPU]",
    ),
    (
        SOLUTIONS[3].replace("    for batch in batches:", "    while batches:\n        batch = batches.pop(0)"),
        "changed its arguments (the list of batches or their values): leave them be",
    ),
)

#: Round 4: a staging buffer of another dtype than the batches' is said to be so (the values may even be right).
WRONG_ANSWERS[3] += tuple(
    (
        SOLUTIONS[3].replace("torch.empty_like(batches[0], pin_memory=True)", staging),
        f"upload_all({count} batches of shape {shape}, {device}): the tensor for batch 0 is a {dtype} tensor of shape "
        f"{shape} on {'the GPU' if device == 'cuda' else device}; expected {expected}",
    )
    for staging, count, shape, dtype, expected, device in (
        (
            "torch.empty(batches[0].shape, pin_memory=True)",
            "5 torch.int64",
            "(4,)",
            "torch.float32",
            "torch.int64",
            "meta",
        ),
        (
            "torch.empty_like(batches[0], dtype=torch.half, pin_memory=True)",
            "3 torch.float32",
            "(2, 3)",
            "torch.float16",
            "torch.float32",
            "cuda",
        ),
        (
            "torch.empty(batches[0].shape, dtype=torch.float64, pin_memory=True)",
            "3 torch.float32",
            "(2, 3)",
            "torch.float64",
            "torch.float32",
            "cuda",
        ),
    )
)

#: Round 5's findings: record_stream with a simulated stream; upload_all run for meta too (.cuda() ignores `device`);
#: to_host called twice on one shape (a host buffer kept across calls is overwritten by the next).
RIGHT_ANSWERS[1] += (
    _TO_DEVICE.replace("    return ", "    out = ")
    + "\n    for v in out.values():\n        v.record_stream(torch.cuda.current_stream())\n    return out",
    _on_stream(
        "s",
        "cur, s = torch.cuda.current_stream(), torch.cuda.Stream()\n    s.wait_stream(cur)",
        "cur.wait_stream(s)\n    for v in out.values():\n        v.record_stream(cur)",
    ),
)
WRONG_ANSWERS[3] += (
    (
        _upload(
            "torch.cuda.current_stream().synchronize()", _REFILL, "on_device.append(staging.cuda(non_blocking=True))"
        ),
        "upload_all(5 torch.int64 batches of shape (4,), meta) returned [a torch.int64 tensor of shape (4,) on the "
        "GPU, a torch.int64 tensor of shape (4,) on the GPU, a torch.int64 tensor of shape (4,) on the GPU, a "
        "torch.int64 tensor of shape (4,) on the GPU, a torch.int64 tensor of shape (4,) on the GPU]; expected 5 "
        "tensors on meta",
    ),
)
WRONG_ANSWERS[2] += (
    (
        "_buf = None\n\n\n"
        "def to_host(t):\n"
        "    global _buf\n"
        "    if _buf is None or _buf.shape != t.shape or _buf.dtype != t.dtype:\n"
        "        _buf = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)\n"
        "    _buf.copy_(t, non_blocking=True)\n"
        "    torch.cuda.synchronize()\n"
        "    return _buf",
        "to_host(a torch.float32 tensor of shape (8,) on the GPU) changed a tensor an earlier call returned (to "
        "[2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0]): return new ones",
    ),
    # a pool of 8 buffers a shape, and a ring cut from one pinned slab (round 9: both accepted before)
    (
        "_pool, _turn = {}, {}\n\n\n"
        "def to_host(t):\n"
        "    key = (tuple(t.shape), t.dtype)\n"
        "    if key not in _pool:\n"
        "        _pool[key] = [torch.empty(t.shape, dtype=t.dtype, pin_memory=True) for _ in range(8)]\n"
        "        _turn[key] = 0\n"
        "    host = _pool[key][_turn[key] % 8]\n"
        "    _turn[key] += 1\n"
        "    host.copy_(t, non_blocking=True)\n"
        "    torch.cuda.synchronize()\n"
        "    return host",
        "to_host(a torch.float32 tensor of shape (8,) on the GPU) changed a tensor an earlier call returned (to "
        "[9.0, 18.0, 27.0, 36.0, 45.0, 54.0, 63.0, 72.0]): return new ones",
    ),
    (
        "_slab, _off = None, 0\n\n\n"
        "def to_host(t):\n"
        "    global _slab, _off\n"
        "    if _slab is None or _slab.dtype != t.dtype:\n"
        "        _slab, _off = torch.empty(1 << 12, dtype=t.dtype, pin_memory=True), 0\n"
        "    host = _slab[_off : _off + t.numel()].view(t.shape)\n"
        "    _off += t.numel()\n"
        "    host.copy_(t, non_blocking=True)\n"
        "    torch.cuda.synchronize()\n"
        "    return host",
        "to_host(a torch.float32 tensor of shape (8,) on the GPU) returned memory that call 1's result lies in: "
        "return a new tensor each call",
    ),
)

#: Round 7's findings: the current stream left switched; a pool of two host buffers; the caller's list rewritten
WRONG_ANSWERS[1] += (
    (
        "def to_device(batch, device):\n"
        "    cur, s = torch.cuda.current_stream(), torch.cuda.Stream()\n"
        "    torch.cuda.set_stream(s)\n"
        "    out = {k: v.to(device, non_blocking=True) for k, v in batch.items()}\n"
        "    cur.wait_stream(s)\n"
        "    return out",
        "current: set the caller's stream back, or use `with`",
    ),
)
WRONG_ANSWERS[2] += (
    (
        "import itertools\n\n_ring, _turn = {}, itertools.count()\n\n\ndef to_host(t):\n"
        "    key = (tuple(t.shape), t.dtype)\n"
        "    bufs = _ring.setdefault(key, [torch.empty(t.shape, dtype=t.dtype, pin_memory=True) for _ in range(2)])\n"
        "    h = bufs[next(_turn) % 2]\n"
        "    h.copy_(t, non_blocking=True)\n"
        "    torch.cuda.synchronize()\n"
        "    return h",
        "changed a tensor an earlier call returned (to [",
    ),
)
WRONG_ANSWERS[3] += (
    (
        "def upload_all(batches, device):\n"
        "    staging = torch.empty_like(batches[0], pin_memory=True)\n"
        "    for i, batch in enumerate(batches):\n"
        "        staging.copy_(batch)\n"
        "        batches[i] = staging.to(device, non_blocking=True)\n"
        "        torch.cuda.synchronize()\n"
        "    return batches",
        "changed its arguments (the list of batches or their values): leave them be",
    ),
)

#: Round 8's finding: a pool of three or four buffers (five calls of one shape now)
WRONG_ANSWERS[2] += tuple(
    (
        f"import itertools\n\n_pool = {{}}\n_turn = itertools.count()\n\n\ndef to_host(t):\n"
        f"    bufs = _pool.setdefault((tuple(t.shape), t.dtype), [torch.empty(t.shape, dtype=t.dtype, pin_memory=True) "
        f"for _ in range({n})])\n"
        f"    h = bufs[next(_turn) % {n}]\n"
        "    h.copy_(t, non_blocking=True)\n"
        "    torch.cuda.synchronize()\n"
        "    return h",
        "changed a tensor an earlier call returned (to [",
    )
    for n in (3, 4)
)
