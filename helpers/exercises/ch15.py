"""Chapter 15 exercises: which rung of a measured ladder gained most; a rung of your own, trained by `ladder.train`."""

import builtins
import contextlib
import copy
import functools
import gc
import importlib
import itertools
import warnings
from typing import Any

import torch
import torch.nn.functional as F

from ..answers import Wrong, expect_function, expect_type
from ..checking import CouldNotCheck
from .calls import HOST_READS, CallLog
from .cases import Slip, call_or_wrong, questions, show, table


def _best(rows: list, noise: float, kept_only: bool = True, beyond: Any = float.__gt__) -> Any:
    best = max((r for r in rows[1:] if r["kept"] or not kept_only), key=lambda r: r["over_last"], default=None)
    return best["name"] if best and beyond(float(best["over_last"] - 1), float(noise)) else None


_speeds = lambda k: [r | {"over_last": s} for r, s in zip(k, itertools.accumulate(r["over_last"] for r in k), strict=1)]
_fastest = lambda rows, noise: _best(rows[:1] + _speeds([r for r in rows[1:] if r["kept"]]), noise)  # overall speed
_r = lambda name, over, kept, **kw: dict(name=name, over_last=over, kept=kept, guard=kept, inert="", switch=name) | kw
_same = lambda name, over: _r(name, over, False, guard=True, inert="the same code")  # a switch that is no rung
_PLAIN = _r("plain", 1.0, True)
_LADDERS = [  # the largest step kept, one lost (the guard, or slower), none beyond the noise, a late small one
    ([_PLAIN, _same("tf32", 1.0), _r("autocast", 2.6, True), _r("sdpa", 1.2, True)], 0.05),
    ([_PLAIN, _r("autocast", 0.3, False), _r("sdpa", 1.0504, True), _r("compile", 1.02, True)], 0.0502),
    ([_PLAIN, _r("autocast", 3.0, False), _r("sdpa", 1.04, True), _r("fused", 1.01, True)], 0.05),
    ([_PLAIN, _r("tf32", 1.5, True), _r("sdpa", 1.02, True), _r("pinned", 1.3, True)], 0.1),
    ([_PLAIN], 0.03),
    ([_PLAIN, _r("tf32", 1.241, True), _r("autocast", 1.244, True)], 0.05),  # not the first beyond the noise; close
    ([_PLAIN, _r("tf32", 1.5, True), _r("amp", 1.2, True), _r("sdpa", 1.3, True), _r("fused", 1.02, True)], 0.1),
    ([_PLAIN, _r("sdpa", 1.25, True), _r("fused", 1.125, True)], 0.25),  # a gain equal to the noise: none
    ([_PLAIN, _r("sdpa", 1.14, False), _r("fused", 1.14, True), _r("pinned", 0.78, False)], 0.13),  # twin; fall; 1.14
    ([_PLAIN, *[_same("tf32", 1.3)] * 8, _r("sdpa", 1.1, True)], 0.05),  # the same code; a long ladder
    ([_PLAIN, _r("autocast", 1.8, False), _same("tf32", 1.3)], 0.05),  # none kept
    ([_PLAIN, _r("fused", 1.2, True), _r("DDP, 2 ranks", 1.6, True, switch="ddp", devices=2)], 0.05),  # it counts
]
_SLIPS = [
    Slip(lambda rows, noise: _best(rows, noise, kept_only=False), "a rung that was not kept gained nothing: skip it"),
    Slip(lambda rows, noise: _best(rows, noise, beyond=float.__ge__), "a gain equal to the noise is no gain either"),
    Slip(lambda rows, noise: _best(rows, noise, beyond=lambda *_: True), "a gain within the noise is no gain"),
    Slip(_fastest, "the rung you named is the fastest overall; the question asks whose own step gained most"),
]
_name = lambda v, call: v if v is None else expect_type(v, str, f"{call} to return a rung's name or None")
_check_best = table("best_rung", "(rows, noise)", _LADDERS, _best, slips=_SLIPS, answer=_name)
_TORCH = (F, torch.Tensor, torch.optim, torch.optim.Optimizer, torch.optim.AdamW, torch.amp.GradScaler, torch.autograd)
_TORCH += (torch.optim.Adam, *map(importlib.import_module, ("torch.optim.adam", "torch.optim.adamw", "torch.nn")))
_TORCH += (torch, torch.amp, torch.accelerator, torch.cuda, torch.nn.init, torch.compiler, builtins)  # train sorts
_TORCH += (torch.nn.Module, torch.nn.Linear, torch.nn.Embedding, torch.nn.LayerNorm, torch.nn.GELU, torch.nn.Sequential)
_own = lambda v: v.__wrapped__ if getattr(v, "hooked", 0) else v  # an optimizer's first use wraps its class's step
_std = lambda m: type(m) is type(torch) and not m.__name__.startswith("torch")  # math, time: what gpt and ladder use
_owners = lambda g, d: (g, d, g.GPT, g.Block, g.Attention, *filter(_std, {**vars(g), **vars(d)}.values())) + _TORCH
_named = lambda o, k: k == "__init__" and o is not torch.nn.Module or o is torch.Tensor and k.startswith("__")


def _outside(gpt: Any, ladder: Any) -> dict[str, tuple[Any, Any]]:  # what a rung must leave alone, and its restore
    return {
        f"{o.__name__}.{k}": (lambda v, o=o, k=k: setattr(o, k, v), _own(v))
        for o in _owners(gpt, ladder)
        for k, v in vars(o).items()  # not torch's private names, nor Module.__init__: compile patches those
        if (_named(o, k) or not k.startswith("_" if o in _TORCH else "__"))  # __init__, Tensor's operators (@)
        and type(v) is not type(torch)
        and (o, k) != (torch, "manual_seed")  # compile wraps it; submodules load late
        and not (isinstance(o, type) and getattr(o.__mro__[1], k, None) is _own(v))  # the same as inherited
    } | {k: v for k, v in _settings().items() if not (k.endswith("precision") and "matmul" in k)}  # train sets these


_CONFIGS = [importlib.import_module(f"torch.{m}.config") for m in ("_dynamo", "_inductor", "_functorch", "compiler")]
_SWITCHES = """fp32_precision cudnn.fp32_precision cudnn.conv.fp32_precision cudnn.rnn.fp32_precision
mkldnn.fp32_precision mkldnn.conv.fp32_precision mkldnn.rnn.fp32_precision mkldnn.matmul.fp32_precision cudnn.benchmark
cudnn.allow_tf32 cudnn.deterministic mkldnn.enabled cuda.matmul.fp32_precision cuda.matmul.allow_fp16_accumulation
cuda.matmul.allow_fp16_reduced_precision_reduction cuda.matmul.allow_bf16_reduced_precision_reduction""".split()


def _settings() -> dict[str, tuple[Any, Any]]:  # torch's global settings a rung could flip, and how to put them back
    owner = lambda path: functools.reduce(getattr, filter(None, path.split(".")), torch.backends)
    pairs = {  # put back in this order, before the legacy precision; a missing one reads "unreadable" throughout
        f"torch.backends.{s}": (lambda o=o, a=a: getattr(owner(o), a), lambda v, o=o, a=a: setattr(owner(o), a, v))
        for s in _SWITCHES
        for o, _, a in [s.rpartition(".")]
    }
    for n in ("flash", "mem_efficient", "math", "cudnn"):  # the attention kernels SDPA may choose
        pairs[f"{n} attention"] = getattr(owner("cuda"), f"{n}_sdp_enabled"), getattr(owner("cuda"), f"enable_{n}_sdp")
    pairs |= {
        "torch's thread count": (torch.get_num_threads, torch.set_num_threads),
        "the float32 matmul precision": (torch.get_float32_matmul_precision, torch.set_float32_matmul_precision),
        "deterministic algorithms": (torch.are_deterministic_algorithms_enabled, torch.use_deterministic_algorithms),
        "anomaly detection": (torch.is_anomaly_enabled, torch.set_anomaly_enabled),
        "flushing denormals": (lambda: torch.tensor(1e-40).mul(1).item() == 0, torch.set_flush_denormal),
        "Python's garbage collector": (gc.isenabled, lambda on: gc.enable() if on else gc.disable()),
    }
    pairs |= {c.__name__: (c.get_config_copy, functools.partial(_load_changed, c)) for c in _CONFIGS}  # imported
    return {name: (put, _read(get)) for name, (get, put) in pairs.items()}


def _read(get: Any) -> Any:  # a setting's value, or "unreadable" (a rung can leave torch's APIs in conflict)
    with contextlib.suppress(Exception):
        return get()
    return "unreadable"


def _put_back(saved: dict[str, tuple[Any, Any]], now: dict[str, tuple[Any, Any]]) -> list[str]:  # what changed, reset
    for name in (changed := [n for n, (_, v) in now.items() if n not in saved or _differs(v, saved[n][1])]):
        with contextlib.suppress(Exception), warnings.catch_warnings(action="ignore"):  # deprecated config keys warn
            saved[name][0](saved[name][1]) if name in saved else None
    return changed


_differs = lambda a, b: a is not b and not (type(a) is type(b) and isinstance(a, int | float | str | dict) and a == b)
_far = lambda g, w: g is None or not (g.to_dense()[tuple(map(slice, w.shape))] - w).norm() <= w.norm() / 10  # sparse
_load_changed = lambda c, saved: [setattr(c, k, v) for k, v in saved.items() if _differs(c.get_config_copy().get(k), v)]
_places = lambda c: {a.device for a in (*c.args, *c.kwargs.values()) if isinstance(a, torch.Tensor) and a.ndim}
_off = lambda c: (c.name in HOST_READS or c.raised and c.name == "to") and getattr((*c.args, 0)[0], "is_meta", 0)
_mixed = lambda c: len(_places(c)) > 1 and c.name not in ("to", "type_as")  # a move takes a tensor's device: right
_model = lambda lad, d: setattr((m := lad.build(_SIZE, lad.Rung(padded=1), d)).blocks[0].attention, "sdpa", 1) or m
_looks = lambda m: [{k: len(v) if isinstance(v, dict) else id(v) for k, v in vars(x).items()} for x in m.modules()]
_kept = lambda a, b: a.dtype == b.dtype and a.ndim == b.ndim and torch.equal(a.detach()[tuple(map(slice, b.shape))], b)
_std_of = lambda name: 1.0 if "qkv" in name else 0.02 if "tokens" in name or "positions" in name else 0.3  # peaked
_draw = lambda name, w, seed: w.detach().normal_(0.0, _std_of(name), generator=torch.Generator().manual_seed(seed))


def _agrees(out: Any, x: torch.Tensor, want: torch.Tensor, when: str, why: str, pairs: list) -> None:  # 16-bit
    got = call_or_wrong(out, (x,), f"what my_rung returned, called on a {tuple(x.shape)} batch,")
    if moved := [n for n, p, q in pairs if not _kept(q, p)]:  # the reference's weights, which no call changes
        raise Wrong(f"a call of what my_rung returned changed {', '.join(moved[:3])}: only the optimizer steps weights")
    if not isinstance(got, torch.Tensor) or (got.shape, got.dtype) != (want.shape, want.dtype):
        raise Wrong(f"what my_rung returned gave {show(got)} for a batch; the model gives {show(want)}")
    if not (off := ((got.detach().float() - want).norm() / want.norm()).item()) <= 0.01:  # NaN is off too
        said = f"{when} of your rung (a {tuple(x.shape)} batch) is {off:.1%} off the model"
        raise Wrong(f"{said}: more than 16-bit rounding (1 %), so it computes another function{why}")


def _same_function(call: Any, gpt: Any, ladder: Any) -> None:  # weights large enough that attention is peaked
    model, away, text = _model(ladder, _CPU), _model(ladder, torch.device("meta")), gpt.encode(gpt.python_text(20_000))
    [_draw(name, p, i) for i, (name, p) in enumerate(model.named_parameters())]  # small embeddings: LayerNorm's eps
    xs = [next(gpt.batches(text, 1, b, t, seed=n))[0] for n, (b, t) in enumerate(((3, 32), (8, 48), (3, 17)), 1)]
    reference, own = copy.deepcopy(model), list(model.parameters())  # the model before the rung: outputs, gradients
    wants, precision = [reference(x).detach() for x in xs], torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")  # not as train's call has them: a rung that sets either shows in one
    with torch.compiler.config.patch(force_disable_caches=not torch.compiler.config.force_disable_caches):
        out = call(model)  # if it raises, _check_rung puts the precision back
    torch.set_float32_matmul_precision(precision)
    now = dict(model.named_parameters())  # a tensor replaced under its name (padded) keeps its rows' values, its dtype
    pairs = [(n, p, now.get(n, q)) for (n, p), q in zip(reference.named_parameters(), own, strict=True)]
    if moved := [n for n, p, q in pairs if not _kept(q, p)]:
        raise Wrong(f"my_rung changed {', '.join(moved[:3])} (values or dtype): a rung leaves the weights as they are")
    for n, (x, want) in enumerate(zip(xs, wants, strict=True), 1):  # three calls, three shapes: the same each time
        _agrees(out, x, want, f"with the same weights, call {n}", ", or with weights not the model's", pairs)
    (reference(xs[0]) * (w := torch.randn(wants[0].shape, generator=torch.Generator().manual_seed(7)))).sum().backward()
    if left := [n for n, _, q in pairs if q.grad is not None]:  # a warm-up's: train's first step would add them
        raise Wrong(f"my_rung left gradients in {', '.join(left[:3])}: train's first step would add them; zero them")
    call_or_wrong(lambda: (out(xs[0]).float() * w).sum().backward(), (), "the backward pass through your rung")
    if off := [n for n, p, q in pairs if _far(q.grad, p.grad)]:  # each weight by its name, or the model's own
        raise Wrong(f"{', '.join(off[:3])} get no gradient or one 10 % off: detached, replaced, or another backward?")
    for n, x in ((5, xs[0]), (6, xs[1])):  # new weights written into both, twice: a copy kept, even if renewed, is off
        [q.detach()[tuple(map(slice, p.shape))].copy_(_draw(k, p, 100 * n + i)) for i, (k, p, q) in enumerate(pairs)]
        _agrees(out, x, reference(x).detach(), f"with new weights in the model, call {n}", ", or old weights", pairs)
    math = torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH)  # torch's reference: docs' errors raise
    with torch.compiler.set_stance("force_eager"), torch.autocast("cpu", torch.float16), math:  # eager, a T4's float16
        call_or_wrong(out, (xs[0],), "what my_rung returned, under float16 autocast (a T4's), SDPA on its math path,")
    with torch.compiler.set_stance("force_eager"), CallLog() as log, contextlib.suppress(Exception):  # as on a GPU:
        call(away)(xs[0].to("meta"))  # the model off the CPU, so a CPU tensor the rung makes meets its tensors
    if crossed := sorted({c.written if _off(c) else c.label for c in log.calls if _off(c) or _mixed(c)}):
        said = "a CPU tensor met the model's (a GPU's here), or the host read one of its tensors (if, assert, print)"
        raise Wrong(f"{', '.join(crossed)}: {said}: make tensors with device=, read none back (each read waits)")


def _check_rung(fn: Any) -> None:
    expect_function(fn, "my_rung", "(model)")
    try:  # the chapter's own files, written by sections 1 and 2 into the folder first on sys.path
        gpt, ladder = importlib.import_module("gpt"), importlib.import_module("ladder")
    except ImportError:
        raise CouldNotCheck("run sections 1 and 2 first; they write gpt.py and ladder.py, which it trains") from None
    text, seen, _ = gpt.encode(gpt.python_text(60_000)), {}, torch.compiler.reset()  # earlier attempts' compiles: gone
    run = lambda change: ladder.train(ladder.Rung(), _SIZE, text[:-20_000], text[-20_000:], 16, 8, _CPU, 4, change)
    saved, rng, precision = _outside(gpt, ladder), torch.get_rng_state(), torch.get_float32_matmul_precision()

    def change(model: Any) -> Any:  # the learner's rung; a setting it flips is put back at once, and said
        seen["ids"], seen["name"] = {id(p) for p in model.parameters()}, {n for n, _ in model.named_parameters()}
        before, looks, seen["model"] = _settings(), _looks(model), model  # its modules' attributes, hooks, tensors
        out = call_or_wrong(fn, (model,), "my_rung(model)")
        seen.setdefault("inside", []).extend(_put_back(before, _settings()))  # said as the check ends
        seen.setdefault("same", out is model and _looks(model) == looks)  # judged last: a mistake is named first
        if not callable(out):
            raise Wrong(f"my_rung(model) returned {show(out)}; return what train should call (the model, changed)")

        def forward(*args: Any) -> Any:  # a switch flipped during a call: train's own resets would hide it
            was, y = _settings(), out(*args)
            seen.setdefault("inside", []).extend(f"{n} (in a forward)" for n in _put_back(was, _settings()))
            return y

        return forward

    try:  # the learner's code first: its errors show before the checker's own work
        _same_function(change, gpt, ladder)
        plain, yours = run(None), call_or_wrong(run, (change,), "training with my_rung")
    finally:  # put back what the rung changed outside the model, then say so, whatever else went wrong
        changed = _put_back(saved, now := _outside(gpt, ladder))
        for where, _, name in (key.rpartition(".") for key in set(now) - set(saved)):  # names a rung added: removed
            delattr(next(o for o in _owners(gpt, ladder) if o.__name__ == where), name)
        torch.set_rng_state(rng), torch.set_float32_matmul_precision(precision)
        if changed := changed + [*dict.fromkeys(seen.get("inside", []))]:  # by my_rung, or in a forward, once each
            raise Wrong(f"my_rung changed {', '.join(changed)}: a rung changes the model, nothing outside it")
    added = sorted(n for n, p in seen["model"].named_parameters() if id(p) not in seen["ids"] and n not in seen["name"])
    if added := added or ["parameters()"] * ("parameters" in vars(seen["model"])):  # renamed or padded: the model's
        raise Wrong(f"my_rung gave the model parameters not its own ({', '.join(added)}): a rung changes how it runs")
    if not (yours["finite"] and abs(yours["loss"] - plain["loss"]) <= ladder.GUARD * plain["loss"]):
        said = f"with my_rung the held-out loss is {show(yours['loss'])}, the plain run's {show(plain['loss'])}"
        raise Wrong(f"{said}: more than {ladder.GUARD:.0%} apart (or not finite), so it learned something else")
    if seen["same"]:  # it passed as the model does: nothing changed
        raise Wrong("my_rung(model) returned the model as it was: a rung changes how it runs, or wraps the model")


_CPU, _SIZE = torch.device("cpu"), dict(width=72, layers=2, heads=3, block=48)  # heads, sizes: none of its
_TEXTS = {
    "best_rung": "Write `best_rung(rows, noise)`: the name of the kept rung whose own step (`over_last`) gained most, "
    "beyond `noise`, else None.\nrows[0] is the plain run; a rung not kept gained nothing; gain = over_last - 1.",
    "my_rung": "Write `my_rung(model)`: return what `train` should call instead of the model (changed, or wrapped): "
    "the same outputs and gradients, nothing else changed.\nFor instance: compile a part, keeping the weights.",
}
QUESTIONS = questions("15", _TEXTS, [_check_best, _check_rung], each={"my_rung": {"time_limit": 600.0}})  # compiles
