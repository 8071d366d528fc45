"""Chapter 15's typical wrong answers, by question number (see the package's docstring)."""

import atexit
import shutil
import tempfile
from pathlib import Path

from helpers.exercises.solutions.ch15 import SOLUTIONS

from ..gpu.chapter_files import import_written_file

#: Question 2's check trains the chapter's own model: its files, written as section 1 and 2 write them.
_WORK = Path(tempfile.mkdtemp(prefix="ch15-"))
atexit.register(shutil.rmtree, _WORK, True)
import_written_file("15_one_model_every_lesson.ipynb", "gpt", _WORK)
import_written_file("15_one_model_every_lesson.ipynb", "ladder", _WORK)

_Q1 = SOLUTIONS[1]

#: Typical wrong answers to each question, by number, each with words its verdict must contain (the
#: message a learner who wrote it is told).
WRONG_ANSWERS: dict[int, tuple[tuple[str, str], ...]] = {
    1: (
        # attack round 21: only the first rows, as many as one ladder had: the DDP rung comes after more
        (_Q1.replace("rows[1:]", "rows[1:8]"), "expected 'sdpa'"),
        # every rung counted, kept or not: a rung that lost the guard or slowed the run gained nothing
        (_Q1.replace("if r['kept']", ""), "a rung that was not kept gained nothing: skip it"),
        # no noise: a gain inside the noise is named as the best
        (_Q1.replace(" and best['over_last'] - 1 > noise", ""), "a gain within the noise is no gain"),
        # the fastest configuration overall, not the largest single step
        (
            "def best_rung(rows, noise):\n    total, best, name = 1.0, 1.0, None\n    for r in rows[1:]:\n"
            "        if r['kept']:\n            total *= r['over_last']\n"
            "            if total > best:\n                best, name = total, r['name']\n"
            "    return name if best - 1 > noise else None",
            "the rung you named is the fastest overall; the question asks whose own step gained most",
        ),
        # the gain compared with the noise as a ratio, not a share
        (_Q1.replace("best['over_last'] - 1 > noise", "best['over_last'] > noise"), "expected None"),
        ("def best_rung(rows, noise):\n    return rows[-1]['name']", "returned 'sdpa'; expected 'autocast'"),
        # attack round 3: the guard in place of kept (a same-code switch keeps the guard and is no rung); the DDP row
        (_Q1.replace("r['kept']", "r['guard']"), "returned 'tf32'; expected 'sdpa'"),
        (
            _Q1.replace("if r['kept']", "if r['kept'] and 'DDP' not in r['name']"),
            "returned 'fused'; expected 'DDP, 2 ranks'",
        ),
        # attack round 7: the DDP row left out by its other keys; gains compared after rounding
        (_Q1.replace("if r['kept']", "if r['kept'] and r.get('devices', 1) == 1"), "expected 'DDP, 2 ranks'"),
        (_Q1.replace("if r['kept']", "if r['kept'] and r.get('switch') != 'ddp'"), "expected 'DDP, 2 ranks'"),
        (_Q1.replace("key=lambda r: r['over_last']", "key=lambda r: round(r['over_last'], 1)"), "expected 'autocast'"),
        # attack round 8: the gain and the noise rounded before they are compared
        (
            _Q1.replace("best['over_last'] - 1 > noise", "round(best['over_last'] - 1, 2) > round(noise, 2)"),
            "expected 'sdpa'",
        ),
        # attack round 1: the first kept rung beyond the noise, not the largest; >= at the noise; the smallest gain
        (
            "def best_rung(rows, noise):\n    for r in rows[1:]:\n"
            "        if r['kept'] and r['over_last'] - 1 > noise:\n            return r['name']\n    return None",
            "returned 'tf32'; expected 'autocast'",
        ),
        (_Q1.replace("- 1 > noise", "- 1 >= noise"), "a gain equal to the noise is no gain either"),
        (
            "def best_rung(rows, noise):\n"
            "    kept = [r for r in rows[1:] if r['kept'] and r['over_last'] - 1 > noise]\n"
            "    top = min(kept, key=lambda r: r['over_last'], default=None)\n    return top and top['name']",
            "returned 'sdpa'; expected 'autocast'",  # not named: tests/unit/test_messages_ch15.py
        ),
        ("def best_rung(rows, noise):\n    return 3", "to return a rung's name or None, but got an int"),
        # attack round 9: kept first, then speed, as one key (no rung kept: the fastest lost one); finer rounding;
        # a log gain; a switch that ran the same code counted; the ladder read from its second rung
        (
            "def best_rung(rows, noise):\n    best = max(rows[1:], key=lambda r: (r['kept'], r['over_last']), "
            "default=None)\n    return best['name'] if best and best['over_last'] - 1 > noise else None",
            "returned 'autocast'; expected None: a rung that was not kept gained nothing",
        ),
        (_Q1.replace("best['over_last'] - 1 > noise", "round(best['over_last'] - 1, 3) > round(noise, 3)"), "'sdpa'"),
        (_Q1.replace("key=lambda r: r['over_last']", "key=lambda r: round(r['over_last'], 2)"), "'autocast'"),
        ("import math\n" + _Q1.replace("best['over_last'] - 1 > noise", "math.log(best['over_last']) > noise"), "sdpa"),
        (_Q1.replace("if r['kept']", "if r['kept'] or r['inert']"), "returned 'tf32'; expected 'sdpa'"),
        (_Q1.replace("rows[1:]", "rows[2:]"), "returned 'pinned'; expected 'tf32'"),
        # attack round 15: the best gain's name looked up among every rung, a lost one with the same speed first
        (
            "def best_rung(rows, noise):\n    gains = [r['over_last'] - 1 for r in rows[1:] if r['kept']]\n"
            "    if not gains or max(gains) <= noise:\n        return None\n"
            "    return next(r['name'] for r in rows[1:] if r['over_last'] - 1 == max(gains))",
            "returned 'sdpa'; expected 'fused'",
        ),
        # attack round 10: the gain rounded to one decimal before it meets the noise
        (
            _Q1.replace("best['over_last'] - 1 > noise", "round(best['over_last'], 1) - 1 > noise"),
            "returned None; expected 'fused'",
        ),
    ),
}

#: Right answers written otherwise than the solution.
RIGHT_ANSWERS: dict[int, tuple[str, ...]] = {
    1: (
        # the plain run counted too: its gain is 0, never beyond the noise
        SOLUTIONS[1].replace("rows[1:]", "rows"),
        "def best_rung(rows, noise):\n    best = None\n    for row in rows[1:]:\n"
        "        if row['kept'] and row['over_last'] - 1 > noise:\n"
        "            if best is None or row['over_last'] > best['over_last']:\n"
        "                best = row\n    return best and best['name']",
        "def best_rung(rows, noise):\n    gains = {r['name']: r['over_last'] - 1 for r in rows[1:] if r['kept']}\n"
        "    name = max(gains, key=gains.get, default=None)\n    return name if name and gains[name] > noise else None",
        # the size of a change, up or down, as its gain: a kept rung is always faster, so it is the same
        _Q1.replace("r['over_last']", "abs(r['over_last'] - 1)").replace(
            "best['over_last'] - 1", "abs(best['over_last'] - 1)"
        ),
    ),
}

_Q2 = SOLUTIONS[2]
_HEAD = "def my_rung(model):\n"
_returns_model = lambda line, said: (f"{_HEAD}    {line}\n    return model", said)  # one line, then the model
_ATTENTION = (  # attention written out for a rung, with a mistake put in below
    "import types\n"
    "def forward(self, x):\n    b, t, c = x.shape\n"
    "    q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in self.qkv(x).split(c, dim=2))\n"
    "    y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
    "    return self.out(y.transpose(1, 2).reshape(b, t, c))\n"
    + _HEAD
    + "    for block in model.blocks:\n        block.attention.forward = types.MethodType(forward, block.attention)\n"
    "    return model"
)
_AUTOCAST = "    def forward(self, x):\n        with torch.autocast('cpu', torch.bfloat16):\n"
_AUTOCAST += "            return self.m(x).float()\n"  # bfloat16 products, the logits handed back in float32
_WRAP = "class Wrap(torch.nn.Module):\n    def __init__(self, m):\n        super().__init__()\n        self.m = m\n\n"
WRONG_ANSWERS[2] = (
    # a dropout added: it computes another function
    (_HEAD + "    return torch.nn.Sequential(model, torch.nn.Dropout(0.9))", "it computes another function"),
    # every block deleted (review round 2): a bigram model, within the guard at the check's size
    _returns_model("model.blocks = torch.nn.Sequential()", "it computes another function"),
    # attention without its causal mask (attack round 2): it sees the next character
    (_ATTENTION.replace(", is_causal=True", ""), "it computes another function"),
    # half the batch trained, its outputs copied to the other half (attack round 2)
    (
        _WRAP + "    def forward(self, x):\n        h = max(1, x.shape[0] // 2)\n        y = self.m(x[:h])\n"
        "        return torch.cat([y, y.detach()])[: x.shape[0]]\n\n" + _HEAD + "    return Wrap(model)",
        "for a batch; the model gives a torch.float32 tensor of shape (3, 32, 97)",
    ),
    # logits halved in a wrapper: the yardstick reads the model, training trained the wrapper (attack round 2)
    (
        _WRAP + "    def forward(self, x):\n        return self.m(x) * 0.5\n\n" + _HEAD + "    return Wrap(model)",
        "% off",
    ),
    # attack round 3: attention scaled by 1/d, not 1/sqrt(d); logits 4 % hotter; half the batch after the first call;
    # a zero-initialised extra layer; the class's forward patched; the loss function patched
    (
        _ATTENTION.replace("is_causal=True)", "is_causal=True, scale=1 / q.shape[-1])"),
        "so it computes another function",
    ),
    (
        _WRAP + "    def forward(self, x):\n        return self.m(x) * 1.04\n\n" + _HEAD + "    return Wrap(model)",
        "4.0% off",
    ),
    (
        _WRAP.replace("self.m = m\n", "self.m, self.calls = m, 0\n")
        + "    def forward(self, x):\n        self.calls += 1\n"
        "        if self.calls == 1:\n            return self.m(x)\n"
        "        y = self.m(x[: max(1, len(x) // 2)])\n        return torch.cat([y, y.detach()])[: len(x)]\n\n"
        + _HEAD
        + "    return Wrap(model)",
        "call 2 of your rung",
    ),
    (
        _HEAD + "    model.extra = torch.nn.Linear(model.norm.normalized_shape[0], model.norm.normalized_shape[0])\n"
        "    torch.nn.init.zeros_(model.extra.weight)\n    torch.nn.init.zeros_(model.extra.bias)\n    return model",
        "my_rung gave the model parameters not its own (extra.bias, extra.weight)",
    ),
    (
        _ATTENTION.replace(
            "block.attention.forward = types.MethodType(forward, block.attention)",
            "type(block.attention).forward = forward",
        ).replace(", is_causal=True", ""),
        "my_rung changed Attention.forward",
    ),
    # the class's forward patched with the same function: the check still sees the class changed
    (
        _ATTENTION.replace(
            "block.attention.forward = types.MethodType(forward, block.attention)",
            "type(block.attention).forward = forward",
        ),
        "my_rung changed Attention.forward",
    ),
    (
        _HEAD + "    import functools\n"
        "    F = torch.nn.functional\n"
        "    F.cross_entropy = functools.partial(F.cross_entropy, label_smoothing=0.01)\n"
        "    return model",
        "my_rung changed torch.nn.functional.cross_entropy",
    ),
    # the blocks frozen: fewer gradients to compute, but they never train
    _returns_model(
        "model.blocks.requires_grad_(False)",
        "blocks.0.norm1.weight, blocks.0.norm1.bias, blocks.0.attention.qkv.weight get no gradient",
    ),
    # a copy trained in place of the model: the optimizer steps weights that no forward uses
    (
        _HEAD + "    import copy\n    return copy.deepcopy(model)",
        "get no gradient or one 10 % off: detached, replaced, or another backward?",
    ),
    # the chapter's modules or torch's state changed (attack round 2): the guard, the batches, the threads, AdamW
    (_HEAD + "    import ladder\n    ladder.GUARD = 1.0\n    return model", "my_rung changed ladder.GUARD"),
    (
        _HEAD + "    import gpt, ladder\n"
        "    ladder.batches = lambda d, s, b, k, seed=1: gpt.batches(d, s, max(1, b // 4), k, seed)\n    return model",
        "my_rung changed ladder.batches",
    ),
    _returns_model("torch.set_num_threads(torch.get_num_threads() + 1)", "thread count"),
    _returns_model("torch.optim.AdamW = torch.optim.SGD", "my_rung changed torch.optim.AdamW"),
    # review round 4: torch's settings flipped by the rung, put back by the check
    _returns_model("torch.set_float32_matmul_precision('medium')", "the float32 matmul precision"),
    _returns_model("torch.backends.mkldnn.enabled = False", "my_rung changed torch.backends.mkldnn.enabled"),
    _returns_model("torch.use_deterministic_algorithms(True)", "deterministic algorithms"),
    _returns_model("torch._dynamo.config.cache_size_limit = 64", "my_rung changed torch._dynamo.config"),
    # review and attack round 5: Inductor's config, an attention backend switched off, anomaly mode, cuDNN's TF32
    (
        _HEAD + "    import torch._inductor.config as ic\n"
        "    ic.coordinate_descent_tuning = not ic.coordinate_descent_tuning\n    return model",
        "my_rung changed torch._inductor.config",
    ),
    _returns_model("torch.backends.cuda.enable_math_sdp(False)", "my_rung changed math attention"),
    _returns_model("torch.autograd.set_detect_anomaly(True)", "my_rung changed anomaly detection"),
    _returns_model("torch.backends.cudnn.allow_tf32 = False", "torch.backends.cudnn.allow_tf32"),
    # nothing returned; float16 weights on the CPU
    (_HEAD + "    model.train()", "my_rung(model) returned None; return what train should call (the model, changed)"),
    (_HEAD + "    return model.half()", "(values or dtype): a rung leaves the weights as they are"),
    # attack round 6: one compiled block shared by every position (the check's model has two blocks)
    (
        _HEAD + "    shared = torch.compile(model.blocks[0])\n    for i in range(len(model.blocks)):\n"
        "        model.blocks[i] = shared\n    return model",
        "so it computes another function",
    ),
    (
        _HEAD
        + "    fast = model.blocks[0].forward\n    for b in model.blocks:\n        b.forward = fast\n    return model",
        "so it computes another function",
    ),
    # torch's classes patched: the model's layers, the optimizer, the scaler, autograd
    (
        _HEAD + "    torch.nn.LayerNorm.forward = lambda self, x: x * self.weight + self.bias\n    return model",
        "my_rung changed LayerNorm.forward",
    ),
    (
        _HEAD + "    F = torch.nn.functional\n    torch.nn.LayerNorm.forward = lambda self, x: F.layer_norm(\n"
        "        x, self.normalized_shape, self.weight, self.bias, self.eps)\n    return model",
        "my_rung changed LayerNorm.forward",
    ),
    _returns_model("torch.optim.Optimizer.zero_grad = lambda self, set_to_none=True: None", "Optimizer.zero_grad"),
    _returns_model("torch.amp.GradScaler.update = lambda self, new_scale=None: None", "GradScaler.update"),
    _returns_model("torch.autograd.backward = lambda *a, **k: None", "my_rung changed torch.autograd.backward"),
    # global switches: denormals flushed, the garbage collector off
    _returns_model("torch.set_flush_denormal(True)", "my_rung changed flushing denormals"),
    (_HEAD + "    import gc\n    gc.disable()\n    return model", "my_rung changed Python's garbage collector"),
    # the batch written in place; a gradient zeroed on arrival (weight decay alone moves the weights)
    (
        _WRAP
        + "    def forward(self, x):\n        x[:, ::2] = 5\n        return self.m(x)\n\n"
        + _HEAD
        + "    return Wrap(model)",
        "call 1 of your rung (a (3, 32) batch) is",
    ),
    _returns_model(
        "model.positions.weight.register_hook(torch.zeros_like)",
        "positions.weight get no gradient or one 10 % off",
    ),
    _returns_model(
        "model.to(torch.bfloat16)", "my_rung changed tokens.weight, positions.weight, blocks.0.norm1.weight"
    ),
    # attack round 8: the weights rounded to bfloat16 but kept float32 (within 1 % of the outputs)
    (
        _HEAD
        + "    with torch.no_grad():\n        for p in model.parameters():\n            p.copy_(p.bfloat16().float())\n"
        "    return model",
        "(values or dtype): a rung leaves the weights as they are",
    ),
    # attack round 7: the input embedding detached (the tied output layer still trains it), a mask sized for the
    # chapter's block only; torch's defaults changed (the course's checker sets them back and says so)
    (
        _WRAP + "    def forward(self, x):\n        m = self.m\n"
        "        h = m.tokens(x).detach() + m.positions(torch.arange(x.shape[1]))\n"
        "        return (m.norm(m.blocks(h)) @ m.tokens.weight.T)[..., :97]\n\n" + _HEAD + "    return Wrap(model)",
        "tokens.weight get no gradient or one 10 % off",
    ),
    (
        _ATTENTION.replace("is_causal=True", "attn_mask=torch.ones(32, 32, dtype=torch.bool).tril()"),
        "called on a (8, 48) batch, raised RuntimeError",
    ),
    _returns_model("torch.set_default_dtype(torch.float64)", "your code changed torch's default dtype"),
    # the forward under no_grad: no gradient reaches the weights
    (
        _WRAP
        + "    def forward(self, x):\n        with torch.no_grad():\n            return self.m(x)\n\n"
        + _HEAD
        + "    return Wrap(model)",
        "the backward pass through your rung raised RuntimeError: element 0 of tensors does not require grad",
    ),
    # a shorter context: the output no longer matches
    (_HEAD + "    return lambda idx: model(idx[:, -16:])", "gave a torch.float32 tensor of shape (3, 16, 97)"),
    # attack round 9: LayerNorm's eps raised (it matters at small activations); weights replaced by new tensors
    # in bfloat16, or rounded to it; switches of torch's newer precision API; Adam, AdamW's base class, patched
    (
        _HEAD + "    for m in model.modules():\n        if isinstance(m, torch.nn.LayerNorm):\n"
        "            m.eps = 1e-3\n    return model",
        "so it computes another function",
    ),
    (
        _HEAD + "    for mod in model.modules():\n        for n, p in list(mod.named_parameters(recurse=False)):\n"
        "            setattr(mod, n, torch.nn.Parameter(p.detach().bfloat16().float()))\n    return model",
        "my_rung changed tokens.weight, positions.weight, blocks.0.norm1.weight (values or dtype)",
    ),
    _returns_model("torch.backends.fp32_precision = 'tf32'", "my_rung changed torch.backends.fp32_precision"),
    _returns_model("torch.backends.mkldnn.fp32_precision = 'bf16'", "torch.backends.mkldnn.fp32_precision"),
    _returns_model("torch.backends.cuda.matmul.allow_fp16_accumulation = True", "allow_fp16_accumulation"),
    _returns_model("torch.compiler.config.force_disable_caches ^= True", "my_rung changed torch.compiler.config"),
    (
        _HEAD + "    import functools\n"
        "    torch.optim.Adam.__init__ = functools.partialmethod(torch.optim.Adam.__init__, fused=True)\n"
        "    return model",
        "my_rung changed Adam.__init__",
    ),
    # attack round 10: logits in another dtype (autocast left open, float64); the head count of the chapter's sizes;
    # the clock (ladder's) and math.sqrt (gpt's) replaced; statistics under no_grad; a parameter added; sparse
    # gradients (positions: tokens share the head's, so their gradient is dense), which AdamW refuses
    (_WRAP + _AUTOCAST.replace(".float()", "") + _HEAD + "    return Wrap(model)", "a torch.bfloat16 tensor"),
    (_HEAD + "    return lambda idx: model(idx).double()", "a torch.float64 tensor of shape (3, 32, 97)"),
    (_ATTENTION.replace("self.heads", "2"), "it computes another function"),
    _returns_model("import time; time.perf_counter = time.process_time", "my_rung changed time.perf_counter"),
    _returns_model("import math; math.sqrt = lambda x: x**0.5", "my_rung changed math.sqrt"),
    (
        "import types\ndef norm(self, x):\n    with torch.no_grad():\n"
        "        mu, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)\n"
        "    return (x - mu) / torch.sqrt(var + self.eps) * self.weight + self.bias\n"
        + _HEAD
        + "    for block in model.blocks:\n        block.norm1.forward = types.MethodType(norm, block.norm1)\n"
        "    return model",
        "get no gradient or one 10 % off: detached, replaced, or another backward?",
    ),
    (
        _HEAD + "    model.temperature = torch.nn.Parameter(torch.ones(()))\n"
        "    model.register_forward_hook(lambda m, args, out: out * m.temperature)\n    return model",
        "my_rung gave the model parameters not its own (temperature)",
    ),
    _returns_model("model.positions.sparse = True", "sparse gradients"),
    # attack round 11: a copy of the positions kept, or outputs kept by input, stale once the weights change; the
    # output not cut back to 97 columns on a padded model; torch.compile replaced for everyone; a warm-up's gradients
    (
        "class Stale(torch.nn.Module):\n    def __init__(self, m):\n        super().__init__()\n"
        "        self.m, self.pos = m, {}\n\n    def forward(self, idx):\n        m, t = self.m, idx.shape[1]\n"
        "        if t not in self.pos:\n            self.pos[t] = m.positions.weight[:t].clone()\n"
        "        x = m.tokens(idx) + self.pos[t]\n        return (m.norm(m.blocks(x)) @ m.tokens.weight.T)[..., :97]\n"
        + _HEAD
        + "    return Stale(model)",
        "with new weights in the model, call 5 of your rung",
    ),
    (
        "class Memo(torch.nn.Module):\n    def __init__(self, m):\n        super().__init__()\n"
        "        self.m, self.seen = m, {}\n\n    def forward(self, idx):\n        key = idx.numpy().tobytes()\n"
        "        if key not in self.seen:\n            self.seen[key] = self.m(idx)\n        return self.seen[key]\n"
        + _HEAD
        + "    return Memo(model)",
        "so it computes another function, or old weights",
    ),
    (
        _WRAP + "    def forward(self, idx):\n        m = self.m\n"
        "        x = m.tokens(idx) + m.positions(torch.arange(idx.shape[1]))\n"
        "        return m.norm(m.blocks(x)) @ m.tokens.weight.T\n" + _HEAD + "    return Wrap(model)",
        "a torch.float32 tensor of shape (3, 32, 128)",
    ),
    _returns_model(
        "import functools; torch.compile = functools.partial(torch.compile, mode='max-autotune-no-cudagraphs')",
        "my_rung changed torch.compile",
    ),
    _returns_model("model(torch.randint(97, (2, 32))).sum().backward()", "my_rung left gradients in tokens.weight"),
    # attack round 12: the matmul precision switched inside each call, where train's own resets would hide it
    (
        _WRAP
        + "    def forward(self, x):\n        torch.set_float32_matmul_precision('medium')\n        return self.m(x)\n"
        + _HEAD
        + "    return Wrap(model)",
        "the float32 matmul precision (in a forward): a rung changes the model",
    ),
    # attack round 13: a mistake only on the SDPA path; a copy of the weights renewed every other call; the weights
    # changed by each call; a class rebound in torch.nn, a built-in replaced; settings set to the value in force
    (
        _ATTENTION.replace(
            "    y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)\n",
            "    if self.sdpa:\n        y = torch.nn.functional.scaled_dot_product_attention(q, k, v)\n"
            "    else:\n        s = (q @ k.transpose(-2, -1)) / k.shape[-1] ** 0.5\n"
            "        y = s.masked_fill(~self.causal[:t, :t], float('-inf')).softmax(dim=-1) @ v\n",
        ),
        "so it computes another function",
    ),
    (
        _WRAP.replace("self.m = m", "self.m, self.n, self.w = m, 0, None")
        + "    def forward(self, idx):\n        if self.n % 2 == 0:\n"
        "            self.w = {k: p.clone() for k, p in self.m.named_parameters()}\n"
        "        self.n += 1\n        return torch.func.functional_call(self.m, self.w, (idx,))\n"
        + _HEAD
        + "    return Wrap(model)",
        "with new weights in the model, call 6 of your rung",
    ),
    (
        _WRAP + "    def forward(self, idx):\n        with torch.no_grad():\n"
        "            for p in self.m.parameters():\n                p.copy_(p.bfloat16())\n"
        "        return self.m(idx)\n" + _HEAD + "    return Wrap(model)",
        "a call of what my_rung returned changed tokens.weight",
    ),
    _returns_model("torch.nn.GELU = torch.nn.ReLU", "my_rung changed torch.nn.GELU"),
    _returns_model("import builtins; builtins.sorted = lambda v, **k: list(v)", "my_rung changed builtins.sorted"),
    _returns_model("import torch.optim.adamw as m; m.adamw = lambda *a, **k: None", "changed torch.optim.adamw.adamw"),
    _returns_model("torch.compiler.config.force_disable_caches = False", "my_rung changed torch.compiler.config"),
    _returns_model("torch.set_float32_matmul_precision('highest')", "my_rung changed"),
    # review round 14: a tensor operator replaced (every later product scaled, the check's reference too)
    _returns_model(
        "old = torch.Tensor.__matmul__; torch.Tensor.__matmul__ = lambda a, b: old(a, b) * 1.001",
        "my_rung changed Tensor.__matmul__",
    ),
    # attack round 14: positions made on the CPU (a GPU's model is not there); a mask of -1e9, past float16's range;
    # TF32 switched on, said as the check's verdict, not as an error of training
    (
        _WRAP + "    def forward(self, idx):\n        m = self.m\n"
        "        x = m.tokens(idx) + m.positions(torch.arange(idx.shape[1]))\n"
        "        return (m.norm(m.blocks(x)) @ m.tokens.weight.T)[..., :97]\n" + _HEAD + "    return Wrap(model)",
        "torch.embedding: a CPU tensor met the model's (a GPU's here), or the host read one of its tensors (if, "
        "assert, print): make tensors with device=, read none back (each read waits)",
    ),
    (
        _ATTENTION.replace(
            "    y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)\n",
            "    s = (q @ k.transpose(-2, -1)) / k.shape[-1] ** 0.5\n"
            "    y = s.masked_fill(~self.causal[:t, :t], -1e9).softmax(dim=-1) @ v\n",
        ),
        "under float16 autocast (a T4's), SDPA on its math path, raised RuntimeError",
    ),
    _returns_model("torch.set_float32_matmul_precision('high')", "Not yet: my_rung changed"),
    # attack round 15: a wrapper's own final norm, which the optimizer never sees
    (
        _WRAP.replace("self.m = m", "self.m, self.norm = m, torch.nn.LayerNorm(72)")
        + "    def forward(self, idx):\n        m = self.m\n"
        "        x = m.tokens(idx) + m.positions(torch.arange(idx.shape[1], device=idx.device))\n"
        "        return (self.norm(m.blocks(x)) @ m.tokens.weight.T)[..., :97]\n" + _HEAD + "    return Wrap(model)",
        "so it computes another function, or with weights not the model's",
    ),
    # attack round 17: tensors on the CPU by name, or made in my_rung before any call (the model is already on its
    # device then), and a trace of the model on a CPU example; the default device changed in my_rung
    (
        _WRAP + "    def forward(self, idx):\n        m = self.m\n"
        "        x = m.tokens(idx) + m.positions(torch.arange(idx.shape[1], device='cpu'))\n"
        "        return (m.norm(m.blocks(x)) @ m.tokens.weight.T)[..., :97]\n" + _HEAD + "    return Wrap(model)",
        "torch.embedding: a CPU tensor met the model's (a GPU's here)",
    ),
    (
        _ATTENTION.replace("is_causal=True", "attn_mask=self.mask[:t, :t]").replace(
            "    for block in model.blocks:\n",
            "    for block in model.blocks:\n"
            "        block.attention.register_buffer('mask', torch.ones(64, 64).tril().bool())\n",
        ),
        "torch.scaled_dot_product_attention: a CPU tensor met the model's",
    ),
    (
        _HEAD + "    return torch.jit.trace(model, torch.zeros(8, 32, dtype=torch.long))",
        "torch.embedding: a CPU tensor met the model's",
    ),
    _returns_model("torch.set_default_device(model.tokens.weight.device)", "changed torch's default device"),
    # review round 18: the model as it was is no rung; a forward hook added is a change (RIGHT_ANSWERS)
    (_HEAD + "    return model", "my_rung(model) returned the model as it was: a rung changes how it runs"),
    _returns_model("model.train()", "my_rung(model) returned the model as it was"),
    # attack round 18: the model or a forward's tensors taken to the host (a GPU waits for the copy, or fails when a
    # CPU tensor meets the model's); the check's stand-in device refuses the copy, so the call stops there
    (
        _HEAD + "    return model.cpu()",
        ".cpu(): a CPU tensor met the model's (a GPU's here), or the host read one of its tensors",
    ),
    _returns_model(
        "model.to(torch.device('cpu'))",
        ".to(): a CPU tensor met the model's (a GPU's here), or the host read one of its tensors",
    ),
    (
        _HEAD + "    return lambda idx: model(idx.cpu()).to(idx.device)",
        ".cpu(): a CPU tensor met the model's (a GPU's here), or the host read one of its tensors",
    ),
    (
        _HEAD + "    return lambda idx: model(idx).cpu()",
        ".cpu(): a CPU tensor met the model's (a GPU's here), or the host read one of its tensors",
    ),
    (
        _HEAD + "    return lambda idx: model(torch.tensor(idx.tolist()))",
        ".tolist(): a CPU tensor met the model's",
    ),
    # attack round 21: the head size or the scale written as this machine's (16): other sizes have other heads
    (
        _ATTENTION.replace("z.view(b, t, self.heads, c // self.heads)", "z.view(b, t, c // 16, 16)"),
        "raised RuntimeError",
    ),
    (_ATTENTION.replace("is_causal=True", "is_causal=True, scale=0.25"), "so it computes another function"),
    # attack round 22: a mask made once at this machine's length (32): longer sequences do not fit it
    (
        _ATTENTION.replace(
            "import types\n", "import types\nMASK = torch.ones(32, 32, dtype=torch.bool).tril()\n"
        ).replace("is_causal=True", "attn_mask=MASK[:t, :t].to(x.device)"),
        "called on a (8, 48) batch, raised RuntimeError",
    ),
    # attack round 20: a tensor printed or turned into a string each call (a GPU copies it to the host and waits);
    # a part that runs only when the length divides by 16; a causal mask passed with is_causal=True, which torch's
    # docs say raises (its math path does; the CPU's flash kernel let it through)
    (
        _WRAP + "    def forward(self, idx):\n        out = self.m(idx)\n        self.last = str(out.amax())\n"
        "        return out\n" + _HEAD + "    return Wrap(model)",
        "repr(): a CPU tensor met the model's (a GPU's here), or the host read one of its tensors",
    ),
    (
        "class Chunked(torch.nn.Module):\n    def __init__(self, mlp):\n        super().__init__()\n"
        "        self.mlp = mlp\n\n    def forward(self, x):\n        b, t, c = x.shape\n"
        "        return self.mlp(x.reshape(b * (t // 16), 16, c)).reshape(b, t, c)\n"
        + _HEAD
        + "    for block in model.blocks:\n        block.mlp = Chunked(block.mlp)\n    return model",
        "called on a (3, 17) batch, raised RuntimeError",
    ),
    (
        _ATTENTION.replace(
            "is_causal=True", "attn_mask=torch.ones(t, t, dtype=torch.bool, device=x.device).tril(), is_causal=True"
        ),
        "raised RuntimeError (line 5 of your code)",  # the first call (newer torch), else the math path
    ),
)
RIGHT_ANSWERS[2] = (
    # a function around the model
    _HEAD + "    return lambda idx: model(idx)",
    # attention written out again, the same function; the blocks compiled with a backend that compiles nothing
    _ATTENTION,
    _HEAD + "    model.blocks = torch.compile(model.blocks, backend='eager')\n    return model",
    # attack round 20: each block compiled whole (fullgraph=True), which the check's eager calls must not refuse
    _HEAD + "    for block in model.blocks:\n        block.compile(backend='eager', fullgraph=True)\n    return model",
    # attack round 4: the vocabulary padded, a parameter replaced by a padded copy under its own name
    _HEAD + "    return model.pad_vocabulary()",
    # SDPA switched on by hand, and GPT-2's tanh GELU (the same function to the check's tolerance)
    _HEAD + "    for block in model.blocks:\n        block.attention.sdpa = True\n    return model",
    _HEAD
    + "    for block in model.blocks:\n        block.mlp[1] = torch.nn.GELU(approximate='tanh')\n    return model",
    # attack round 10: bfloat16 autocast around the model, the logits handed back in float32
    _WRAP + _AUTOCAST + _HEAD + "    return Wrap(model)",
    # attack round 12: TF32 allowed inside each call and put back before it returns
    _WRAP + "    def forward(self, x):\n        old = torch.get_float32_matmul_precision()\n"
    "        torch.set_float32_matmul_precision('high')\n        try:\n            return self.m(x)\n"
    "        finally:\n            torch.set_float32_matmul_precision(old)\n" + _HEAD + "    return Wrap(model)",
    # attack round 14: positions made on the input's device; a scalar tensor made on the CPU, which any device takes
    _WRAP + "    def forward(self, idx):\n        m = self.m\n"
    "        x = m.tokens(idx) + m.positions(torch.arange(idx.shape[1], device=idx.device))\n"
    "        return (m.norm(m.blocks(x)) @ m.tokens.weight.T)[..., :97] / torch.sqrt(torch.tensor(1.0))\n"
    + _HEAD
    + "    return Wrap(model)",
    _WRAP + "    def forward(self, idx):\n        m = self.m\n"
    "        x = m.tokens(idx) + m.positions(torch.arange(idx.shape[1]).to(idx.device))\n"
    "        return (m.norm(m.blocks(x)) @ m.tokens.weight.T)[..., :97]\n" + _HEAD + "    return Wrap(model)",
    # review round 18: a forward hook (here a no-op): the model changed, and measured like any rung
    _HEAD + "    model.register_forward_hook(lambda m, args, out: out)\n    return model",
    # attack round 17: moved with .to(tensor) and .type_as(tensor), which take the tensor's device (and dtype)
    _WRAP + "    def forward(self, idx):\n        m = self.m\n"
    "        x = m.tokens(idx) + m.positions(torch.arange(idx.shape[1]).to(idx))\n"
    "        return (m.norm(m.blocks(x)) @ m.tokens.weight.T)[..., :97]\n" + _HEAD + "    return Wrap(model)",
    _WRAP + "    def forward(self, idx):\n        m = self.m\n"
    "        x = m.tokens(idx) + m.positions(torch.arange(idx.shape[1]).type_as(idx))\n"
    "        return (m.norm(m.blocks(x)) @ m.tokens.weight.T)[..., :97]\n" + _HEAD + "    return Wrap(model)",
)
