"""Chapter 03's exercise solutions, by question number (see the package's docstring)."""

SOLUTIONS: dict[int, str] = {
    1: (
        "def fill_rows(buffer, tensors):\n"
        "    for row, t in zip(buffer, tensors):\n"
        "        row.copy_(t)\n"
        "    return buffer"
    ),
    2: (
        "def in_one_copy(pieces, device):\n"
        "    moved = torch.cat(pieces).to(device)\n"
        "    return list(moved.split(len(pieces[0])))"
    ),
    3: "def losses_to_floats(losses):\n    return torch.stack(losses).tolist()",
    4: (
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
        "    return pieces * per_copy_s + nbytes / (gb_per_s * 1e9)"
    ),
}


#: Typical wrong answers to each question, by number: each must be rejected (tested in CI). They live
#: here, not with the questions, because most are the solution with one line changed.
WRONG_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def fill_rows(buffer, tensors):\n    buffer.data = torch.stack(tensors).clone()\n    return buffer",
        "def fill_rows(buffer, tensors):\n    buffer.set_(torch.stack(tensors))\n    return buffer",
        "def fill_rows(buffer, tensors):\n"
        "    for i in range(4):\n"
        "        buffer[i] = torch.arange(3.0) + 10 * i\n"
        "    return buffer",
        "def fill_rows(buffer, tensors):\n"
        "    for row, t in zip(buffer, tensors):\n"
        "        row.copy_(t)\n"
        "    tensors.clear()\n"
        "    return buffer",
        "def fill_rows(buffer, tensors):\n    return torch.stack(tensors)",
        "def fill_rows(buffer, tensors):\n    for row, t in zip(buffer, tensors):\n        t.copy_(row)\n"
        "    return buffer",
        "def fill_rows(buffer, tensors):\n    for row, t in zip(buffer, tensors):\n        row = t.cpu()\n"
        "    return buffer",
    ),
    2: (
        "def in_one_copy(pieces, device):\n    return list(torch.cat(pieces).to(device).split(4))",
        "def in_one_copy(pieces, device):\n"
        "    joined = torch.cat([p.to(device) for p in pieces])\n"
        "    return list(joined.split(len(pieces[0])))",
        "def in_one_copy(pieces, device):\n"
        "    out = torch.empty(len(pieces), len(pieces[0]), device=device)\n"
        "    for row, p in zip(out, pieces):\n"
        "        row.copy_(p)\n"
        "    return list(out)",
        "def in_one_copy(pieces, device):\n    return [p.to(device) for p in pieces]",
        "def in_one_copy(pieces, device):\n    return torch.cat(pieces).to(device)",
        "def in_one_copy(pieces, device):\n    return list(torch.cat(pieces).split(len(pieces[0])))",
    ),
    3: (
        "def losses_to_floats(losses):\n    return [0.5, 0.25, 0.125, 0.0625]",
        "def losses_to_floats(losses):\n    return sorted(torch.stack(losses).tolist(), reverse=True)",
        "def losses_to_floats(losses):\n"
        "    values = torch.stack(losses).tolist()\n"
        "    losses.clear()\n"
        "    return values",
        "def losses_to_floats(losses):\n    return [loss.item() for loss in losses]",
        "def losses_to_floats(losses):\n    return [float(loss) for loss in losses]",
        "def losses_to_floats(losses):\n    return torch.stack(losses)",
        "def losses_to_floats(losses):\n    return [loss.cpu().tolist() for loss in losses]",
    ),
    4: (
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return nbytes / (gb_per_s * 1e9)",
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return per_copy_s + nbytes / (gb_per_s * 1e9)",
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
        "    return pieces * per_copy_s + nbytes / (gb_per_s * 2**30)",
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
        "    return pieces * per_copy_s + nbytes / gb_per_s",
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
        "    return pieces * per_copy_s + nbytes / pieces / (gb_per_s * 1e9)",
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
        "    return (pieces * per_copy_s + nbytes / (gb_per_s * 1e9)) * 1000",
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return pieces * (per_copy_s + nbytes)",
    ),
}
