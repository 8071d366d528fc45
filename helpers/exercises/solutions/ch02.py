SOLUTIONS: dict[int, str] = {
    1: """made = {"torch.zeros_like(g)": "gpu", "torch.zeros(3, dtype=g.dtype)": "cpu", "g.new_ones(2)": "gpu",
        "torch.ones(g.shape)": "cpu", "g[0]": "gpu"}""",
    2: """mixed = {"g[c > 0]": "gpu", "torch.tensor(2.0) * g": "gpu", "g.sum() + c": "error",
         "c.sum() + g.sum()": "gpu", "torch.where(c > 0, g, 0.0)": "error", "torch.cat([g, c])": "error"}""",
    3: "def zeros_for(t, n):\n    return torch.zeros(n, dtype=t.dtype, device=t.device)",
    4: "def scale_rows(x):\n    return x * torch.linspace(0.5, 1.5, x.shape[0], device=x.device)[:, None]",
}
