"""Chapter 02's typical wrong answers, by question number (see the package's docstring)."""

from helpers.exercises import ch02
from helpers.exercises.solutions.ch02 import SOLUTIONS

#: A prediction of questions 1 and 2 changed: `line`'s `was` in the solution's text made `now`.
said = lambda q, line, was, now: SOLUTIONS[q].replace(f'"{line}": "{was}"', f'"{line}": {now}')
MADE, MIXED = "torch.zeros(3, dtype=g.dtype)", "torch.where(c > 0, g, 0.0)"

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (  # dtype=g.dtype taken for g's device too; a *_like result, a new_* result, an element of g on the CPU
        (
            said(1, MADE, "cpu", '"gpu"'),
            f"{MADE}: you said 'gpu', but its result lives on the CPU (predictions off: 1 of 5;",
        ),
        (
            said(1, "torch.zeros_like(g)", "gpu", '"cpu"'),
            "torch.zeros_like(g): you said 'cpu', but its result lives on the GPU",
        ),
        (said(1, "g.new_ones(2)", "gpu", '"cpu"'), "g.new_ones(2): you said 'cpu', but its result lives on the GPU"),
        (said(1, "g[0]", "gpu", '"cpu"'), "g[0]: you said 'cpu', but its result lives on the GPU"),
        (
            said(1, "torch.ones(g.shape)", "cpu", '"gpu"'),
            "torch.ones(g.shape): you said 'gpu', but its result lives on the CPU",
        ),
        (said(1, "g[0]", "gpu", '"error"'), "g[0]: you said 'error', but its result lives on the GPU"),
        (
            f"made = dict.fromkeys({list(ch02._MADE)!r}, 'gpu')",
            f"{MADE}: you said 'gpu', but its result lives on the CPU (predictions off: 2 of 5;",
        ),
        # bad input: not a dict, a line edited or left out, a value left as ... or not one of the three words
        (
            "made = ['gpu', 'cpu', 'gpu', 'cpu', 'gpu']",
            "expected a dict: each line of the cell, then 'gpu', 'cpu' or 'error', but got a list",
        ),
        (SOLUTIONS[1].replace('"g[0]"', '"g[0] "'), "made['g[0]'] is missing: keep each line of the cell as a key"),
        (
            said(1, "g[0]", "gpu", "..."),
            "made['g[0]'] is still ...: keep each line of the cell as a key, and say 'gpu', 'cpu' or 'error'",
        ),
        (said(1, "g[0]", "gpu", '"on the GPU"'), "made['g[0]'] is 'on the GPU': keep each line"),
        (said(1, "g[0]", "gpu", "True"), "made['g[0]'] is True: keep each line"),
    ),
    2: (  # a 0-d CPU tensor refused, or followed; any 0-d tensor exempt; the mask not counted; cat moving c
        (
            said(2, "torch.tensor(2.0) * g", "gpu", '"error"'),
            "torch.tensor(2.0) * g: you said 'error', but its result lives on the GPU",
        ),
        (
            said(2, "torch.tensor(2.0) * g", "gpu", '"cpu"'),
            "torch.tensor(2.0) * g: you said 'cpu', but its result lives on the GPU",
        ),
        (
            said(2, "g.sum() + c", "error", '"gpu"'),
            "g.sum() + c: you said 'gpu', but it raises RuntimeError (predictions off: 1 of 6;",
        ),
        (
            said(2, "c.sum() + g.sum()", "gpu", '"error"'),
            "c.sum() + g.sum(): you said 'error', but its result lives on the GPU",
        ),
        (
            said(2, "c.sum() + g.sum()", "gpu", '"cpu"'),
            "c.sum() + g.sum(): you said 'cpu', but its result lives on the GPU",
        ),
        (said(2, MIXED, "error", '"gpu"'), f"{MIXED}: you said 'gpu', but it raises RuntimeError"),
        (
            said(2, "torch.cat([g, c])", "error", '"gpu"'),
            "torch.cat([g, c]): you said 'gpu', but it raises RuntimeError",
        ),
        (said(2, "g[c > 0]", "gpu", '"error"'), "g[c > 0]: you said 'error', but its result lives on the GPU"),
        (  # every line with a CPU tensor in it refused
            said(2, "torch.tensor(2.0) * g", "gpu", '"error"').replace(
                '"c.sum() + g.sum()": "gpu"', '"c.sum() + g.sum()": "error"'
            ),
            "torch.tensor(2.0) * g: you said 'error', but its result lives on the GPU (predictions off: 2 of 6;",
        ),
        ('mixed = "error"', "expected a dict: each line of the cell, then 'gpu', 'cpu' or 'error', but got a str"),
        (
            said(2, "g.sum() + c", "error", '"raises"'),
            "mixed['g.sum() + c'] is 'raises': keep each line of the cell as a key",
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
            "made a tensor on the CPU and moved it (torch.as_tensor()): create it there",
        ),
        (
            ("def zeros_for(t, n):\n    return torch.zeros(n, dtype=t.dtype).to(t.device)"),
            "made a tensor on the CPU and moved it (.to()): create it there",
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
            "11]]) copied a tensor from the GPU to the host (.cpu()): compute where it lives",
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
    1: (  # other spellings of the three words (the device g lives on, a torch.device), a dict built otherwise
        SOLUTIONS[1].replace(': "gpu"', ': "GPU "').replace(': "cpu"', ': "Cpu"'),
        SOLUTIONS[1].replace(': "gpu"', ': "cuda"'),
        SOLUTIONS[1].replace(': "gpu"', ': "meta"'),
        SOLUTIONS[1].replace(': "gpu"', ': torch.device("cuda", 0)').replace(': "cpu"', ': torch.device("cpu")'),
        "made = dict.fromkeys(['torch.zeros_like(g)', 'g.new_ones(2)', 'g[0]'], 'gpu')\n"
        "made |= dict.fromkeys(['torch.zeros(3, dtype=g.dtype)', 'torch.ones(g.shape)'], 'cpu')",
        SOLUTIONS[1] + "\nmade['g.T'] = 'gpu'  # a line of one's own beside them",
    ),
    2: (
        SOLUTIONS[2].replace(': "error"', ': "Error"').replace(': "gpu"', ': "cuda:0"'),
        "import numpy as np\n\n" + SOLUTIONS[2] + "\nmixed = {k: np.str_(v) for k, v in mixed.items()}",
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

#: Round 7's findings: an expanded view
WRONG_ANSWERS[3] += (
    (
        "def zeros_for(t, n):\n    return torch.zeros(1, dtype=t.dtype, device=t.device).expand(n)",
        "returned a view whose elements share one number in memory: make a new tensor",
    ),
)
#: Round 7's right answers: a tensor made with out= on the device (the check's watch once named the CPU)
RIGHT_ANSWERS[3] += (
    "def zeros_for(t, n):\n    out = torch.empty(n, dtype=t.dtype, device=t.device)\n"
    "    return torch.zeros(n, out=out)",
)
RIGHT_ANSWERS[4] += (
    "def scale_rows(x):\n    weights = torch.empty(x.shape[0], device=x.device)\n"
    "    torch.linspace(0.5, 1.5, x.shape[0], out=weights)\n    return x * weights[:, None]",
)
#: Issue 43's attack: an in-place op with a CPU operand (a GPU refuses it; meta let it by), a round trip through the
#: host of a clone or a slice of x, a GPU that is not g's, and torch.device(type, index) where the index is None
WRONG_ANSWERS[4] += (
    (
        "def scale_rows(x):\n    w = torch.linspace(0.5, 1.5, x.shape[0])\n"
        "    y = x.to(torch.promote_types(x.dtype, torch.float32), copy=True)\n    y.mul_(w[:, None])\n    return y",
        "raised RuntimeError (line 4 of your code): Expected all tensors on one device, not meta and cpu",
    ),
    (
        "def scale_rows(x):\n    y = x.to(torch.promote_types(x.dtype, torch.float32), copy=True)\n"
        "    y *= torch.linspace(0.5, 1.5, x.shape[0])[:, None]\n    return y",
        "Expected all tensors on one device, not meta and cpu",
    ),
    (
        "def scale_rows(x):\n    return (x.clone().cpu() * torch.linspace(0.5, 1.5, len(x))[:, None]).to(x.device)",
        "copied a tensor from the GPU to the host (.cpu()): compute where it lives",
    ),
    (
        "def scale_rows(x):\n    return (x[:].cpu() * torch.linspace(0.5, 1.5, len(x))[:, None]).to(x.device)",
        "copied a tensor from the GPU to the host (.cpu()): compute where it lives",
    ),
)
WRONG_ANSWERS[2] += ((said(2, "g[c > 0]", "gpu", '"cuda:1"'), "mixed['g[c > 0]'] is 'cuda:1'"),)
RIGHT_ANSWERS[4] += (
    "def scale_rows(x):\n    dev = torch.device(x.device.type, x.device.index)\n"
    "    return x * torch.linspace(0.5, 1.5, x.shape[0], device=dev)[:, None]",
    "def scale_rows(x):\n    w = torch.linspace(0.5, 1.5, x.shape[0], device=x.device)\n"
    "    y = x.to(torch.promote_types(x.dtype, torch.float32), copy=True)\n    y.mul_(w[:, None])\n    return y",
)
#: Issue 43's attack, round 2: CPU weights put into a GPU buffer through a tensor index, or multiplied in by a matmul
#: (meta checks neither; a GPU refuses both)
WRONG_ANSWERS[4] += (
    (
        "def scale_rows(x):\n    n = x.shape[0]\n    w = torch.empty(n, device=x.device)\n"
        "    w[torch.arange(n)] = torch.linspace(0.5, 1.5, n)\n    return x * w[:, None]",
        "Expected all tensors on one device, not meta and cpu (x[i] = ...)",
    ),
    (
        "def scale_rows(x):\n    weights = torch.linspace(0.5, 1.5, x.shape[0])\n"
        "    d = torch.promote_types(x.dtype, weights.dtype)\n    return (x.to(d).T @ torch.diag(weights).to(d)).T",
        "Expected all tensors on one device, not meta and cpu",
    ),
)
RIGHT_ANSWERS[3] += ("def zeros_for(t, n):\n    z = t.new_ones(n)\n    z[torch.arange(n)] = 0\n    return z",)
RIGHT_ANSWERS[4] += (
    "def scale_rows(x):\n    n = x.shape[0]\n    w = torch.empty(n, device=x.device)\n"
    "    w[:] = torch.linspace(0.5, 1.5, n)\n    return x * w[:, None]",
)
#: Round 3: a list index is an advanced index (index_put_, which takes a GPU tensor's values from the GPU only), and a
#: GPU op takes one 0-d CPU tensor at most
WRONG_ANSWERS[4] += (
    (
        "def scale_rows(x):\n    n = x.shape[0]\n    w = torch.empty(n, device=x.device)\n"
        "    w[list(range(n))] = torch.linspace(0.5, 1.5, n)\n    return x * w[:, None]",
        "Expected all tensors on one device, not meta and cpu (x[i] = ...)",
    ),
    (
        "def scale_rows(x):\n    t = torch.linspace(0, 1, x.shape[0], device=x.device)\n"
        "    return x * torch.lerp(torch.tensor(0.5), torch.tensor(1.5), t)[:, None]",
        "Expected all tensors on one device, not meta and cpu (torch.lerp())",
    ),
)
RIGHT_ANSWERS[3] += ("def zeros_for(t, n):\n    return t.new_zeros(n).view_as(torch.empty(n))",)
RIGHT_ANSWERS[4] += (
    "def scale_rows(x):\n    w = torch.linspace(0.5, 1.5, x.shape[0], device=x.device)\n"
    "    y = torch.empty(x.shape, dtype=torch.result_type(x, torch.ones(1)), device=x.device)\n"
    "    for i in range(x.shape[0]):\n        y[torch.tensor(i)] = x[i] * w[i]\n    return y",
    "def scale_rows(x):\n    n = x.shape[0]\n"
    "    w = torch.index_put(torch.empty(n, device=x.device), (torch.arange(n),),"
    " torch.linspace(0.5, 1.5, n, device=x.device))\n    return x * w[:, None]",
)
