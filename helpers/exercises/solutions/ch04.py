"""Chapter 04's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: "def predict(model, x):\n    device = next(model.parameters()).device\n    return model(x.to(device))",
    2: (
        "def train_epoch(model, optimizer, X, y, batch_size):\n"
        "    device = next(model.parameters()).device\n"
        "    X, y = X.to(device), y.to(device)\n"
        "    losses = []\n"
        "    for start in range(0, X.shape[0], batch_size):\n"
        "        xb, yb = X[start : start + batch_size], y[start : start + batch_size]\n"
        "        loss = nn.functional.mse_loss(model(xb), yb)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        optimizer.zero_grad()\n"
        "        losses.append(loss.detach())\n"
        "    return torch.stack(losses).mean()"
    ),
    3: "def load_on(path, device):\n    return torch.load(path, map_location=device, weights_only=True)",
    4: (
        "def amp_step(model, optimizer, scaler, x, y):\n"
        "    device = next(model.parameters()).device\n"
        "    if device.type == 'cuda':\n"
        "        native = torch.cuda.is_bf16_supported(including_emulation=False)\n"
        "        low = torch.bfloat16 if native else torch.float16\n"
        "    else:\n"
        "        low = torch.float16 if device.type == 'mps' else torch.bfloat16\n"
        "    x, y = x.to(device), y.to(device)\n"
        "    with torch.autocast(device_type=device.type, dtype=low):\n"
        "        loss = nn.functional.mse_loss(model(x), y)\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n"
        "    optimizer.zero_grad()\n"
        "    return loss.detach()"
    ),
}


#: Typical wrong answers to each question, by number: each must be rejected (tested in CI). They live
#: here, not with the questions, because most are the solution with one line changed.
WRONG_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def predict(model, x):\n    return model(x.to(next(model.parameters()).device)).cpu()",
        "def predict(model, x):\n    x.mul_(1.5)\n    return model(x.to(next(model.parameters()).device))",
        "def predict(model, x):\n    return model(x)",
        "def predict(model, x):\n    return model.to(x.device)(x)",
        "def predict(model, x):\n    return model(x.to(model.device))",
    ),
    2: (
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
        # forgets zero_grad: gradients pile up from batch to batch
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
        # leaves the data on the CPU: fine here, the device error on a GPU
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
        # reads every loss back to the host
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
    ),
    3: (
        "def load_on(path, device):\n    return torch.load(path)",
        "def load_on(path, device):\n    return torch.load(path).to(device)",
        "def load_on(path, device):\n    return nn.Linear(3, 1).to(device).state_dict()",
    ),
    4: (
        # no autocast: the scaler alone does not make anything 16-bit
        "def amp_step(model, optimizer, scaler, x, y):\n"
        "    loss = nn.functional.mse_loss(model(x), y)\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n"
        "    optimizer.zero_grad()\n"
        "    return loss",
        # steps with the scaled gradients: every update is `scale` times too large
        "def amp_step(model, optimizer, scaler, x, y):\n"
        "    with torch.autocast(device_type='cpu', dtype=torch.bfloat16):\n"
        "        loss = nn.functional.mse_loss(model(x), y)\n"
        "    scaler.scale(loss).backward()\n"
        "    optimizer.step()\n"
        "    optimizer.zero_grad()\n"
        "    return loss",
        # forgets update(): the scale never adapts
        "def amp_step(model, optimizer, scaler, x, y):\n"
        "    with torch.autocast(device_type='cpu', dtype=torch.bfloat16):\n"
        "        loss = nn.functional.mse_loss(model(x), y)\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(optimizer)\n"
        "    optimizer.zero_grad()\n"
        "    return loss",
        # float16 on the CPU
        "def amp_step(model, optimizer, scaler, x, y):\n"
        "    with torch.autocast(device_type='cpu', dtype=torch.float16):\n"
        "        loss = nn.functional.mse_loss(model(x), y)\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n"
        "    optimizer.zero_grad()\n"
        "    return loss",
    ),
}
