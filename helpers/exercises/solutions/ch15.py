"""Chapter 15's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: "def best_rung(rows, noise):\n    kept = [r for r in rows[1:] if r['kept']]  # rows[0] is the plain run\n"
    "    best = max(kept, key=lambda r: r['over_last'], default=None)\n"
    "    return best['name'] if best and best['over_last'] - 1 > noise else None",
    2: "def accumulated_step(model, opt, x, y, micro):\n    opt.zero_grad()  # once: the last step's gradients go\n"
    "    for xs, ys in zip(x.tensor_split(micro), y.tensor_split(micro)):\n"
    "        loss = F.cross_entropy(model(xs), ys) * len(xs) / len(x)  # its share of the batch's mean\n"
    "        loss.backward()  # adds to .grad\n    opt.step()",
}
