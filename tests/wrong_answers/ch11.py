"""Chapter 11's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises.solutions.ch11 import SOLUTIONS

from . import lines_of

_STEP = lines_of(SOLUTIONS[1], 1, 6)  # the def and a right step
_ACC = lines_of(SOLUTIONS[2], 1, 1)
_NORMALISE = lines_of(SOLUTIONS[3], 1, 1)
_CAPTURE = "    return graph.capture(step, static_x, static_y)"
_GUARD = (
    "        if not torch.isfinite(loss):  # stop at once if training diverges\n"
    '            raise FloatingPointError(f"the loss is {loss}")\n'
)
_REAL = "    for _ in range(3):  # real steps first: they make the momentum buffers\n        optimizer.zero_grad()\n"
_REAL += "        step(static_x, static_y)\n"
#: The notebook's starter of question 1, as given.
_GIVEN = (
    "def capture_step(graph, model, optimizer, static_x, static_y):\n    def step(x, y):\n"
    "        loss = torch.nn.functional.mse_loss(model(x), y)\n" + _GUARD + "        loss.backward()\n"
    "        optimizer.step()\n        return loss\n\n" + _REAL + _CAPTURE
)


_BEFORE = "    optimizer.zero_grad()\n    step(static_xs, static_ys)\n    optimizer.zero_grad(set_to_none=True)\n"


def _accumulation(step: str, before: str = _BEFORE) -> str:
    """Question 2's answer with the captured `step` (its body) and what runs `before` the capture."""
    return (
        _ACC
        + "    k = len(static_xs)\n\n    def step(xs, ys):\n"
        + step
        + "\n"
        + before
        + ("    return graph.capture(step, static_xs, static_ys)")
    )


_ACC_RIGHT = (
    "        total = 0\n        for x, y in zip(xs, ys):\n"
    "            loss = torch.nn.functional.mse_loss(model(x), y) / k\n            loss.backward()\n"
    "            total = total + loss.detach()\n        optimizer.step()\n        return total\n"
)

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (_GIVEN, "raised RuntimeError (line 4 of your code): CPU MODEL of a CUDA graph: .item() (or float(t), int(t)"),
        (  # the guard gone: the last real step's gradients are still there at capture
            _GIVEN.replace(_GUARD, ""),
            "backward added to gradients that existed at capture",
        ),
        (  # the guard and the real steps gone
            _GIVEN.replace(_GUARD, "").replace(_REAL, "    optimizer.zero_grad(set_to_none=True)\n"),
            "of the 4 parameters had no momentum buffer at capture, so each replay makes it anew",
        ),
        (  # gradients clipped: a step the question did not ask for, seen where the loss is large
            _STEP.replace(
                "        optimizer.step()\n",
                "        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)\n        optimizer.step()\n",
            )
            + "\n    for _ in range(3):\n        optimizer.zero_grad()\n"
            "        step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)\n" + _CAPTURE,
            "after replay 3 of what capture_step(graph, model, optimizer, static_x, static_y) captured, the weights",
        ),
        (  # a parameter frozen before the capture: replays never train it
            _STEP
            + "\n    optimizer.zero_grad()\n    step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)\n"
            "    model[0].weight.requires_grad_(False)\n" + _CAPTURE,
            "changed the parameters' dtype or requires_grad: leave them as they are",
        ),
        (  # the model made float64
            _STEP.replace("model(x), y", "model(x.double()), y.double()")
            + "\n    model.double()"
            + "\n    optimizer.zero_grad()\n    step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)\n"
            + _CAPTURE,
            "changed the parameters' dtype or requires_grad",
        ),
        (  # the momentum buffers replaced after the capture: replays update the old ones
            _STEP
            + "\n    optimizer.zero_grad()\n    step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)\n"
            "    loss = graph.capture(step, static_x, static_y)\n    for st in optimizer.state.values():\n"
            "        st['momentum_buffer'] = st['momentum_buffer'].clone()\n    return loss",
            "parameters, momentum or static tensors are not the memory captured",
        ),
        (  # the last real step's gradients left, and zeroed only at the end of the captured step
            _GIVEN.replace(_GUARD, "").replace(
                _CAPTURE,
                "\n    def zeroed(x, y):\n        loss = step(x, y)\n        optimizer.zero_grad(set_to_none=False)\n"
                "        return loss\n\n    return graph.capture(zeroed, static_x, static_y)",
            ),
            "backward added to gradients that existed at capture",
        ),
        (  # real steps that clear the first parameter's gradient alone: the others add up
            _STEP + "\n    for _ in range(3):\n        next(model.parameters()).grad = None\n"
            "        step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)\n" + _CAPTURE,
            "a backward before the capture added to gradients an earlier step left",
        ),
        (  # the parameters moved to new memory after the capture: replays write the old
            _STEP
            + "\n    optimizer.zero_grad()\n    step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)\n"
            "    loss = graph.capture(step, static_x, static_y)\n    for p in model.parameters():\n"
            "        p.data = p.data.clone()\n    return loss",
            "parameters, momentum or static tensors are not the memory captured",
        ),
        (  # a real step first, but its gradients left in place
            _STEP + "\n    step(static_x, static_y)\n" + _CAPTURE,
            "a backward before the capture added to gradients an earlier step left: set them to None before each step",
        ),
        (  # the gradients zeroed in place, not set to None: backward adds to them
            _STEP
            + "\n    optimizer.zero_grad()\n    step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=False)\n"
            + _CAPTURE,
            "backward added to gradients that existed at capture",
        ),
        (  # the loss as a Python number
            _STEP
            + "\n    optimizer.zero_grad()\n    step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)\n"
            "    return graph.capture(step, static_x, static_y).item()",
            "returned nan; expected the static loss",
        ),
        (  # no capture: an eager step, the replay never set up
            _STEP + "\n    optimizer.zero_grad(set_to_none=True)\n    return step(static_x, static_y)",
            "captured nothing",
        ),
        (  # the step without the optimizer
            "def capture_step(graph, model, optimizer, static_x, static_y):\n"
            "    def step(x, y):\n        loss = torch.nn.functional.mse_loss(model(x), y)\n        loss.backward()\n"
            "        return loss\n\n    optimizer.zero_grad()\n    step(static_x, static_y)\n"
            "    optimizer.zero_grad(set_to_none=True)\n" + _CAPTURE,
            "called the given optimizer's step() 0 times",
        ),
        (  # the log kept with .cpu(): a copy to the host, which a capture refuses too
            _GIVEN.replace(_GUARD, "        print(loss.cpu())\n"),
            "CPU MODEL of a CUDA graph: .cpu() during capture makes the CPU wait for the GPU",
        ),
        (  # a check on the values inside the step
            _GIVEN.replace(_GUARD, "        assert not torch.allclose(loss, torch.zeros_like(loss))\n"),
            "torch.allclose during capture makes the CPU wait for the GPU",
        ),
        (  # a boolean mask: its size depends on the values
            _GIVEN.replace(_GUARD, "        err = model(x) - y\n        big = err[err.abs() > 100]\n"),
            "a boolean index during capture makes the CPU wait for the GPU",
        ),
        (  # a first capture as the real step
            _STEP + "\n    optimizer.zero_grad(set_to_none=True)\n    graph.capture(step, static_x, static_y)\n"
            "    optimizer.zero_grad(set_to_none=True)\n" + _CAPTURE,
            "this graph already holds a capture: create a new one",
        ),
        (  # a throwaway graph's capture as the real step
            "from helpers.standins import GraphReplayModel\n\n"
            + _STEP
            + "\n    optimizer.zero_grad(set_to_none=True)\n"
            "    GraphReplayModel().capture(step, static_x, static_y)\n"
            "    optimizer.zero_grad(set_to_none=True)\n" + _CAPTURE,
            "of the 4 parameters had no momentum buffer at capture, so each replay makes it anew",
        ),
        (  # one more real step after the capture, on the gradients the capture made
            _STEP
            + "\n    optimizer.zero_grad()\n    step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)\n"
            "    static_loss = graph.capture(step, static_x, static_y)\n    step(static_x, static_y)\n"
            "    return static_loss",
            "a step after the capture added to the gradients it made",
        ),
        (  # the capture reads a copy of the static input
            _STEP
            + "\n    optimizer.zero_grad()\n    step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)\n"
            "    return graph.capture(step, static_x.clone(), static_y)",
            "the captured step never read static_x: capture a step on the static tensors",
        ),
        (  # a copy of the static loss, which no replay refreshes
            _STEP
            + "\n    optimizer.zero_grad()\n    step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)\n"
            "    return graph.capture(step, static_x, static_y).detach().clone()",
            "returned a tensor no replay writes",
        ),
        (  # a new optimizer inside: the given one never steps
            _STEP.replace("optimizer.step()", "own.step()") + "\n    own = torch.optim.SGD(model.parameters(), lr=0.1, "
            "momentum=0.9)\n    optimizer.zero_grad()\n    step(static_x, static_y)\n"
            "    optimizer.zero_grad(set_to_none=True)\n" + _CAPTURE,
            "called the given optimizer's step() 0 times",
        ),
        (  # the loss copied to the host with .to("cpu")
            _GIVEN.replace(_GUARD, '        kept = loss.detach().to("cpu")\n'),
            "CPU MODEL of a CUDA graph: .to('cpu') during capture makes the CPU wait for the GPU",
        ),
        (  # a synchronisation inside the step
            _GIVEN.replace(_GUARD, "        torch.cpu.synchronize()\n"),
            "CPU MODEL of a CUDA graph: a synchronize() during capture makes the CPU wait for the GPU",
        ),
        (  # a count whose size depends on the values
            _GIVEN.replace(_GUARD, "        counts = torch.bincount((y.flatten() > 0).long(), minlength=2)\n"),
            "torch.bincount during capture makes the CPU wait for the GPU",
        ),
        (  # captured at a learning rate of 0, then restored
            _STEP
            + "\n"
            + _REAL
            + "    lr = optimizer.param_groups[0]['lr']\n    optimizer.param_groups[0]['lr'] = 0.0\n"
            "    optimizer.zero_grad(set_to_none=True)\n    loss = graph.capture(step, static_x, static_y)\n"
            "    optimizer.param_groups[0]['lr'] = lr\n    return loss",
            "captured the step with {'lr': 0.0}: a graph keeps the settings it captured",
        ),
        (  # the loss read through DLPack by numpy
            _GIVEN.replace(_GUARD, "        import numpy as np\n        v = np.from_dlpack(loss.detach())\n"),
            "CPU MODEL of a CUDA graph: DLPack during capture makes the CPU wait for the GPU",
        ),
        (  # momentum switched off to dodge the buffers
            _STEP
            + "\n    optimizer.param_groups[0]['momentum'] = 0\n    optimizer.zero_grad(set_to_none=True)\n"
            + _CAPTURE,
            "changed the optimizer's settings",
        ),
    ),
    2: (
        (  # a full-batch forward under no_grad for the returned loss: more forwards than micro-batches
            _accumulation(
                "        with torch.no_grad():\n"
                "            report = torch.nn.functional.mse_loss(model(xs.flatten(0, 1)), ys.flatten(0, 1))\n"
                "        for x, y in zip(xs, ys):\n"
                "            (torch.nn.functional.mse_loss(model(x), y) / k).backward()\n"
                "        optimizer.step()\n        return report\n"
            ),
            "the captured step ran 3 forwards (of [8, 4, 4] rows)",
        ),
        (  # a second forward per micro-batch, without autograd, to log the loss
            _accumulation(
                "        total = 0\n        for x, y in zip(xs, ys):\n"
                "            (torch.nn.functional.mse_loss(model(x), y) / k).backward()\n"
                "            with torch.no_grad():\n"
                "                total = total + torch.nn.functional.mse_loss(model(x), y) / k\n"
                "        optimizer.step()\n        return total\n"
            ),
            "the captured step ran 4 forwards (of [4, 4, 4, 4] rows)",
        ),
        (  # the micro-batches regrouped by a reshape: k forwards of 4 rows, but not static_xs[i]'s rows
            _accumulation(
                "        xr, yr = xs.reshape(4, k, -1), ys.reshape(4, k, -1)\n        total = 0\n"
                "        for i in range(k):\n"
                "            loss = torch.nn.functional.mse_loss(model(xr[:, i]), yr[:, i])\n"
                "            (loss / k).backward()\n            total = total + loss.detach() / k\n"
                "        optimizer.step()\n        return total\n"
            ),
            "its forwards did not read the 2 micro-batches static_xs[i] once each",
        ),
        (  # the sum of the losses
            _accumulation(_ACC_RIGHT.replace(" / k\n", "\n")),
            "it followed the sum of the 2 losses: divide each by 2",
        ),
        (  # no real step first
            _accumulation(_ACC_RIGHT, "    optimizer.zero_grad(set_to_none=True)\n"),
            "of the 4 parameters had no momentum buffer at capture, so each replay makes it anew",
        ),
        (  # the last micro-batch's loss returned
            _accumulation(_ACC_RIGHT.replace("        return total\n", "        return loss.detach() * k\n")),
            "captured, the returned loss holds 0.602658; expected 0.526814 (the mean of the 2 micro-batches",
        ),
        (  # a step per micro-batch
            _accumulation(
                "        total = 0\n        for x, y in zip(xs, ys):\n"
                "            loss = torch.nn.functional.mse_loss(model(x), y)\n            loss.backward()\n"
                "            optimizer.step()\n            optimizer.zero_grad(set_to_none=False)\n"
                "            total = total + loss.detach() / k\n        return total\n"
            ),
            "the captured step called the given optimizer's step() 2 times; one replay is one optimizer step",
        ),
        (  # three real steps with no zero_grad between them: they train on piled-up gradients
            _accumulation(
                _ACC_RIGHT,
                "    for _ in range(3):\n        step(static_xs, static_ys)\n"
                "    optimizer.zero_grad(set_to_none=True)\n",
            ),
            "a backward before the capture added to gradients an earlier step left",
        ),
        (  # one backward() of the mean: right numbers, no accumulation
            _accumulation(
                "        loss = sum(torch.nn.functional.mse_loss(model(x), y) for x, y in zip(xs, ys)) / k\n"
                "        loss.backward()\n        optimizer.step()\n        return loss.detach()\n"
            ),
            "ran 2 forwards (of [4, 4] rows) and 1 backward pass; accumulation takes one forward and one backward()",
        ),
        (  # the micro-batches joined into one batch
            _accumulation(
                "        loss = torch.nn.functional.mse_loss(model(xs.reshape(-1, 6)), ys.reshape(-1, 1))\n"
                "        loss.backward()\n        optimizer.step()\n        return loss.detach()\n"
            ),
            "ran 1 forward (of [8] rows) and 1 backward pass",
        ),
        (  # one micro-batch only
            _accumulation(
                "        loss = torch.nn.functional.mse_loss(model(xs[0]), ys[0])\n        loss.backward()\n"
                "        optimizer.step()\n        return loss.detach()\n"
            ),
            "the captured step ran 1 forward (of [4] rows) and 1 backward pass; accumulation takes one forward",
        ),
    ),
    3: (
        (
            _NORMALISE + "    peak = x.abs().max()\n    if peak.item() == 0:  # an all-zero x stays as it is\n"
            "        return x\n    return x / peak",
            "torch.compile made 2 graphs of normalise, not one: it reads a tensor's value on the CPU (.item())",
        ),
        (
            _NORMALISE + "    peak = x.abs().max()\n    if peak == 0:\n        return x\n    return x / peak",
            "it reads a tensor's value on the CPU (bool())",
        ),
        (
            _NORMALISE + "    return x / x.abs().max()",
            "normalise([0, 0], torch.int64) returned [nan, nan] (torch.float32); expected [0, 0] (torch.int64)",
        ),
        (  # a guard that is 0 in float16 (nan for all zeros) and too large near 1e-13
            _NORMALISE + "    return x / x.abs().max().clamp_min(1e-30)",
            "normalise([0, 0], torch.float16) returned [nan, nan] (torch.float16); expected [0.0, 0.0] (torch.float16)",
        ),
        (
            _NORMALISE + "    return x / (x.abs().max() + 1e-12)",
            "normalise([1e-13, -2e-13], torch.float32) returned [0.0833333, -0.166667] (torch.float32); expected "
            "[0.5, -1] (torch.float32)",
        ),
        (
            _NORMALISE + "    return x / x.abs().max().clamp(min=1e-12)",
            "normalise([1e-13, -2e-13], torch.float32) returned [0.1, -0.2] (torch.float32)",
        ),
        (
            _NORMALISE + "    return torch.where(x.abs().max() == 0, x, x / (x.abs().max() + 1e-12))",
            "normalise([1e-13, -2e-13], torch.float32) returned [0.0833333, -0.166667]",
        ),
        (
            _NORMALISE
            + "    peak = x.abs().max()\n    print('peak', peak)\n    return torch.where(peak == 0, x, x / peak)",
            "it reads a tensor's value on the CPU (print(t))",
        ),
        (
            _NORMALISE + "    return x / x.abs().max().clamp_min(1)",
            "normalise([0.25, -0.5, 0.125], torch.float32) returned [0.25, -0.5, 0.125] (torch.float32); expected "
            "[0.5, -1, 0.25] (torch.float32)",
        ),
        (
            _NORMALISE + "    peak = x.abs().max()\n    return torch.where(peak == 0, x, x.div_(peak))",
            "changed its arguments",
        ),
        (  # cast back to x's dtype: right on float inputs, not on integers (the attack: only float32 was tried)
            _NORMALISE + "    peak = x.abs().max()\n    return torch.where(peak == 0, x, x / peak).to(x.dtype)",
            "normalise([3, -6, 1], torch.int64) returned [0, -1, 0] (torch.int64); expected [0.5, -1, 0.166667]",
        ),
        (  # float32 for a half x
            _NORMALISE
            + "    peak = x.abs().max().float()\n    return torch.where(peak == 0, x.float(), x.float() / peak)",
            "normalise([0.25, -0.5, 0.125], torch.float16) returned [0.5, -1, 0.25] (torch.float32)",
        ),
        (  # each row by its own peak
            _NORMALISE + "    return x / x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-30)",
            "normalise([[1.0, -4.0], [2.0, 0.5]], torch.float32) returned [[0.25, -1], [1, 0.25]]",
        ),
        (
            _NORMALISE + "    peak = x.abs().max()\n    if peak.tolist() == 0:\n        return x\n    return x / peak",
            "it reads a tensor's value on the CPU (.tolist())",
        ),
        (  # a guard of the dtype's smallest normal number added to the peak: too large near it (the attack)
            _NORMALISE
            + "    peak = x.abs().max()\n    tiny = torch.finfo(x.dtype).tiny if x.is_floating_point() else 0\n"
            "    return torch.where(peak == 0, x, x / (peak + tiny))",
            "normalise([0.001, -0.0005], torch.float16) returned [0.942383, -0.471191] (torch.float16); expected "
            "[1, -0.5] (torch.float16)",
        ),
        (  # the peak held at the smallest normal number at least: wrong for a subnormal peak
            _NORMALISE
            + "    peak = x.abs().max()\n    tiny = torch.finfo(x.dtype).tiny if x.is_floating_point() else 1\n"
            "    return torch.where(peak == 0, x, x / peak.clamp(min=tiny))",
            "normalise([1e-05, -2e-05], torch.float16) returned [0.164062, -0.328125] (torch.float16); expected "
            "[0.5, -1] (torch.float16)",
        ),
        (  # a much smaller floor, 1e-44: wrong for a float32 peak of two of its smallest steps
            _NORMALISE + "    return torch.where(x.abs().max() == 0, x, x / x.abs().max().clamp(min=1e-44))",
            "normalise([3e-45, -6e-45], torch.float32) returned",
        ),
        (  # a subnormal peak taken for zero
            _NORMALISE
            + "    peak = x.abs().max()\n    floor = torch.finfo(x.dtype).tiny if x.is_floating_point() else 1\n"
            "    return torch.where(peak < floor, x, x / peak)",
            "normalise([1e-05, -2e-05], torch.float16) returned [1.00136e-05, -2.00272e-05] (torch.float16)",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # gradients by torch.autograd.grad, assigned: nothing is added to an earlier step's
        "def capture_step(graph, model, optimizer, static_x, static_y):\n    params = list(model.parameters())\n\n"
        "    def step(x, y):\n        loss = torch.nn.functional.mse_loss(model(x), y)\n"
        "        for p, g in zip(params, torch.autograd.grad(loss, params)):\n            p.grad = g\n"
        "        optimizer.step()\n        return loss\n\n    for _ in range(3):\n        step(static_x, static_y)\n"
        + _CAPTURE,
        # the loss returned in float64
        _STEP.replace("return loss  #", "return loss.double()  #")
        + "\n    for _ in range(3):\n        optimizer.zero_grad()\n        step(static_x, static_y)\n"
        "    optimizer.zero_grad(set_to_none=True)\n" + _CAPTURE,
        # the docs' recipe: three real steps, gradients to None before each and before capture
        _STEP + "\n    for _ in range(3):\n        optimizer.zero_grad(set_to_none=True)\n"
        "        step(static_x, static_y)\n    optimizer.zero_grad(set_to_none=True)\n" + _CAPTURE,
        # the gradients zeroed inside the captured step
        "def capture_step(graph, model, optimizer, static_x, static_y):\n    def step(x, y):\n"
        "        optimizer.zero_grad(set_to_none=False)\n"
        "        loss = torch.nn.functional.mse_loss(model(x), y)\n        loss.backward()\n        optimizer.step()\n"
        "        return loss.detach()\n\n    step(static_x, static_y)\n" + _CAPTURE,
        # the guard moved out of the step, the gradients set to None before capture
        _GIVEN.replace(_GUARD, "").replace(_CAPTURE, "    optimizer.zero_grad(set_to_none=True)\n" + _CAPTURE),
        # one replay after the capture, to try it
        _STEP + "\n" + _REAL + "    optimizer.zero_grad(set_to_none=True)\n"
        "    loss = graph.capture(step, static_x, static_y)\n    graph.replay()\n    return loss",
    ),
    2: (
        # one stacked loss, one backward per micro-batch through a list
        _accumulation(
            "        losses = []\n        for j in range(k):\n"
            "            loss = torch.nn.functional.mse_loss(model(xs[j]), ys[j])\n            (loss / k).backward()\n"
            "            losses.append(loss.detach())\n        optimizer.step()\n"
            "        return torch.stack(losses).mean()\n"
        ),
        # the micro-batches in reverse order, and cut with chunk (a leading dimension of 1)
        _accumulation(
            "        total = 0\n        for x, y in zip(xs.flip(0), ys.flip(0)):\n"
            "            loss = torch.nn.functional.mse_loss(model(x), y) / k\n            loss.backward()\n"
            "            total = total + loss.detach()\n        optimizer.step()\n        return total\n"
        ),
        _accumulation(
            "        total = 0\n        for x, y in zip(xs.chunk(k), ys.chunk(k)):\n"
            "            loss = torch.nn.functional.mse_loss(model(x), y) / k\n            loss.backward()\n"
            "            total = total + loss.detach()\n        optimizer.step()\n        return total\n"
        ),
        # the layers called one by one
        _accumulation(
            "        total = 0\n        for x, y in zip(xs, ys):\n            h = x\n            for layer in model:\n"
            "                h = layer(h)\n            loss = torch.nn.functional.mse_loss(h, y) / k\n"
            "            loss.backward()\n            total = total + loss.detach()\n"
            "        optimizer.step()\n        return total\n"
        ),
        # torch.autograd.grad per micro-batch, summed into .grad by hand
        _accumulation(
            "        params = list(model.parameters())\n        total = 0\n        for x, y in zip(xs, ys):\n"
            "            loss = torch.nn.functional.mse_loss(model(x), y) / k\n"
            "            for p, g in zip(params, torch.autograd.grad(loss, params)):\n"
            "                p.grad = g if p.grad is None else p.grad + g\n"
            "            total = total + loss.detach()\n        optimizer.step()\n        return total\n"
        ),
        # the gradients set to None inside the step
        _accumulation("        optimizer.zero_grad()\n" + _ACC_RIGHT, "    step(static_xs, static_ys)\n"),
    ),
    3: (
        _NORMALISE + "    return (x / x.abs().max()).nan_to_num(0.0)",
        # a higher-order op: the check runs it as a notebook does
        _NORMALISE + "    peak = x.abs().max()\n"
        "    return torch.cond(peak == 0, lambda x, p: x / 1, lambda x, p: x / p, (x, peak))",
        _NORMALISE + "    peak = x.abs().amax()\n    return x / torch.where(peak == 0, torch.ones_like(peak), peak)",
        _NORMALISE + "    peak = x.abs().max()\n    return torch.where(peak > 0, x / peak, x)",
    ),
}

#: Round 7's finding: torch.compiler.disable on the unfixed function: no graph at all, the read still there
WRONG_ANSWERS[3] += (
    (
        "@torch.compiler.disable\ndef normalise(x):\n    peak = x.abs().max()\n    if peak.item() == 0:\n"
        "        return x\n    return x / peak",
        "graphs of normalise, not one: it reads a tensor's value on the CPU (.item())",  # 2.15: 0 graphs; 2.10: 2
    ),
)
