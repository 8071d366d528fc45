"""Chapter 04's typical wrong answers, by question number (see the package's docstring)."""

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            "def predict(model, x):\n    return model(x.to(next(model.parameters()).device)).cpu()",
            "predict called .cpu() on a tensor on the model's device",
        ),
        (
            "def predict(model, x):\n    x.mul_(1.5)\n    return model(x.to(next(model.parameters()).device))",
            "predict changed the caller's x",
        ),
        ("def predict(model, x):\n    return model(x)", "Tensor on device meta is not on the expected device cpu"),
        (
            "def predict(model, x):\n    return model.to(x.device)(x)",
            "predict called .to() on a tensor on the model's device",
        ),
        ("def predict(model, x):\n    return model(x.to(model.device))", "'Linear' object has no attribute 'device'"),
    ),
    2: (
        (
            "def train_epoch(model, optimizer, X, y, batch_size):\n"
            "    device = next(model.parameters()).device\n"
            "    X, y = X.to(device), y.to(device)\n"
            "    total = 0.0\n"
            "    for start in range(0, X.shape[0], batch_size):\n"
            "        xb, yb = X[start : start + batch_size], y[start : start + batch_size]\n"
            "        loss = nn.functional.mse_loss(model(xb), yb)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        total += loss.item()\n"
            "    return torch.tensor(total / -(-X.shape[0] // batch_size), device=device)",
            "train_epoch read values back to the host (.item(), 3 time(s))",
        ),
        (
            "def train_epoch(model, optimizer, X, y, batch_size):\n"
            "    device = next(model.parameters()).device\n"
            "    X, y = X.to(device), y.to(device)\n"
            "    losses = []\n"
            "    for start in range(0, X.shape[0], 8):\n"
            "        loss = nn.functional.mse_loss(model(X[start : start + 8]), y[start : start + 8])\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        losses.append(loss.detach())\n"
            "    return torch.stack(losses).mean()",
            "the model should see batches of [12, 12, 12] rows, in order, but it saw [8, 8, 8, 8, 4]",
        ),
        # forgets zero_grad: gradients pile up from batch to batch
        (
            "def train_epoch(model, optimizer, X, y, batch_size):\n"
            "    device = next(model.parameters()).device\n"
            "    X, y = X.to(device), y.to(device)\n"
            "    losses = []\n"
            "    for start in range(0, X.shape[0], batch_size):\n"
            "        xb, yb = X[start : start + batch_size], y[start : start + batch_size]\n"
            "        loss = nn.functional.mse_loss(model(xb), yb)\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        losses.append(loss.detach())\n"
            "    return torch.stack(losses).mean()",
            "clear the gradients (optimizer.zero_grad()) every batch",
        ),
        # leaves the data on the CPU: fine here, the device error on a GPU
        (
            "def train_epoch(model, optimizer, X, y, batch_size):\n"
            "    losses = []\n"
            "    for start in range(0, X.shape[0], batch_size):\n"
            "        xb, yb = X[start : start + batch_size], y[start : start + batch_size]\n"
            "        loss = nn.functional.mse_loss(model(xb), yb)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        losses.append(loss.detach())\n"
            "    return torch.stack(losses).mean()",
            "your function raised the device error: move the data",
        ),
        # reads every loss back to the host
        (
            "def train_epoch(model, optimizer, X, y, batch_size):\n"
            "    device = next(model.parameters()).device\n"
            "    X, y = X.to(device), y.to(device)\n"
            "    total = 0.0\n"
            "    for start in range(0, X.shape[0], batch_size):\n"
            "        xb, yb = X[start : start + batch_size], y[start : start + batch_size]\n"
            "        loss = nn.functional.mse_loss(model(xb), yb)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        total += loss.item()\n"
            "    return total / (X.shape[0] // batch_size)",
            "train_epoch read values back to the host (.item(), 3 time(s))",
        ),
    ),
    3: (
        (
            "def load_on(path, device):\n    return torch.load(path)",
            "left tensors elsewhere: tell torch.load where to put them (map_location)",
        ),
        (
            "def load_on(path, device):\n    return torch.load(path).to(device)",
            "'collections.OrderedDict' object has no attribute 'to'",
        ),
        (
            "def load_on(path, device):\n    return nn.Linear(3, 1).to(device).state_dict()",
            "the tensors should hold the saved values",
        ),
    ),
    4: (
        # no autocast: the scaler alone does not make anything 16-bit
        (
            "def amp_step(model, optimizer, scaler, x, y):\n"
            "    loss = nn.functional.mse_loss(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    optimizer.zero_grad()\n"
            "    return loss",
            "the forward pass ran without autocast",
        ),
        # steps with the scaled gradients: every update is `scale` times too large
        (
            "def amp_step(model, optimizer, scaler, x, y):\n"
            "    with torch.autocast(device_type='cpu', dtype=torch.bfloat16):\n"
            "        loss = nn.functional.mse_loss(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    optimizer.step()\n"
            "    optimizer.zero_grad()\n"
            "    return loss",
            "call backward on scaler.scale(loss) and step with scaler.step(optimizer)",
        ),
        # forgets update(): the scale never adapts
        (
            "def amp_step(model, optimizer, scaler, x, y):\n"
            "    with torch.autocast(device_type='cpu', dtype=torch.bfloat16):\n"
            "        loss = nn.functional.mse_loss(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
            "    optimizer.zero_grad()\n"
            "    return loss",
            "the scale did not change after a good step: call scaler.update()",
        ),
        # float16 on the CPU
        (
            "def amp_step(model, optimizer, scaler, x, y):\n"
            "    with torch.autocast(device_type='cpu', dtype=torch.float16):\n"
            "        loss = nn.functional.mse_loss(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    optimizer.zero_grad()\n"
            "    return loss",
            "on the CPU autocast should use torch.bfloat16, not torch.float16",
        ),
    ),
    5: (
        # the bug as given: clips the scaled gradients, then unscales them
        (
            "def clipped_step(model, optimizer, scaler, x, y, max_norm):\n"
            "    device = next(model.parameters()).device\n"
            "    x, y = x.to(device), y.to(device)\n"
            "    with torch.autocast(device_type=device.type, dtype=low_precision(device)):\n"
            "        loss = nn.functional.mse_loss(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    scaler.unscale_(optimizer)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    optimizer.zero_grad()\n"
            "    return norm",
            "still multiplied by the scaler's scale (65,536)",
        ),
        # unscales before clipping and keeps the old unscale_ too: the scaler refuses the second
        (
            "def clipped_step(model, optimizer, scaler, x, y, max_norm):\n"
            "    device = next(model.parameters()).device\n"
            "    x, y = x.to(device), y.to(device)\n"
            "    with torch.autocast(device_type=device.type, dtype=low_precision(device)):\n"
            "        loss = nn.functional.mse_loss(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    scaler.unscale_(optimizer)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    optimizer.zero_grad()\n"
            "    return norm",
            "scaler.unscale_(optimizer) ran twice in one step",
        ),
        # lets scaler.step unscale, and clips after it: the step used the unclipped gradients
        (
            "def clipped_step(model, optimizer, scaler, x, y, max_norm):\n"
            "    device = next(model.parameters()).device\n"
            "    x, y = x.to(device), y.to(device)\n"
            "    with torch.autocast(device_type=device.type, dtype=low_precision(device)):\n"
            "        loss = nn.functional.mse_loss(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
            "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    scaler.update()\n"
            "    optimizer.zero_grad()\n"
            "    return norm",
            "as if the gradients had not been clipped",
        ),
        # unscales and clips, then steps the optimizer itself: update() has no step to learn from
        (
            "def clipped_step(model, optimizer, scaler, x, y, max_norm):\n"
            "    device = next(model.parameters()).device\n"
            "    x, y = x.to(device), y.to(device)\n"
            "    with torch.autocast(device_type=device.type, dtype=low_precision(device)):\n"
            "        loss = nn.functional.mse_loss(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    optimizer.step()\n"
            "    scaler.update()\n"
            "    optimizer.zero_grad()\n"
            "    return norm",
            "the optimizer stepped without the scaler",
        ),
        # unscales after the step, then clips: too late, and the scaler refuses it
        (
            "def clipped_step(model, optimizer, scaler, x, y, max_norm):\n"
            "    device = next(model.parameters()).device\n"
            "    x, y = x.to(device), y.to(device)\n"
            "    with torch.autocast(device_type=device.type, dtype=low_precision(device)):\n"
            "        loss = nn.functional.mse_loss(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n"
            "    scaler.unscale_(optimizer)\n"
            "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    scaler.update()\n"
            "    optimizer.zero_grad()\n"
            "    return norm",
            "came after scaler.step(optimizer)",
        ),
        # the right order, but the scale is never updated
        (
            "def clipped_step(model, optimizer, scaler, x, y, max_norm):\n"
            "    device = next(model.parameters()).device\n"
            "    x, y = x.to(device), y.to(device)\n"
            "    with torch.autocast(device_type=device.type, dtype=low_precision(device)):\n"
            "        loss = nn.functional.mse_loss(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    scaler.step(optimizer)\n"
            "    optimizer.zero_grad()\n"
            "    return norm",
            "the scale did not change after a good step",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def predict(model, x):\n"
        "    with torch.no_grad():\n"
        "        return model(x.to(next(model.parameters()).device))",
    ),
    2: (
        "def train_epoch(model, optimizer, X, y, batch_size):\n"
        "    device = next(model.parameters()).device\n"
        "    X, y = X.to(device, non_blocking=True), y.to(device, non_blocking=True)\n"
        "    total, count = torch.zeros((), device=device), 0\n"
        "    for xb, yb in zip(X.split(batch_size), y.split(batch_size)):\n"
        "        optimizer.zero_grad(set_to_none=True)\n"
        "        loss = ((model(xb) - yb) ** 2).mean()\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        total += loss.detach()\n"
        "        count += 1\n"
        "    return total / count",
    ),
    3: (
        "def load_on(path, device):\n"
        "    state = torch.load(path, weights_only=True)\n"
        "    return {key: value.to(device) for key, value in state.items()}",
    ),
}
