SOLUTIONS: dict[int, str] = {
    1: "def capture_step(graph, model, optimizer, static_x, static_y):\n    def step(x, y):\n"
    "        loss = torch.nn.functional.mse_loss(model(x), y)\n        loss.backward()\n        optimizer.step()\n"
    "        return loss  # check torch.isfinite on it after each replay instead\n\n"
    "    for _ in range(3):  # real steps first: they make the momentum buffers\n        optimizer.zero_grad()\n"
    "        step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)  # the capture's backward makes them\n"
    "    return graph.capture(step, static_x, static_y)",
    2: "def capture_accumulation(graph, model, optimizer, static_xs, static_ys):\n    k = len(static_xs)\n\n"
    "    def step(xs, ys):\n        total = 0\n        for x, y in zip(xs, ys):\n"
    "            loss = torch.nn.functional.mse_loss(model(x), y) / k\n            loss.backward()\n"
    "            total = total + loss.detach()\n        optimizer.step()\n        return total\n\n"
    "    optimizer.zero_grad(set_to_none=True)\n    step(static_xs, static_ys)  # a real step: it makes the momentum\n"
    "    optimizer.zero_grad(set_to_none=True)\n    return graph.capture(step, static_xs, static_ys)",
    3: "def normalise(x):\n    peak = x.abs().max()\n    return torch.where(peak == 0, x, x / peak)",
}
