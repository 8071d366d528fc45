"""Chapter 03's typical wrong answers, by question number (see the package's docstring)."""

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            ("def fill_rows(buffer, tensors):\n    buffer.data = torch.stack(tensors).clone()\n    return buffer"),
            "returned a torch.float32 tensor of shape (4, 3) on cpu holding [[-12.8422, 1.85989, 17.919], [6.77835, "
            "9.60515, -3.2124], [-11.4082, 7.23145, 6.84572], [5.51105, 7.07989, 14.1651]], not buffer filled in its "
            "own memory: copy into its rows",
        ),
        (  # attack round 3: a view of buffer was told "not buffer filled in its own memory"
            "def fill_rows(buffer, tensors):\n    for row, t in zip(buffer, tensors):\n        row.copy_(t)\n"
            "    return buffer[:]",
            "returned a view of buffer, a torch.float32 tensor of shape (4, 3) on cpu holding [[-12.8422, 1.85989, "
            "17.919], [6.77835, 9.60515, -3.2124], [-11.4082, 7.23145, 6.84572], [5.51105, 7.07989, 14.1651]]: "
            "return buffer itself, not a view",
        ),
        (
            ("def fill_rows(buffer, tensors):\n    buffer.set_(torch.stack(tensors))\n    return buffer"),
            "not buffer filled in its own memory: copy into its rows",
        ),
        (
            (
                "def fill_rows(buffer, tensors):\n"
                "    for i in range(4):\n"
                "        buffer[i] = torch.arange(3.0) + 10 * i\n"
                "    return buffer"
            ),
            "left buffer as a torch.float32 tensor of shape (4, 3) on cpu holding [[0.0, 1, 2], [10, 11, 12], [20, 21, "
            "22], [30, 31, 32]]; expected a torch.float32 tensor of shape (4, 3) on cpu holding [[-12.8422,",
        ),
        (
            (
                "def fill_rows(buffer, tensors):\n"
                "    for row, t in zip(buffer, tensors):\n"
                "        row.copy_(t)\n"
                "    tensors.clear()\n"
                "    return buffer"
            ),
            "changed its argument tensors, now []: leave the inputs as they are",
        ),
        (
            ("def fill_rows(buffer, tensors):\n    return torch.stack(tensors)"),
            "returned a torch.float32 tensor of shape (4, 3) on cpu holding [[-12.8422, 1.85989, 17.919], [6.77835, "
            "9.60515, -3.2124], [-11.4082, 7.23145, 6.84572], [5.51105, 7.07989, 14.1651]], not buffer",
        ),
        (  # copy_ the wrong way round: the tensors now hold the buffer's rows, and the buffer is as it was
            (
                "def fill_rows(buffer, tensors):\n"
                "    for row, t in zip(buffer, tensors):\n"
                "        t.copy_(row)\n"
                "    return buffer"
            ),
            "changed its argument tensors, now a list of 4 tensors, the first a torch.float32 tensor of shape (3,) on "
            "cpu holding [7, 7, 7]",
        ),
        (
            (
                "def fill_rows(buffer, tensors):\n"
                "    for row, t in zip(buffer, tensors):\n"
                "        row = t.cpu()\n"
                "    return buffer"
            ),
            "left buffer as a torch.float32 tensor of shape (4, 3) on cpu holding [[7, 7, 7], [7, 7, 7], [7, 7, 7], "
            "[7, 7, 7]]; expected",
        ),
        (  # attack 2026-11-28: the right copies, then the input zeroed, was told the copy's direction is reversed
            "def fill_rows(buffer, tensors):\n"
            "    for row, t in zip(buffer, tensors):\n"
            "        row.copy_(t)\n"
            "        t.zero_()\n"
            "    return buffer",
            "changed its argument tensors, now a list of 4 tensors, the first a torch.float32 tensor of shape (3,) on "
            "cpu holding [0.0, 0.0, 0.0]: leave the inputs as they are",
        ),
        (  # right on the host; out= must live on the tensors' device, which a GPU refuses as meta does
            "def fill_rows(buffer, tensors):\n    torch.stack(tensors, out=buffer)\n    return buffer",
            "raised RuntimeError (line 2 of your code): Attempting to copy from device meta to device cpu",
        ),
        (  # a new buffer in the buffer's place, for buffers of the tensors' dtype only
            "def fill_rows(buffer, tensors):\n    buffer[:] = torch.stack(tensors).to(torch.int64)\n    return buffer",
            "left buffer as a torch.float32 tensor of shape (4, 3) on cpu holding [[-12, 1, 17]",
        ),
        (  # attack 2026-11-29: the values read on the host and made a host tensor again, then copied into the row
            "def fill_rows(buffer, tensors):\n"
            "    for i, t in enumerate(tensors):\n"
            "        buffer[i] = torch.tensor(t.tolist())\n"
            "    return buffer",
            "fill_rows(a torch.float32 tensor of shape (4, 3) on cpu holding [[7, 7, 7], [7, 7, 7], [7, 7, 7], [7, 7, "
            "7]], a list of 4 tensors, the first a torch.float32 tensor of shape (3,) on meta (standing in for a GPU) "
            "holding [-12.8422, "
            "1.85989, 17.919]) took values to the host first (4 × .tolist()): copy each tensor straight into its row "
            "(row.copy_(t)), one copy a row",
        ),
        (  # a host copy of each tensor first
            "def fill_rows(buffer, tensors):\n    for row, t in zip(buffer, tensors):\n        row.copy_(t.cpu())\n"
            "    return buffer",
            "took values to the host first (4 × .cpu()): copy each tensor straight into its row",
        ),
        (  # one host copy of them all first: a new buffer after all
            "def fill_rows(buffer, tensors):\n    buffer.copy_(torch.stack(tensors).cpu())\n    return buffer",
            "took values to the host first (.cpu())",
        ),
        (  # a read of every value
            "def fill_rows(buffer, tensors):\n"
            "    for i, t in enumerate(tensors):\n"
            "        for j in range(len(t)):\n"
            "            buffer[i, j] = t[j].item()\n"
            "    return buffer",
            "took values to the host first (12 × .item())",
        ),
        (  # a copy of every value straight into the buffer: a copy each, not one a row
            "def fill_rows(buffer, tensors):\n"
            "    for i, t in enumerate(tensors):\n"
            "        for j in range(len(t)):\n"
            "            buffer[i, j] = t[j]\n"
            "    return buffer",
            "on meta (standing in for a GPU) holding [-12.8422, 1.85989, 17.919]) copied 12 times: copy each tensor "
            "straight into its row "
            "(row.copy_(t)), one copy a row",
        ),
        (  # the tensors replaced by host copies (the values shown are the twin's, which a GPU would hold)
            "def fill_rows(buffer, tensors):\n"
            "    tensors[:] = [t.cpu() for t in tensors]\n"
            "    for row, t in zip(buffer, tensors):\n"
            "        row.copy_(t)\n"
            "    return buffer",
            "changed its argument tensors, now a list of 4 tensors, the first a torch.float32 tensor of shape (3,) on "
            "cpu holding [-12.8422, 1.85989, 17.919]: leave the inputs as they are",
        ),
        (  # attack round 2: the tensors through meta and back, which read zeros, was accepted
            "def fill_rows(buffer, tensors):\n"
            "    for row, t in zip(buffer, tensors):\n"
            '        row.copy_(t.to("meta"))\n'
            "    return buffer",
            "made a tensor on meta (.to()), a device it was not given: use yours",
        ),
        (  # attack round 2: one copy of a stacked tensor: a new buffer on the device, and not one copy a row
            "def fill_rows(buffer, tensors):\n    buffer.copy_(torch.stack(tensors))\n    return buffer",
            "made a new tensor on the device first (torch.stack()): copy each tensor straight into its row "
            "(row.copy_(t)), one copy a row",
        ),
        (
            "def fill_rows(buffer, tensors):\n    buffer[:] = torch.stack(tensors)\n    return buffer",
            "made a new tensor on the device first (torch.stack())",
        ),
        (
            "def fill_rows(buffer, tensors):\n    buffer.copy_(torch.cat(tensors).view_as(buffer))\n    return buffer",
            "made a new tensor on the device first (torch.cat())",
        ),
        (  # one copy a row, but from a stacked tensor: not straight from each tensor
            "def fill_rows(buffer, tensors):\n"
            "    for row, r in zip(buffer, torch.stack(tensors)):\n"
            "        row.copy_(r)\n"
            "    return buffer",
            "made a new tensor on the device first (torch.stack())",
        ),
        (  # a copy of each tensor made on the device first
            "def fill_rows(buffer, tensors):\n"
            "    for i, t in enumerate(tensors):\n"
            "        buffer[i].copy_(t.clone())\n"
            "    return buffer",
            "made a new tensor on the device first (4 × .clone())",
        ),
    ),
    2: (
        (
            ("def in_one_copy(pieces, device):\n    return list(torch.cat(pieces).to(device).split(4))"),
            "returned a list of 3 tensors, the first a torch.int64 tensor of shape (4,) on cpu holding [-3, -4, -4, "
            "5]; expected a list of 5 tensors, the first a torch.int64 tensor of shape (2,) on cpu holding [-3, -4]",
        ),
        (
            (
                "def in_one_copy(pieces, device):\n"
                "    joined = torch.cat([p.to(device) for p in pieces])\n"
                "    return list(joined.split(len(pieces[0])))"
            ),
            "copied 3 times between host and device (3 × .to()): join, copy once, split",
        ),
        (
            (
                "def in_one_copy(pieces, device):\n"
                "    out = torch.empty(len(pieces), len(pieces[0]), device=device)\n"
                "    for row, p in zip(out, pieces):\n"
                "        row.copy_(p)\n"
                "    return list(out)"
            ),
            "copied 3 times between host and device (3 × .copy_())",
        ),
        (
            ("def in_one_copy(pieces, device):\n    return [torch.tensor(p.tolist(), device=device) for p in pieces]"),
            "copied 3 times between host and device (3 × torch.tensor())",
        ),
        (
            ("def in_one_copy(pieces, device):\n    return [p.to(device) for p in pieces]"),
            "in_one_copy(a list of 3 tensors, the first a torch.float32 tensor of shape (4,) on cpu holding [6.42621, "
            "1.39867, 0.711825, -4.90974], device(type='meta')) copied 3 times between host and device (3 × .to())",
        ),
        (
            ("def in_one_copy(pieces, device):\n    return torch.cat(pieces).to(device)"),
            "to return a list of tensors, but got a Tensor",
        ),
        (
            ("def in_one_copy(pieces, device):\n    return list(torch.cat(pieces).split(len(pieces[0])))"),
            "returned a list of 3 tensors, the first a torch.float32 tensor of shape (4,) on cpu holding [6.42621, "
            "1.39867, 0.711825, -4.90974]; expected a list of 3 tensors, the first a torch.float32 tensor of shape "
            "(4,) on meta",
        ),
        (  # the joined pieces in float32, whatever their dtype
            "def in_one_copy(pieces, device):\n"
            "    moved = torch.cat(pieces).float().to(device)\n"
            "    return list(moved.split(len(pieces[0])))",
            "returned a list of 5 tensors, the first a torch.float32 tensor of shape (2,) on cpu holding [-3, -4]; "
            "expected a list of 5 tensors, the first a torch.int64 tensor",
        ),
        (  # from the device to the host, piece by piece: a read of the device for each piece
            "def in_one_copy(pieces, device):\n"
            "    if pieces[0].device.type == 'cpu':\n"
            "        return list(torch.cat(pieces).to(device).split(len(pieces[0])))\n"
            "    return [p.to(device) for p in pieces]",
            "in_one_copy(a list of 3 tensors, the first a torch.float32 tensor of shape (4,) on meta (standing in for "
            "a GPU) holding [6.42621, "
            "1.39867, 0.711825, -4.90974], device(type='cpu')) copied 3 times between host and device (3 × .to())",
        ),
        (  # the pieces' list emptied
            "def in_one_copy(pieces, device):\n"
            "    moved = torch.cat(pieces).to(device)\n"
            "    sizes = [len(pieces.pop()) for _ in range(len(pieces))]\n"
            "    return list(moved.split(sizes))",
            "changed its argument pieces, now []",
        ),
        (  # attack round 3: a round trip through the host, when the pieces already live on device, is two copies
            "def in_one_copy(pieces, device):\n"
            "    return list(torch.cat(pieces).cpu().to(device).split(len(pieces[0])))",
            "device(type='meta')) copied 2 times between host and device (.to(), .cpu()): join, copy once, split",
        ),
        (  # attack round 3: a wait guarded by is_cuda (False on meta) cannot be seen here
            "def in_one_copy(pieces, device):\n"
            "    x = torch.cat(pieces).to(device, non_blocking=True)\n"
            "    if pieces[0].is_cuda:\n        torch.cuda.synchronize()\n"
            "    return list(x.split(len(pieces[0])))",
            "copied to the host with non_blocking=True (.to()): this check cannot see a wait for it; copy to the host "
            "with non_blocking=False, which waits",
        ),
        (  # a copy to the host with non_blocking=True returns before its values arrive (chapter 07)
            "def in_one_copy(pieces, device):\n"
            "    return torch.cat(pieces).to(device, non_blocking=True).chunk(len(pieces))",
            "in_one_copy(a list of 3 tensors, the first a torch.float32 tensor of shape (4,) on meta (standing in for "
            "a GPU) holding [6.42621, "
            "1.39867, 0.711825, -4.90974], device(type='cpu')) copied to the host with non_blocking=True (.to()): this "
            "check cannot see a wait for it; copy to the host with non_blocking=False, which waits",
        ),
        (  # attack round 2: the extra read (bool()) was told "raised AssertionError", as meta read False
            "def in_one_copy(pieces, device):\n"
            "    big = torch.cat(pieces).to(device)\n"
            "    assert bool(torch.isfinite(big).all())\n"
            "    return list(big.split(len(pieces[0])))",
            "copied 2 times between host and device (.to(), bool()): join, copy once, split",
        ),
        (  # attack round 4: the first piece each time; the message showed the first piece of each, which agree
            "def in_one_copy(pieces, device):\n"
            "    big = torch.cat(pieces).to(device)\n"
            "    return [big[: len(pieces[0])]] * len(pieces)",
            "returned a list of 3 tensors, number 2 a torch.float32 tensor of shape (4,) on cpu holding [6.42621, "
            "1.39867, 0.711825, -4.90974]; expected a list of 3 tensors, number 2 a torch.float32 tensor of shape "
            "(4,) on cpu holding [0.36946, -10.9461, 2.69996, 8.08893]",
        ),
    ),
    3: (
        (
            ("def losses_to_floats(losses):\n    return [0.5, 0.25, 0.125, 0.0625]"),
            "returned [0.5, 0.25, 0.125, 0.0625]; expected the Python floats [-4.28074, 0.619962, 5.97299, 2.25945]",
        ),
        (
            ("def losses_to_floats(losses):\n    return sorted(torch.stack(losses).tolist(), reverse=True)"),
            "returned [5.97299, 2.25945, 0.619962, -4.28074]; expected the Python floats [-4.28074, 0.619962, 5.97299, "
            "2.25945]",
        ),
        (
            (
                "def losses_to_floats(losses):\n"
                "    values = torch.stack(losses).tolist()\n"
                "    losses.clear()\n"
                "    return values"
            ),
            "changed its argument losses, now []",
        ),
        (
            ("def losses_to_floats(losses):\n    return [loss.item() for loss in losses]"),
            "read the device 4 times (4 × .item()), each a wait: stack, then read once",
        ),
        (
            ("def losses_to_floats(losses):\n    return [float(loss) for loss in losses]"),
            "read the device 4 times (4 × float())",
        ),
        (
            ("def losses_to_floats(losses):\n    return torch.stack(losses)"),
            "to return a list of Python floats, but got a Tensor",
        ),
        (
            ("def losses_to_floats(losses):\n    return [loss.cpu().tolist() for loss in losses]"),
            "read the device 4 times (4 × .cpu())",
        ),
        (
            "def losses_to_floats(losses):\n    return torch.tensor(losses).tolist()",
            "read the device 4 times (4 × torch.tensor())",
        ),
        (
            "def losses_to_floats(losses):\n    print(losses)\n    return torch.stack(losses).tolist()",
            "read the device 5 times (4 × print() or repr(), .tolist())",
        ),
        (
            "def losses_to_floats(losses):\n    return [loss.to('cpu').item() for loss in losses]",
            "read the device 4 times (4 × .to())",
        ),
        (  # a list of 0-d tensors on the host, not Python floats
            "def losses_to_floats(losses):\n    return list(torch.stack(losses).cpu())",
            "returned [a torch.float32 tensor of shape () on cpu,",
        ),
        (  # attack 2026-11-29: losses that require grad, as a training step's do, have no .numpy() without .detach()
            "def losses_to_floats(losses):\n    return torch.stack(losses).cpu().numpy().tolist()",
            "raised RuntimeError (line 2 of your code): Can't call numpy() on Tensor that requires grad",
        ),
        (  # the values rounded to float16, whatever the losses' dtype
            "def losses_to_floats(losses):\n    return torch.stack(losses).half().tolist()",
            "returned [-4.28125, 0.620117, 5.97266, 2.25977]; expected the Python floats [-4.28074",
        ),
        (  # attack round 2: through meta and back, which read zeros for real losses, was accepted
            'def losses_to_floats(losses):\n    return torch.stack(losses).to("meta").tolist()',
            "losses_to_floats(a list of 4 tensors, the first a torch.float32 tensor of shape () on cpu holding "
            "-4.28074) made a tensor on meta (.to()), a device it was not given: use yours",
        ),
        (  # attack round 2: the caller's losses detached in place (they no longer require grad) was accepted
            "def losses_to_floats(losses):\n"
            "    for loss in losses:\n"
            "        loss.detach_()\n"
            "    return torch.stack(losses).tolist()",
            "losses_to_floats(a list of 3 tensors, the first a torch.float32 tensor of shape (), requiring grad, on "
            "cpu holding 2.14207) changed its argument losses, now a list of 3 tensors, the first a torch.float32 "
            "tensor of shape () on cpu holding 2.14207: leave the inputs as they are",
        ),
        (  # attack round 2: a copy to the host with non_blocking=True read with no wait was accepted
            'def losses_to_floats(losses):\n    return torch.stack(losses).to("cpu", non_blocking=True).tolist()',
            "copied to the host with non_blocking=True (.to()): this check cannot see a wait for it",
        ),
        (  # attack round 2: the extra read (bool()) was told "returned 0 values", as meta read False
            "def losses_to_floats(losses):\n"
            "    stacked = torch.stack(losses)\n"
            "    return stacked.tolist() if bool(stacked.isfinite().all()) else []",
            "read the device 2 times (bool(), .tolist()), each a wait: stack, then read once",
        ),
        (  # attack round 4: float32 for every loss: a float64 loss loses its digits
            "def losses_to_floats(losses):\n    return torch.stack(losses).float().tolist()",
            "losses_to_floats(a list of 2 tensors, the first a torch.float64 tensor of shape () on cpu holding "
            "1.04612) returned [1.046124815940857, -0.5961707234382629]; expected the Python floats "
            "[1.0461248556772869, -0.596170703570048]: float32's roundings of them; keep their dtype",
        ),
        (  # attack round 5: 0-d tensors kept their dtype and were told float32's roundings; they are not floats
            "def losses_to_floats(losses):\n    return [v for v in torch.stack(losses).cpu()]",
            "losses_to_floats(a list of 4 tensors, the first a torch.float32 tensor of shape () on cpu holding "
            "-4.28074) returned [a torch.float32 tensor of shape () on cpu, a torch.float32 tensor of shape () on cpu, "
            "a torch.float32 tensor of shape () on cpu, a torch.float32 tensor of shape () on cpu]; expected the "
            "Python floats [-4.28074, 0.619962, 5.97299, 2.25945]",
        ),
        (  # attack round 4: numpy has no bfloat16, which the words allow ("0-dimensional floating-point tensors")
            "def losses_to_floats(losses):\n    return torch.stack(losses).numpy(force=True).tolist()",
            "losses_to_floats(a list of 1 tensors, the first a torch.bfloat16 tensor of shape () on cpu holding "
            "1.76562) raised TypeError (line 2 of your code): Got unsupported ScalarType BFloat16",
        ),
        (
            "def losses_to_floats(losses):\n"
            "    import numpy as np\n"
            "    return [float(v) for v in np.asarray(torch.stack(losses).detach().cpu())]",
            "a torch.bfloat16 tensor of shape () on cpu holding 1.76562) raised TypeError (line 3 of your code): "
            "Got unsupported ScalarType BFloat16",
        ),
        (
            "def losses_to_floats(losses):\n    return list(torch.stack(losses).detach().cpu().numpy())",
            "a torch.bfloat16 tensor of shape () on cpu holding 1.76562) raised TypeError",
        ),
        (  # was a right answer until bfloat16 losses were tried
            "def losses_to_floats(losses):\n"
            "    return torch.stack(losses).detach().to(torch.device('cpu')).numpy().tolist()",
            "raised TypeError (line 2 of your code): Got unsupported ScalarType BFloat16",
        ),
    ),
    4: (
        (
            ("def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return nbytes / (gb_per_s * 1e9)"),
            "returned 0.00559241; expected 0.169432: the per-copy cost is missing",
        ),
        (
            (
                "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
                "    return per_copy_s + nbytes / (gb_per_s * 1e9)"
            ),
            "predict_seconds(67_108_864, 16_384, 12, 1e-05) returned 0.00560241; expected 0.169432: per_copy_s is "
            "paid once per copy",
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
            "predict_seconds(67_108_864, 16_384, 12, 1e-05) returned 5.59241e+06; expected 0.169432: gb_per_s is in "
            "10^9 bytes a second",
        ),
        (
            (
                "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
                "    return pieces * per_copy_s + nbytes / pieces / (gb_per_s * 1e9)"
            ),
            "every byte crosses the link",
        ),
        (
            (
                "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
                "    return (pieces * per_copy_s + nbytes / (gb_per_s * 1e9)) * 1000"
            ),
            "returned 169.432; expected 0.169432: that looks like milliseconds",
        ),
        (
            ("def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return pieces * (per_copy_s + nbytes)"),
            "predict_seconds(67_108_864, 16_384, 12, 1e-05) returned 1.09951e+12; expected 0.169432",
        ),
        (  # whole pieces of bytes: nbytes // pieces * pieces loses what does not divide
            "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
            "    return pieces * (per_copy_s + nbytes // pieces / (gb_per_s * 1e9))",
            "predict_seconds(12_345, 7, 0.5, 0) returned 2.4682e-05; expected 2.469e-05: nbytes // pieces drops the "
            "bytes that do not divide",
        ),
        (  # attack 2026-11-29: the copies overlapping the bytes, the larger term alone; not told per_copy_s is missing
            "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
            "    return max(pieces * per_copy_s, nbytes / (gb_per_s * 1e9))",
            "predict_seconds(67_108_864, 16_384, 12, 1e-05) returned 0.16384; expected 0.169432: that is the larger "
            "term alone: the two costs add up",
        ),
        (  # GB/s read as gigabits
            "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
            "    return pieces * per_copy_s + nbytes * 8 / (gb_per_s * 1e9)",
            "returned 0.208579; expected 0.169432: GB/s counts bytes, as nbytes does: no × 8 for bits",
        ),
        (  # attack round 2: floor division, which equals the larger term alone on one case only, was told it was
            "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
            "    return pieces * per_copy_s + nbytes // (gb_per_s * 1e9)",
            "predict_seconds(67_108_864, 16_384, 12, 1e-05) returned 0.16384; expected 0.169432",
        ),
        (  # attack round 4: the bytes' term upside down
            "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return "
            "pieces * per_copy_s + gb_per_s * 1e9 / nbytes",
            "predict_seconds(67_108_864, 16_384, 12, 1e-05) returned 178.978; expected 0.169432: the bytes take "
            "nbytes / (gb_per_s × 1e9) seconds, not its inverse",
        ),
        (  # attack round 4: GB read as 10^6 bytes
            "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return "
            "pieces * per_copy_s + nbytes / (gb_per_s * 1e6)",
            "returned 5.75625; expected 0.169432: GB/s counts 10^9 bytes a second, not 10^6",
        ),
        (  # attack round 4: every copy moving all the bytes
            "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return "
            "pieces * (per_copy_s + nbytes / (gb_per_s * 1e9))",
            "returned 91.7898; expected 0.169432: each copy moves nbytes / pieces, not all nbytes",
        ),
        (  # attack round 4: the first copy free
            "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return "
            "(pieces - 1) * per_copy_s + nbytes / (gb_per_s * 1e9)",
            "returned 0.169422; expected 0.169432: every copy pays per_copy_s, the first one too",
        ),
        (  # attack round 4: per_copy_s read as microseconds; no slip the table names: the numbers only
            "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n    return "
            "pieces * per_copy_s * 1e-6 + nbytes / (gb_per_s * 1e9)",
            "predict_seconds(67_108_864, 16_384, 12, 1e-05) returned 0.00559257; expected 0.169432",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def fill_rows(buffer, tensors):\n    for i, t in enumerate(tensors):\n        buffer[i] = t\n"
        "    return buffer",
        "def fill_rows(buffer, tensors):\n    for row, t in zip(buffer, tensors):\n        row[:] = t\n"
        "    return buffer",
        "def fill_rows(buffer, tensors):\n"
        "    for i, t in enumerate(tensors):\n"
        "        buffer.select(0, i).copy_(t.detach().view(-1))\n"
        "    return buffer",
        "def fill_rows(buffer, tensors):\n    for i in range(len(tensors)):\n"
        "        buffer[i].copy_(tensors[i], non_blocking=True)\n    return buffer",
    ),
    2: (
        "def in_one_copy(pieces, device):\n    return list(torch.stack(pieces).to(device))",
        "def in_one_copy(pieces, device):\n    return torch.cat(pieces).to(device).chunk(len(pieces))",
        "def in_one_copy(pieces, device):\n    return torch.stack(pieces).to(device).unbind(0)",
        "def in_one_copy(pieces, device):\n"
        "    moved, n = torch.cat(pieces).to(device), len(pieces[0])\n"
        "    return [moved[i * n:(i + 1) * n] for i in range(len(pieces))]",
    ),
    3: (
        "def losses_to_floats(losses):\n    return [float(v) for v in torch.stack(losses).cpu()]",
        "def losses_to_floats(losses):\n    return torch.stack(losses).to('cpu').tolist()",
        # attack 2026-11-28: one copy to the host, then reads of the host copy, was told "each one waits for the GPU"
        "def losses_to_floats(losses):\n"
        "    host = torch.stack(losses).cpu()\n"
        "    return [host[i].item() for i in range(len(host))]",
        # attack round 4: numpy has no bfloat16; through float64, which holds every float dtype's values, it is right
        "def losses_to_floats(losses):\n"
        "    return torch.stack(losses).detach().double().to(torch.device('cpu')).numpy().tolist()",
        "def losses_to_floats(losses):\n    return tuple(torch.stack(losses).tolist())",
        "def losses_to_floats(losses):\n"
        "    import numpy as np\n"
        "    return [np.float64(v) for v in torch.stack(losses).detach().cpu().double().numpy()]",
        "def losses_to_floats(losses):\n    return list(map(float, torch.stack(losses).double().cpu()))",
        # attack round 5: the losses are of one dtype (the words say so), so a cast to the first's changes nothing
        "def losses_to_floats(losses):\n    return torch.stack([l.to(losses[0].dtype) for l in losses]).tolist()",
    ),
    4: (
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
        "    return nbytes / gb_per_s / 1e9 + per_copy_s * pieces",
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
        "    import numpy as np\n"
        "    return np.float64(pieces) * per_copy_s + np.float64(nbytes) / (gb_per_s * 10**9)",
    ),
}

#: Round 7's right answer: torch._foreach_copy_ into the rows (one copy a row; it was told "took values to the host")
RIGHT_ANSWERS[1] += (
    "def fill_rows(buffer, tensors):\n    torch._foreach_copy_(list(buffer.unbind(0)), list(tensors))\n"
    "    return buffer",
)
