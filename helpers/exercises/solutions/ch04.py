SOLUTIONS: dict[int, str] = {
    1: """def fit(model, X, y, steps, path, device):
    model.to(device)
    X, y = X.to(device), y.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scaler = torch.amp.GradScaler(device.type, enabled=low_precision(device) == torch.float16)
    if os.path.exists(path):
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if checkpoint.get("scaler"):  # empty (or absent) when the run that saved it had no use for a scaler
            scaler.load_state_dict(checkpoint["scaler"])
    for _ in range(steps):
        with torch.autocast(device.type, dtype=low_precision(device)):
            loss = nn.functional.mse_loss(model(X), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict()}
    torch.save(state, path)""",
    2: """def clipped_step(model, optimizer, scaler, x, y, max_norm):
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
    return norm""",
}
