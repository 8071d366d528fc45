"""Chapter 14's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: (
        "def idle_share(busy, start_ms, end_ms):\n"
        "    covered, reach = 0.0, start_ms  # reach: where the covered stretch so far ends\n"
        "    for s, e in sorted((max(s, start_ms), min(e, end_ms)) for s, e in busy):\n"
        "        covered += max(0.0, e - max(s, reach))  # a pair outside the window is empty once clipped\n"
        "        reach = max(reach, e)\n"
        "    return 1 - covered / (end_ms - start_ms)"
    ),
    2: (
        "def train(model, opt, batches):\n"
        "    losses, correct = [], 0\n"
        "    for x, y in batches:\n"
        "        opt.zero_grad()\n"
        "        out = model(x)\n"
        "        loss = torch.nn.functional.cross_entropy(out, y)\n"
        "        loss.backward()\n"
        "        opt.step()\n"
        "        losses.append(loss.detach())  # stays on the device: no wait\n"
        "        correct += (out.argmax(dim=1) == y).sum()  # one comparison for the batch\n"
        "    return (torch.stack(losses).tolist() if losses else []), int(correct)  # one read at the end"
    ),
}
