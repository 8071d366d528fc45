SOLUTIONS: dict[int, str] = {
    1: "def best_rung(rows, noise):\n    kept = [r for r in rows[1:] if r['kept']]  # rows[0] is the plain run\n"
    "    best = max(kept, key=lambda r: r['over_last'], default=None)\n"
    "    return best['name'] if best and best['over_last'] - 1 > noise else None",
    2: "def my_rung(model):\n    for block in model.blocks:\n        block.compile()\n    return model",
}
