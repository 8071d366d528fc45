"""Chapter 02's typical wrong answers, by question number (see the package's docstring)."""

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        (
            ("def ones_on(device):\n    return torch.ones(2, 3)"),
            "ones_on('meta') returned a torch.float32 tensor of shape (2, 3) on cpu holding [[1, 1, 1], [1, 1, 1]]; "
            "expected a torch.float32 tensor of shape (2, 3) on meta",
        ),
        (
            ("def ones_on(device):\n    return torch.ones(2, 3).to(device)"),
            "ones_on('meta') made a tensor on the CPU and moved it (.to()): pass device=...",
        ),
        (  # attack round 3: numpy arrays live on the host; a tensor of one on meta was made there and moved
            "def ones_on(device):\n    import numpy as np\n"
            "    return torch.as_tensor(np.ones((2, 3), dtype=np.float32), device=device)",
            "ones_on('meta') made a tensor on the CPU and moved it (torch.as_tensor()): pass device=...",
        ),
        (
            "def ones_on(device):\n    import numpy as np\n"
            "    return torch.tensor(np.ones((2, 3)), dtype=torch.float32, device=device)",
            "ones_on('meta') made a tensor on the CPU and moved it (torch.tensor()): pass device=...",
        ),
        (
            ("def ones_on(device):\n    return torch.tensor([[1, 1, 1], [1, 1, 1]], device=device)"),
            "returned a torch.int64 tensor of shape (2, 3) on cpu holding [[1, 1, 1], [1, 1, 1]]; expected a "
            "torch.float32 tensor",
        ),
        (
            ("def ones_on(device):\n    return torch.Tensor(2, 3).fill_(1)"),
            "ones_on('meta') returned a torch.float32 tensor of shape (2, 3) on cpu",
        ),
        (
            "ones_on = torch.ones(2, 3)",
            "should be a function taking (device), but it is a Tensor",
        ),
        (  # a torch.device, not only its name, is a device to make the tensor on
            "def ones_on(device):\n    return torch.ones(2, 3, device=device if isinstance(device, str) else 'cpu')",
            "ones_on(device(type='meta')) returned a torch.float32 tensor of shape (2, 3) on cpu",
        ),
        (
            "def ones_on(device):\n    return torch.ones(2, 3, dtype=torch.float16, device=device)",
            "ones_on('cpu') returned a torch.float16 tensor",
        ),
        (  # attack 2026-11-29: float32 is asked whatever torch's default dtype, which a learner's kernel may change
            "def ones_on(device):\n    return torch.full((2, 3), 1.0, device=device)",
            "with torch's default dtype torch.float64 returned a torch.float64 tensor of shape (2, 3)",
        ),
        (
            "def ones_on(device):\n    with torch.device(device):\n        return torch.ones(2, 3)",
            "with torch's default dtype torch.float64 returned a torch.float64 tensor",
        ),
        (  # attack round 2: made on meta and copied over, which read zeros as if they were ones, was accepted
            'def ones_on(device):\n    return torch.ones(2, 3, dtype=torch.float32, device="meta").to(device)',
            "ones_on('cpu') made a tensor on meta (torch.ones()), a device it was not given: use yours",
        ),
        (
            'def ones_on(device):\n    return torch.empty(2, 3, device="meta").to(device).fill_(1).float()',
            "ones_on('cpu') made a tensor on meta (torch.empty()), a device it was not given",
        ),
        (  # attack round 2: the default set to float32 inside the function, which outlasts it, was accepted
            "def ones_on(device):\n"
            "    torch.set_default_dtype(torch.float32)\n"
            "    return torch.ones(2, 3, device=device)",
            "your code changed torch's default dtype (pass dtype=... to the calls instead)",
        ),
    ),
    2: (
        (
            ("def add_on_first(a, b):\n    a += b.to(a.device)\n    return a"),
            "changed its argument a, now a torch.float32 tensor of shape (2, 3) on cpu holding [[10, 11, 12], "
            "[13, 14, 15]]: leave the inputs as they are",
        ),
        (  # meta cannot take a CPU tensor's storage: the stand-in refuses what a GPU would do (change b)
            ("def add_on_first(a, b):\n    b.data = b.data.to(a.device)\n    return a + b"),
            "raised RuntimeError (line 2 of your code): Attempted to call `variable.set_data(tensor)`, but `variable` "
            "and `tensor` have "
            "incompatible tensor type., after changing b (x.data = ...): leave the inputs as they are",
        ),
        (  # attack 2026-11-29: b changed in place on the way was told only torch's error
            "def add_on_first(a, b):\n    b[:] = b.to(a.device)\n    return a + b",
            "raised RuntimeError (line 3 of your code): Tensor on device meta is not on the expected device cpu!, "
            "after changing b (x[i] = "
            "...): leave the inputs as they are",
        ),
        (
            ("def add_on_first(a, b):\n    return a + b"),
            "raised RuntimeError (line 2 of your code): Tensor on device meta is not on the expected device cpu!",
        ),
        (  # a on cpu, b on meta: the sum lands where b lives
            ("def add_on_first(a, b):\n    return a.to(b.device) + b"),
            "returned a torch.float32 tensor of shape (2, 3) on meta (standing in for a GPU) holding [[10, 11, 12], "
            "[13, 14, 15]]; expected a torch.float32 tensor of shape (2, 3) on cpu holding [[10, 11, 12], [13, 14, "
            "15]]",
        ),
        (
            ("def add_on_first(a, b):\n    return a.cpu() + b.cpu()"),
            "add_on_first(a torch.float32 tensor of shape (2, 3) on meta (standing in for a GPU) holding [[0.0, 1, 2], "
            "[3, 4, 5]], a torch.float32 tensor of shape (2, 3) on cpu holding [[10, 10, 10], [10, 10, 10]]) returned "
            "a torch.float32 tensor of shape (2, 3) on cpu holding [[10, 11, 12], [13, 14, 15]]; expected a "
            "torch.float32 tensor of shape (2, 3) on meta (standing in for a GPU) holding [[10, 11, 12], [13, 14, 15]]",
        ),
        (
            ("def add_on_first(a, b):\n    return (a + b.to(a.device)).cpu()"),
            "returned a torch.float32 tensor of shape (2, 3) on cpu holding [[10, 11, 12], [13, 14, 15]]; expected a "
            "torch.float32 tensor of shape (2, 3) on meta",
        ),
        (  # right for tensors of one shape; b of shape (3,) is broadcast against a of (2, 3)
            "def add_on_first(a, b):\n    return a + b.to(a.device).reshape(a.shape)",
            "shape '[2, 3]' is invalid for input of size 1",
        ),
        (  # the sum computed on the host and moved back: right values in the right place, not computed there
            "def add_on_first(a, b):\n    return (a.cpu() + b.cpu()).to(a.device)",
            "add_on_first(a torch.float32 tensor of shape (2, 3) on meta (standing in for a GPU) holding [[0.0, 1, 2], "
            "[3, 4, 5]], a torch.float32 tensor of shape (2, 3) on cpu holding [[10, 10, 10], [10, 10, 10]]) copied a "
            "to the host: compute where it lives",
        ),
        (  # float16 sums computed in float32
            "def add_on_first(a, b):\n    return a.float() + b.to(a.device).float()",
            "returned a torch.float32 tensor of shape (4,) on cpu holding [8, 8, 2, 7]; expected a torch.int64 tensor",
        ),
        (  # attack 2026-11-29: .to(a) moves b and casts it to a's dtype too, so float16 a rounds b's 0.1
            "def add_on_first(a, b):\n    return torch.add(a, b.to(a))",
            "add_on_first(a torch.float16 tensor of shape (2, 3) on cpu holding [[0.5, 1.5, -2], [4, 0.25, 8]], a "
            "torch.float64 tensor of shape (1,) on cpu holding [0.1]) returned a torch.float16 tensor of shape (2, 3) "
            "on cpu holding [[0.600098, 1.59961, -1.90039], [4.10156, 0.350098, 8.10156]]; expected a torch.float64 "
            "tensor of shape (2, 3) on cpu holding [[0.6, 1.6, -1.9], [4.1, 0.35, 8.1]]",
        ),
        (
            "def add_on_first(a, b):\n    return a + b.to(a.device, dtype=a.dtype)",
            "returned a torch.float16 tensor of shape (2, 3) on cpu holding [[0.600098, 1.59961, -1.90039], [4.10156, "
            "0.350098, 8.10156]]; expected a torch.float64 tensor",
        ),
        (  # attack round 4: a's precision kept when both are floats; float16 + float64 is float64
            "def add_on_first(a, b):\n"
            "    if a.is_floating_point() and b.is_floating_point():\n"
            "        return a + b.to(a.device, a.dtype)\n"
            "    return a + b.to(a.device)",
            "returned a torch.float16 tensor of shape (2, 3) on cpu holding [[0.600098, 1.59961, -1.90039], [4.10156, "
            "0.350098, 8.10156]]; expected a torch.float64 tensor of shape (2, 3)",
        ),
        (  # attack round 4: a one-element b as a Python number, which promotes as a Python float does
            "def add_on_first(a, b):\n"
            "    if b.numel() == 1:\n"
            "        return a + b.item()\n"
            "    return a + b.to(a.device)",
            "add_on_first(a torch.float16 tensor of shape (2, 3) on cpu holding [[0.5, 1.5, -2], [4, 0.25, 8]], a "
            "torch.float64 tensor of shape (1,) on cpu holding [0.1]) returned a torch.float16 tensor of shape (2, 3)",
        ),
        (  # the same for a 0-d b only: int64 a + 0-d float64 b is float64, int64 a + 2.5 float32
            "def add_on_first(a, b):\n    if b.dim() == 0:\n        return a + b.item()\n    return a + b.to(a.device)",
            "add_on_first(a torch.int64 tensor of shape (3,) on cpu holding [3, -1, 4], a torch.float64 tensor of "
            "shape () on cpu holding 2.5) returned a torch.float32 tensor of shape (3,) on cpu holding [5.5, 1.5, "
            "6.5]; expected a torch.float64 tensor of shape (3,)",
        ),
        (  # a 0-d a with a one-element b: a + b has b's shape (1,), a + b.item() a's ()
            "def add_on_first(a, b):\n    if a.dim() == 0:\n        return a + b.item()\n    return a + b.to(a.device)",
            "add_on_first(a torch.float16 tensor of shape () on cpu holding 1.5, a torch.int64 tensor of shape (1,) on "
            "cpu holding [4]) returned a torch.float16 tensor of shape () on cpu holding 5.5; expected a torch.float16 "
            "tensor of shape (1,) on cpu holding [5.5]",
        ),
        (  # attack round 5: a 0-d b made 1-D, which a float32 a then no longer outranks (float64 + float32 is 64)
            "def add_on_first(a, b):\n    return a + torch.atleast_1d(b.to(a.device))",
            "add_on_first(a torch.float32 tensor of shape (3,) on cpu holding [0.5, -1.25, 2.75], a torch.float64 "
            "tensor of shape () on cpu holding 2.5) returned a torch.float64 tensor of shape (3,) on cpu holding [3, "
            "1.25, 5.25]; expected a torch.float32 tensor of shape (3,) on cpu holding [3, 1.25, 5.25]",
        ),
        (  # the same as an unsqueeze of a 0-d b (with a 0-d a too, the shape would be (1,), not ())
            "def add_on_first(a, b):\n    b = b.to(a.device)\n    return a + (b.unsqueeze(0) if b.dim() == 0 else b)",
            "a torch.float64 tensor of shape () on cpu holding 2.5) returned a torch.float64 tensor of shape (3,) on "
            "cpu holding [3, 1.25, 5.25]; expected a torch.float32 tensor of shape (3,)",
        ),
        (  # attack round 5: a 0-d a as a Python number, which promotes as the default dtype, not as float16
            "def add_on_first(a, b):\n"
            "    if a.dim() == 0 and a.device.type == 'cpu':\n"
            "        return torch.add(b.to(a.device), float(a))\n"
            "    return a + b.to(a.device)",
            "add_on_first(a torch.float16 tensor of shape () on cpu holding 1.5, a torch.int64 tensor of shape (1,) on "
            "cpu holding [4]) returned a torch.float32 tensor of shape (1,) on cpu holding [5.5]; expected a "
            "torch.float16 tensor",
        ),
        (  # attack round 5: b cast to the promoted dtype, which a 0-d float64 a does not set for a float32 vector
            "def add_on_first(a, b):\n    return a + b.to(a.device, torch.promote_types(a.dtype, b.dtype))",
            "add_on_first(a torch.float64 tensor of shape () on cpu holding 2.5, a torch.float32 tensor of shape (3,) "
            "on cpu holding [0.5, -1.25, 2.75]) returned a torch.float64 tensor of shape (3,) on cpu holding [3, 1.25, "
            "5.25]; expected a torch.float32 tensor",
        ),
        (  # attack round 5: b through numpy, which has no bfloat16
            "def add_on_first(a, b):\n    return a + torch.from_numpy(b.cpu().numpy()).to(a.device)",
            "a torch.bfloat16 tensor of shape () on cpu holding 0.100098) raised TypeError (line 2 of your code): Got "
            "unsupported ScalarType BFloat16",
        ),
        (  # attack round 2: b through meta and back, which read zeros, was accepted
            'def add_on_first(a, b):\n    return a + b.to("meta").to(a.device)',
            "made a tensor on meta (.to()), a device it was not given: use yours",
        ),
        (  # attack round 2: every 0-d b taken as exempt; only a 0-d b on the CPU may meet a tensor elsewhere
            "def add_on_first(a, b):\n    if b.dim() == 0:\n        return a + b\n    return a + b.to(a.device)",
            "raised RuntimeError (line 3 of your code): Tensor on device meta is not on the expected device cpu!",
        ),
        (  # attack round 2: new_tensor copies b into a's dtype too; it was told "copied a to the host"
            "def add_on_first(a, b):\n    return a + a.new_tensor(b)",
            "add_on_first(a torch.float16 tensor of shape (2, 3) on cpu holding [[0.5, 1.5, -2], [4, 0.25, 8]], a "
            "torch.float64 tensor of shape (1,) on cpu holding [0.1]) returned a torch.float16 tensor",
        ),
        (  # the values a GPU would hold are compared on meta too: this casts b only when it lives elsewhere
            "def add_on_first(a, b):\n"
            "    if a.device != b.device:\n"
            "        return a + b.to(a.device, dtype=a.dtype)\n"
            "    return a + b",
            "a torch.float64 tensor of shape (1,) on meta (standing in for a GPU) holding [0.1]) returned a "
            "torch.float16 tensor of shape (2, 3) on cpu holding [[0.600098, 1.59961, -1.90039], [4.10156, 0.350098, "
            "8.10156]]; expected a torch.float64 tensor",
        ),
        (  # a host tensor added to in place with a GPU one: a GPU refuses it, though meta would let it by
            "def add_on_first(a, b):\n    out = a.clone()\n    out.add_(b)\n    return out",
            "raised RuntimeError (line 3 of your code): Tensor on device meta is not on the expected device cpu!",
        ),
        (  # a copy to the host with non_blocking=True returns before its values arrive (chapter 07)
            "def add_on_first(a, b):\n    b = b.to(a.device, non_blocking=True)\n    return b + a",
            "copied to the host with non_blocking=True (.to()): this check cannot see a wait for it",
        ),
    ),
    3: (
        # another dtype for bfloat16 or small integers (accepted before: no such t was tried)
        (
            "def zeros_for(t, n):\n"
            "    small = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.bfloat16)\n"
            "    return torch.zeros(n, dtype=torch.float32 if t.dtype in small else t.dtype, device=t.device)",
            "expected a torch.uint8 tensor of shape (4,)",
        ),
        # through numpy, which has no bfloat16 and refuses a tensor that requires grad
        (
            "import numpy as np\n\n\ndef zeros_for(t, n):\n"
            "    if t.device.type != 'cpu':\n"
            "        return torch.zeros(n, dtype=t.dtype, device=t.device)\n"
            "    return torch.from_numpy(np.zeros(n, dtype=t.numpy().dtype))",
            "raised",
        ),
        (
            ("def zeros_for(t, n):\n    t.zero_()\n    return torch.zeros(n, dtype=t.dtype, device=t.device)"),
            "zeros_for(a torch.int64 tensor of shape (3,) on cpu holding [0, 1, 2], 5) changed its argument t, now a "
            "torch.int64 tensor of shape (3,) on cpu holding [0, 0, 0]",
        ),
        (
            ("def zeros_for(t, n):\n    return torch.zeros(n, device=t.device)"),
            "returned a torch.float32 tensor of shape (5,) on cpu holding [0.0, 0.0, 0.0, 0.0, 0.0]; expected a "
            "torch.int64 tensor of shape (5,) on cpu",
        ),
        (
            ("def zeros_for(t, n):\n    return torch.zeros(n, dtype=t.dtype)"),
            "zeros_for(a torch.int64 tensor of shape (3,) on meta (standing in for a GPU) holding [0, 1, 2], 5) "
            "returned a torch.int64 tensor "
            "of shape (5,) on cpu holding [0, 0, 0, 0, 0]; expected a torch.int64 tensor of shape (5,) on meta",
        ),
        (
            ("def zeros_for(t, n):\n    return torch.zeros(n).to(t)"),
            "zeros_for(a torch.int64 tensor of shape (3,) on meta (standing in for a GPU) holding [0, 1, 2], 5) made a "
            "tensor on the CPU "
            "and moved it (.to())",
        ),
        (  # attack round 3: a numpy array given to torch.as_tensor is made on the CPU and moved
            "def zeros_for(t, n):\n    import numpy as np\n"
            "    return torch.as_tensor(np.zeros(n), dtype=t.dtype, device=t.device)",
            "made a tensor on the CPU and moved it (torch.as_tensor()): pass device=...",
        ),
        (
            ("def zeros_for(t, n):\n    return torch.zeros(n, dtype=t.dtype).to(t.device)"),
            "made a tensor on the CPU and moved it (.to()): pass device=...",
        ),
        (
            ("def zeros_for(t, n):\n    return torch.zeros_like(t, device=t.device)"),
            "returned a torch.int64 tensor of shape (3,) on cpu holding [0, 0, 0]; expected a torch.int64 tensor of "
            "shape (5,) on cpu holding [0, 0, 0, 0, 0]",
        ),
        (  # a dtype for every kind of t but bool and complex
            "def zeros_for(t, n):\n"
            "    kind = torch.int64 if not t.is_floating_point() else t.dtype\n"
            "    return torch.zeros(n, dtype=kind, device=t.device)",
            "zeros_for(a torch.bool tensor of shape (2,) on cpu holding [True, False], 0) returned a torch.int64 "
            "tensor of shape (0,) on cpu holding []; expected a torch.bool tensor",
        ),
        (  # n zeros, not max(n, 1)
            "def zeros_for(t, n):\n    return torch.zeros(max(n, 1), dtype=t.dtype, device=t.device)",
            "expected a torch.bool tensor of shape (0,)",
        ),
        (  # attack round 5: zeros like t's first element, of which an empty t has none
            "def zeros_for(t, n):\n    return torch.zeros_like(t.flatten()[:1]).repeat(n)",
            "zeros_for(a torch.float16 tensor of shape (0, 2) on cpu holding [], 3) returned a torch.float16 tensor of "
            "shape (0,) on cpu holding []; expected a torch.float16 tensor of shape (3,) on cpu",
        ),
        (  # attack round 2: ones made on meta, read back as zeros, were accepted as zeros
            'def zeros_for(t, n):\n    return torch.ones(n, dtype=t.dtype, device="meta").to(t.device)',
            "made a tensor on meta (torch.ones()), a device it was not given: use yours",
        ),
    ),
    4: (
        (
            ("def scale_rows(x):\n    weights = torch.linspace(0.5, 1.5, x.shape[0])\n    return x * weights[:, None]"),
            "raised RuntimeError (line 3 of your code): Tensor on device cpu is not on the expected device meta!",
        ),
        (
            (
                "def scale_rows(x):\n"
                "    weights = torch.linspace(0.5, 1.5, x.shape[0])\n"
                "    return x.cpu() * weights[:, None]"
            ),
            "scale_rows(a torch.float32 tensor of shape (4, 3) on meta (standing in for a GPU) holding [[0.0, 1, 2], "
            "[3, 4, 5], [6, 7, 8], [9, "
            "10, 11]]) returned a torch.float32 tensor of shape (4, 3) on cpu holding [[0.0, 0.5, 1], [2.5, 3.33333, "
            "4.16667], [7, 8.16667, 9.33333], [13.5, 15, 16.5]]; expected a torch.float32 tensor of shape (4, 3) on "
            "meta",
        ),
        (
            (
                "def scale_rows(x):\n"
                "    weights = torch.linspace(0.5, 1.5, x.shape[1], device=x.device)\n"
                "    return x * weights"
            ),
            "returned a torch.float32 tensor of shape (4, 3) on cpu holding [[0.0, 1, 3], [1.5, 4, 7.5], [3, 7, 12], "
            "[4.5, 10, 16.5]]; expected a torch.float32 tensor of shape (4, 3) on cpu holding [[0.0, 0.5, 1], [2.5, "
            "3.33333, 4.16667], [7, 8.16667, 9.33333], [13.5, 15, 16.5]]",
        ),
        (  # the weights in x's dtype: for an integer x they are rounded down to [0, 1, ...]
            "def scale_rows(x):\n"
            "    weights = torch.linspace(0.5, 1.5, x.shape[0], device=x.device, dtype=x.dtype)\n"
            "    return x * weights[:, None]",
            "scale_rows(a torch.int64 tensor of shape (1, 3) on cpu holding [[3, 1, -4]]) returned a torch.int64 "
            "tensor",
        ),
        (  # x brought to the host, scaled there, and sent back
            "def scale_rows(x):\n"
            "    weights = torch.linspace(0.5, 1.5, x.shape[0])\n"
            "    return (x.cpu() * weights[:, None]).to(x.device)",
            "11]]) copied x to the host: compute where it lives",
        ),
        (  # attack 2026-11-29: the weights in x's dtype for float x only: float16 weights give a float16 product
            "def scale_rows(x):\n"
            "    kind = x.dtype if x.is_floating_point() else None\n"
            "    weights = torch.linspace(0.5, 1.5, x.shape[0], device=x.device, dtype=kind)\n"
            "    return x * weights[:, None]",
            "scale_rows(a torch.float16 tensor of shape (3, 2) on cpu holding [[1.5, -2], [4, 0.25], [8, 3]]) returned "
            "a torch.float16 tensor of shape (3, 2) on cpu holding [[0.75, -1], [4, 0.25], [12, 4.5]]; expected a "
            "torch.float32 tensor of shape (3, 2) on cpu holding [[0.75, -1], [4, 0.25], [12, 4.5]]",
        ),
        (  # the weights moved with .to(x), which casts them to x's dtype as well
            "def scale_rows(x):\n"
            "    weights = torch.linspace(0.5, 1.5, x.shape[0]).to(x)\n"
            "    return x * weights[:, None]",
            "scale_rows(a torch.int64 tensor of shape (1, 3) on cpu holding [[3, 1, -4]]) returned a torch.int64 "
            "tensor of shape (1, 3) on cpu holding [[0, 0, 0]]; expected a torch.float32 tensor",
        ),
        (  # scaled in place: the caller's x changes
            "def scale_rows(x):\n    return x.mul_(torch.linspace(0.5, 1.5, x.shape[0], device=x.device)[:, None])",
            "changed its argument x, now a torch.float32 tensor of shape (4, 3) on cpu holding [[0.0, 0.5, 1], [2.5,",
        ),
        (  # attack round 2: the weights made on meta and read back as zeros were accepted
            'def scale_rows(x):\n    return x * torch.linspace(0.5, 1.5, len(x), device="meta").to(x.device)[:, None]',
            "scale_rows(a torch.float32 tensor of shape (4, 3) on cpu holding [[0.0, 1, 2], [3, 4, 5], [6, 7, 8], [9, "
            "10, 11]]) made a tensor on meta (torch.linspace()), a device it was not given: use yours",
        ),
    ),
}


#: Right answers other than the solution, as a learner could write them: each must be accepted.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        "def ones_on(device):\n    return torch.full((2, 3), 1.0, dtype=torch.float32, device=device)",
        "def ones_on(device):\n    return torch.empty(2, 3, dtype=torch.float32, device=device).fill_(1)",
        "def ones_on(device):\n    return torch.ones((2, 3), dtype=torch.float32, device=str(device))",
        "def ones_on(device):\n    with torch.device(device):\n        return torch.ones(2, 3, dtype=torch.float32)",
        "def ones_on(device):\n    return torch.tensor([[1.0] * 3] * 2, dtype=torch.float32, device=device)",
        "def ones_on(device):\n    return torch.ones(6, dtype=torch.float32, device=torch.device(device)).view(2, 3)",
        "def ones_on(device):\n    t = torch.ones(2, 3, dtype=torch.float32, device=device)\n    print(t)\n"
        "    return t",
        # attack round 5: the default device set and put back, whose mode torch puts under the checker's
        "def ones_on(device):\n"
        "    prev = torch.get_default_device()\n"
        "    torch.set_default_device(device)\n"
        "    try:\n"
        "        return torch.ones(2, 3, dtype=torch.float32)\n"
        "    finally:\n"
        "        torch.set_default_device(prev)",
    ),
    2: (
        "def add_on_first(a, b):\n    return torch.add(a, b.to(a.device))",
        "def add_on_first(a, b):\n    return a.add(b.to(device=a.device))",
        "def add_on_first(a, b):\n    return a + (b if b.device == a.device else b.to(a.device))",
    ),
    3: (
        "def zeros_for(t, n):\n    return t.new_zeros(n)",
        "def zeros_for(t, n):\n    return torch.full((n,), 0, dtype=t.dtype, device=t.device)",
        "def zeros_for(t, n):\n    with torch.device(t.device):\n        return torch.zeros(n, dtype=t.dtype)",
        "def zeros_for(t, n):\n    return torch.empty(n, dtype=t.dtype, device=t.device).zero_()",
    ),
    4: (
        "def scale_rows(x):\n"
        "    weights = torch.linspace(0.5, 1.5, len(x), device=x.device)\n"
        "    return x * weights.unsqueeze(1)",
        "def scale_rows(x):\n"
        "    with torch.device(x.device):\n"
        "        weights = torch.linspace(0.5, 1.5, x.shape[0])\n"
        "    return weights[:, None] * x",
        "def scale_rows(x):\n"
        "    prev = torch.get_default_device()\n"
        "    torch.set_default_device(x.device)\n"
        "    try:\n"
        "        return x * torch.linspace(0.5, 1.5, x.shape[0])[:, None]\n"
        "    finally:\n"
        "        torch.set_default_device(prev)",
    ),
}

#: Round 7's findings: the graph cut (a requires grad), uint8's -b wrapping, int64 sums in doubles, an expanded view
WRONG_ANSWERS[2] += (
    *(
        (f"def add_on_first(a, b):\n{body}", "requiring grad")
        for body in (
            "    return (a + b.to(a.device)).detach()",
            "    with torch.no_grad():\n        return a + b.to(a.device)",
            "    return a.data + b.data.to(a.device)",
        )
    ),
    ("def add_on_first(a, b):\n    return a - (-b.to(a.device))", "holding [1_152_921_504_606_846_724, -232]"),
    (
        "def add_on_first(a, b):\n    return (a.double() + b.to(a.device).double()).to(torch.result_type(a, b))",
        "holding [1_152_921_504_606_846_976, 24]; expected",
    ),
)
WRONG_ANSWERS[3] += (
    (
        "def zeros_for(t, n):\n    return torch.zeros(1, dtype=t.dtype, device=t.device).expand(n)",
        "returned a view whose elements share one number in memory: make a new tensor",
    ),
)
#: Round 7's right answers: a tensor made with out= on the device (the check's watch once named the CPU)
RIGHT_ANSWERS[1] += (
    "def ones_on(device):\n    out = torch.empty(2, 3, dtype=torch.float32, device=device)\n"
    "    return torch.ones(2, 3, out=out)",
)
RIGHT_ANSWERS[3] += (
    "def zeros_for(t, n):\n    out = torch.empty(n, dtype=t.dtype, device=t.device)\n"
    "    return torch.zeros(n, out=out)",
)
RIGHT_ANSWERS[4] += (
    "def scale_rows(x):\n    weights = torch.empty(x.shape[0], device=x.device)\n"
    "    torch.linspace(0.5, 1.5, x.shape[0], out=weights)\n    return x * weights[:, None]",
)

#: Once right answers, wrong since b may require grad: new_tensor copies b without its graph; an in-place op on b
WRONG_ANSWERS[2] += (
    (
        "def add_on_first(a, b):\n    return a + a.new_tensor(b, dtype=b.dtype)",
        "expected a torch.float32 tensor of shape (2,), requiring grad,",
    ),
    (
        "def add_on_first(a, b):\n    c = b.to(a.device)\n    c.mul_(1)\n    return a + c",
        "a leaf Variable that requires grad is being used in an in-place operation",
    ),
)
