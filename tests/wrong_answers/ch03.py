"""Chapter 03's typical wrong answers, by question number (see the package's docstring)."""

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            ("def fill_rows(buffer, tensors):\n    buffer.data = torch.stack(tensors).clone()\n    return buffer"),
            "`buffer` now uses new memory",
        ),
        (
            ("def fill_rows(buffer, tensors):\n    buffer.set_(torch.stack(tensors))\n    return buffer"),
            "`buffer` now uses new memory",
        ),
        (
            (
                "def fill_rows(buffer, tensors):\n"
                "    for i in range(4):\n"
                "        buffer[i] = torch.arange(3.0) + 10 * i\n"
                "    return buffer"
            ),
            "row i of `buffer` should hold tensors[i] afterwards",
        ),
        (
            (
                "def fill_rows(buffer, tensors):\n"
                "    for row, t in zip(buffer, tensors):\n"
                "        row.copy_(t)\n"
                "    tensors.clear()\n"
                "    return buffer"
            ),
            "changed the list `tensors` it was given",
        ),
        (
            ("def fill_rows(buffer, tensors):\n    return torch.stack(tensors)"),
            "you returned a new tensor and left `buffer` empty",
        ),
        (
            (
                "def fill_rows(buffer, tensors):\n"
                "    for row, t in zip(buffer, tensors):\n"
                "        t.copy_(row)\n"
                "    return buffer"
            ),
            "the tensors you were given changed: x.copy_(y) copies y into x",
        ),
        (
            (
                "def fill_rows(buffer, tensors):\n"
                "    for row, t in zip(buffer, tensors):\n"
                "        row = t.cpu()\n"
                "    return buffer"
            ),
            "`row = ...` only gives the name `row` a new tensor",
        ),
    ),
    2: (
        (
            ("def in_one_copy(pieces, device):\n    return list(torch.cat(pieces).to(device).split(4))"),
            "given 5 pieces, return 5 tensors, one per piece",
        ),
        (
            (
                "def in_one_copy(pieces, device):\n"
                "    joined = torch.cat([p.to(device) for p in pieces])\n"
                "    return list(joined.split(len(pieces[0])))"
            ),
            "the pieces made 3 trips to the device",
        ),
        (
            (
                "def in_one_copy(pieces, device):\n"
                "    out = torch.empty(len(pieces), len(pieces[0]), device=device)\n"
                "    for row, p in zip(out, pieces):\n"
                "        row.copy_(p)\n"
                "    return list(out)"
            ),
            "the pieces made 3 trips to the device",
        ),
        (
            ("def in_one_copy(pieces, device):\n    return [torch.tensor(p.tolist(), device=device) for p in pieces]"),
            "the pieces made 3 trips to the device",
        ),
        (
            ("def in_one_copy(pieces, device):\n    return [p.to(device) for p in pieces]"),
            "the pieces made 3 trips to the device",
        ),
        (
            ("def in_one_copy(pieces, device):\n    return torch.cat(pieces).to(device)"),
            "return a list of tensors, one per piece, not a Tensor",
        ),
        (
            ("def in_one_copy(pieces, device):\n    return list(torch.cat(pieces).split(len(pieces[0])))"),
            "the pieces should arrive on the device you were given",
        ),
    ),
    3: (
        (
            ("def losses_to_floats(losses):\n    return [0.5, 0.25, 0.125, 0.0625]"),
            "return their values in that order, not [0.5, 0.25, 0.125, 0.0625]",
        ),
        (
            ("def losses_to_floats(losses):\n    return sorted(torch.stack(losses).tolist(), reverse=True)"),
            "return their values in that order, not [0.75, 0.5, 0.125, 0.0625]",
        ),
        (
            (
                "def losses_to_floats(losses):\n"
                "    values = torch.stack(losses).tolist()\n"
                "    losses.clear()\n"
                "    return values"
            ),
            "changed the list `losses` it was given",
        ),
        (
            ("def losses_to_floats(losses):\n    return [loss.item() for loss in losses]"),
            "the values travelled to the host 4 times",
        ),
        (
            ("def losses_to_floats(losses):\n    return [float(loss) for loss in losses]"),
            "the values travelled to the host 4 times",
        ),
        (
            ("def losses_to_floats(losses):\n    return torch.stack(losses)"),
            "you returned a tensor (still on the device)",
        ),
        (
            ("def losses_to_floats(losses):\n    return [loss.cpu().tolist() for loss in losses]"),
            "the values travelled to the host 4 times",
        ),
    ),
    4: (
        (
            ("def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return nbytes / (gb_per_s * 1e9)"),
            "the per-copy cost is missing; the one copy pays",
        ),
        (
            (
                "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
                "    return per_copy_s + nbytes / (gb_per_s * 1e9)"
            ),
            "per_copy_s is paid once per copy, so 16384 times, not once",
        ),
        (
            (
                "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
                "    return pieces * per_copy_s + nbytes / (gb_per_s * 2**30)"
            ),
            "GB/s here means 10^9 bytes a second",
        ),
        (
            (
                "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
                "    return pieces * per_copy_s + nbytes / gb_per_s"
            ),
            "gb_per_s counts gigabytes",
        ),
        (
            (
                "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
                "    return pieces * per_copy_s + nbytes / pieces / (gb_per_s * 1e9)"
            ),
            "every byte crosses the link, so the bytes term is for all",
        ),
        (
            (
                "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
                "    return (pieces * per_copy_s + nbytes / (gb_per_s * 1e9)) * 1000"
            ),
            "looks like milliseconds (5.602); return seconds",
        ),
        (
            ("def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return pieces * (per_copy_s + nbytes)"),
            "returned 6.711e+07 s; 1 copy of 1e-05 s plus 67_108_864 bytes at 12 GB/s take 0.005602 s",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def fill_rows(buffer, tensors):\n    for i, t in enumerate(tensors):\n        buffer[i] = t\n"
        "    return buffer",
        "def fill_rows(buffer, tensors):\n    torch.stack(tensors, out=buffer)\n    return buffer",
        "def fill_rows(buffer, tensors):\n    return buffer.copy_(torch.stack(tensors))",
    ),
    2: (
        "def in_one_copy(pieces, device):\n    return list(torch.stack(pieces).to(device))",
        "def in_one_copy(pieces, device):\n"
        "    return torch.cat(pieces).to(device, non_blocking=True).chunk(len(pieces))",
    ),
    3: (
        "def losses_to_floats(losses):\n    return [float(v) for v in torch.stack(losses).cpu()]",
        "def losses_to_floats(losses):\n    return torch.stack(losses).to('cpu').tolist()",
    ),
}
