SOLUTIONS: dict[int, str] = {
    1: """def idle_share(busy, start_ms, end_ms):
    covered, reach = 0.0, start_ms  # reach: where the covered stretch so far ends
    for s, e in sorted((max(s, start_ms), min(e, end_ms)) for s, e in busy):
        covered += max(0.0, e - max(s, reach))  # a pair outside the window is empty once clipped
        reach = max(reach, e)
    return max(0.0, 1 - covered / (end_ms - start_ms))  # rounding can take an exact cover a hair below 0""",
    2: """def train(model, opt, batches):
    losses, correct = [], 0
    for x, y in batches:
        opt.zero_grad()
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out, y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())  # stays on the device: no wait
        correct += (out.argmax(dim=1) == y).sum()  # one comparison for the batch
    return (torch.stack(losses).tolist() if losses else []), int(correct)  # two reads, at the end""",
}
