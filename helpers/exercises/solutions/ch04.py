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
    5: (
        "def clipped_step(model, optimizer, scaler, x, y, max_norm):\n"
        "    device = next(model.parameters()).device\n"
        "    x, y = x.to(device), y.to(device)\n"
        "    with torch.autocast(device_type=device.type, dtype=low_precision(device)):\n"
        "        loss = nn.functional.mse_loss(model(x), y)\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.unscale_(optimizer)\n"
        "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n"
        "    optimizer.zero_grad()\n"
        "    return norm"
    ),
}
