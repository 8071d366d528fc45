"""Chapter 04's exercise solutions, by question number (see the package's docstring)."""

_CLIPPED = """def clipped_step(model, optimizer, scaler, x, y, max_norm):
    device = next(model.parameters()).device
    x, y = x.to(device), y.to(device)
    with torch.autocast(device_type=device.type, dtype=low_precision(device)):
        loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
    return norm"""
#: Question 4's step is question 5's without the clip, returning the loss.
_CLIP = "    scaler.unscale_(optimizer)\n    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
_AMP = _CLIPPED.replace(_CLIP, "").replace("clipped_step", "amp_step").replace(", max_norm", "")

SOLUTIONS: dict[int, str] = {
    1: "def predict(model, x):\n    device = next(model.parameters()).device\n    return model(x.to(device))",
    2: """def train_epoch(model, optimizer, X, y, batch_size):
    device = next(model.parameters()).device
    losses = []
    for xb, yb in zip(X.to(device).split(batch_size), y.to(device).split(batch_size)):
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.detach())
    return torch.stack(losses).mean()""",
    3: "def load_on(path, device):\n    return torch.load(path, map_location=device, weights_only=True)",
    4: _AMP.replace("return norm", "return loss.detach()"),
    5: _CLIPPED,
}
