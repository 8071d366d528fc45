SOLUTIONS: dict[int, str] = {
    1: "def fill_rows(buffer, tensors):\n    for row, t in zip(buffer, tensors):\n"
    "        row.copy_(t)\n    return buffer",
    2: "def in_one_copy(pieces, device):\n    return list(torch.cat(pieces).to(device).split(len(pieces[0])))",
    3: "def losses_to_floats(losses):\n    return torch.stack(losses).tolist()",
    4: "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
    "    return pieces * per_copy_s + nbytes / (gb_per_s * 1e9)",
}
