"""Chapter 02 exercises: where results live, predicted then run; tensors made on a device, and a fix (meta: a GPU)."""

import warnings
from functools import partial
from typing import Any

import torch
import torch.utils._device  # torch.utils._device._device_constructors(): not imported by `import torch`
from torch.utils._pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten

from ..answers import Wrong, expect_function, expect_type
from ..checking import Question
from .calls import Call, CallLog, _writes
from .cases import call_or_wrong, show

DEVICES = ("cpu", "meta", *(("cuda",) if torch.cuda.is_available() else ()))
PRINTS = ("__repr__", "__str__", "__format__")  # printing a GPU tensor reads it
_INDEXING = "__getitem__ index index_put_ index_put __setitem__".split()  # calls whose CPU indices torch moves itself
_MOVES = "copy_ to new_tensor __set__ where result_type broadcast_tensors type_as view_as expand_as reshape_as".split()
in_place = lambda c: bool(c.args) and (c.name == "__set__" or _writes(c.name))  # x.add_(...), x[i] = ..., x.data = ...
#: `r` with each tensor in it that is one of `avoid` copied: a learner's result or a twin aliases no other tensor.
_apart = lambda r, avoid: tree_map(lambda t: t.clone() if any(t is a for a in avoid) else t, r)
_array = lambda c: c.name in ("tensor", "as_tensor", "asarray") and _host(*c.args[:1], *c.kwargs.values())
_host = lambda a=None, *_: hasattr(a, "__array__") and not torch.is_tensor(a)  # numpy's (not a list): made on the CPU
_on = lambda v, device: tree_map(lambda t: _leaf(t).to(device, copy=True).requires_grad_(t.requires_grad), v)
_leaf = lambda t: t.detach() if t.is_leaf else t  # a leaf's copy a leaf too, as the caller's tensor is
#: `x` on the host: a meta tensor's twin, holding what a GPU would (zeros if none); the CPU for the meta device.
host = lambda x: getattr(x, "_twin", torch.zeros_like(x, device="cpu")) if torch.is_tensor(x) and x.is_meta else _cpu(x)
_cpu = lambda x: type(x)("cpu") if isinstance(x, str | torch.device) and str(x) == "meta" else x


def _pair(meta: Any, twins: Any) -> Any:  # `meta`, each meta tensor in it given its place's tensor in `twins` (`host`)
    [setattr(m, "_twin", t) for m, t in zip(*map(tree_leaves, (meta, twins)), strict=False) if getattr(m, "is_meta", 0)]
    return meta


class Watch(CallLog):
    """A `CallLog` where meta plays a GPU: the calls that read it (once a tensor) and that copied to it."""

    reads = copies_in = ()  # tuples: `+=` gives each Watch its own

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        self.calls.append(call := Call(func, args, kwargs or {}))
        made = func in torch.utils._device._device_constructors()  # a factory: set_default_device's mode lies under
        if made and call.kwargs.get("device", call.kwargs.get("out")) is None:  # this one
            call.kwargs["device"] = torch.get_default_device()
        leaves, spec = tree_flatten((args, call.kwargs))
        h_args, h_kwargs = tree_unflatten(hosted := [host(x) for x in leaves], spec)
        given = [t for t in leaves if isinstance(t, torch.Tensor)]
        meta, twins = [t for t in given if t.is_meta], [h for x, h in zip(leaves, hosted, strict=True) if x is not h]
        keys = (k if type(k := args[1]) is tuple else (k,)) if call.name in _INDEXING and len(args) > 1 else ()
        copy = call.name == "__setitem__" and not any(isinstance(k, list) or getattr(k, "ndim", 0) for k in keys)
        cpu = [t for t in given if t.is_cpu and not any(t is k for k in keys)]  # CPU indices: torch moves them
        if meta and call.name in PRINTS:  # a GPU tensor's text reads it; a meta one's, whatever the format, is meta
            self.reads += (call,) * len(meta)
            return repr(args[0])
        with warnings.catch_warnings(action="ignore"):  # torch's warnings would name this file, not the learner's
            try:
                call.result = func(*args, **call.kwargs)
            except (RuntimeError, NotImplementedError) as exc:
                if "meta tensor" not in str(exc).lower():  # else it needed values, which a GPU would send
                    raise
                self.reads += (call,) * len(meta)
                call.result = _apart(func(*h_args, **h_kwargs), twins)
                return call.result
            if meta and (len(cpu) > 1 or any(t.dim() for t in cpu)) and call.name not in _MOVES and not copy:
                raise RuntimeError(f"Expected all tensors on one device, not meta and cpu ({spelled([call])})")  # a GPU
            if twins:
                _pair(call.result, _apart(func(*h_args, **h_kwargs), given))
        away = any(t.device.type != "cpu" for t in tree_leaves((given, call.result)) if isinstance(t, torch.Tensor))
        moved = any(t.dim() for t in cpu) and call.name[-3:] != "_as" or _array(call)  # host memory, sent over
        if moved and away and not call.name.endswith(("_like", "new_zeros", "new_ones", "new_empty", "new_full")):
            self.copies_in += (call,)  # (*_like and new_* take a shape, not values)
        return call.result


def run(fn: Any, name: str, takes: str, case: tuple) -> tuple:
    """The `Watch`, arguments, result and text of `name` called on `case`, each `(values, device)` a copy there."""
    expect_function(fn, name, takes)
    keys = takes[1:-1].split(", ")
    args = [_pair(_on(*a), _on(a[0], "cpu")) if isinstance(a, tuple) else a for a in case]
    log, call = Watch(), f"{name}({', '.join(map(described, args))})"
    kept = {id(t): k for k, a, c in zip(keys, args, case, strict=True) if isinstance(c, tuple) for t in tree_leaves(a)}
    try:
        with log:
            got = call_or_wrong(fn, args, call)
    except Wrong as said:  # with its cause where the log shows one: an input changed in place, cuda named
        for c in log.calls:
            if in_place(c) and (arg := kept.get(id(c.args[0]))):
                raise Wrong(f"{said}, after changing {arg} ({spelled([c])}): leave the inputs as they are") from None
            if "cuda" not in call and "cuda" in f"{c.name}{c.args}{c.kwargs}":  # a device or tensor of cuda
                raise Wrong(f"{said}; it named cuda ({spelled([c])}): use the device you were given") from None
        raise
    strays = [c for c in log.calls if any(host(x) is not x for x in tree_leaves((c.args, c.kwargs)))]  # meta used
    if strays and "meta" not in [str(a[1] if isinstance(a, tuple) else a) for a in case if not torch.is_tensor(a)]:
        raise Wrong(f"{call} made a tensor on meta ({spelled(strays[:1])}), a device it was not given: use yours")
    if hasty := [c for c in log.reads if c.name == "to" and c.kwargs.get("non_blocking")]:  # chapter 07's trap
        said = "this check cannot see a wait for it; copy to the host with non_blocking=False, which waits"
        raise Wrong(f"{call} copied to the host with non_blocking=True ({spelled(hasty)}): {said}")
    for label, arg, spec in zip(keys, args, case, strict=True):
        if isinstance(spec, tuple) and not same(arg, *spec):
            raise Wrong(f"{call} changed its argument {label}, now {described(arg)}: leave the inputs as they are")
    return log, args, got, call


def spelled(calls: list[Call] | tuple) -> str:
    """The calls as a learner writes them, counted: `4 × .item()`, `.cpu()`, `x.data = ...`."""
    words = dict(__repr__="print() or repr()", __str__="str()", __format__="an f-string", __setitem__="x[i] = ...")
    said = [f"x.{c.func.__self__.__name__} = ..." if c.name == "__set__" else words.get(c.name) for c in calls]
    said = [s or (f"{c.label}()" if c.label[:6] == "torch." else c.written) for s, c in zip(said, calls, strict=True)]
    return ", ".join(f"{said.count(s)} × {s}" if said.count(s) > 1 else s for s in dict.fromkeys(said))


def same(t: Any, want: Any, device: str | torch.device) -> bool:
    """Whether `t` is (a list of) tensors like `want` on `device`: dtype, shape, requires_grad, values (`host(t)`'s)."""
    if isinstance(want, list):
        return isinstance(t, list) and len(t) == len(want) and all(map(lambda a, w: same(a, w, device), t, want))
    kind = (torch.device(device).type, want.dtype, want.shape, want.requires_grad, want.is_leaf)  # leaf: no graph
    ok = isinstance(t, torch.Tensor) and (t.device.type, t.dtype, t.shape, t.requires_grad, t.is_leaf) == kind
    close = lambda: torch.allclose(host(t).cpu().cdouble(), want.cdouble(), rtol=1e-5)  # integers: exact
    return ok and (torch.equal(host(t).cpu(), want) or want.is_floating_point() and close())


def described(t: Any, device: str | torch.device | None = None, at: int = 0) -> str:
    """`t` for a message: a tensor's kind, its device (or `device`) and values (`host(t)`'s); a list's piece `at`."""
    if isinstance(t, list) and t and isinstance(t[0], torch.Tensor):
        return f"a list of {len(t)} tensors, {f'number {at + 1}' if at else 'the first'} {described(t[at], device)}"
    if not isinstance(t, torch.Tensor):
        return show(t)
    values = "" if (h := host(t)).is_meta else f" holding {show(h.tolist())}"
    where = "meta (standing in for a GPU)" if values and str(device or t.device) == "meta" else device or t.device
    grad = f", requiring grad{' as a leaf' * t.is_leaf}," * t.requires_grad  # a result cut from the graph is a leaf
    return f"a {t.dtype} tensor of shape {tuple(t.shape)}{grad} on {where}{values}"


def _on_devices(name: str, takes: str, cases: list, want: Any, made_there: bool, fn: Any) -> None:
    """Checks `want(*values)` on the first argument's device (made there, or computed there) in all `cases`."""
    for case in cases:
        log, args, got, call = run(fn, name, takes, case)
        if made_there and log.copies_in:
            raise Wrong(f"{call} made a tensor on the CPU and moved it ({spelled(log.copies_in[:1])}): create it there")
        if made_there and isinstance(got, torch.Tensor) and got.numel() > 1 and 0 in got.stride():  # expand's view
            raise Wrong(f"{call} returned a view whose elements share one number in memory: make a new tensor")
        right, where = want(*(a[0] if isinstance(a, tuple) else a for a in case)), case[0][1]  # (values, device)
        if not same(got, right, where):
            raise Wrong(f"{call} returned {described(got)}; expected {described(right, where)}")
        if reads := [c for c in log.reads if c.name not in PRINTS and any(getattr(x, "is_meta", 0) for x in c.args)]:
            said = f"{call} copied a tensor from the GPU to the host ({spelled(reads[:1])})"
            raise Wrong(f"{said}: compute where it lives")


#: Questions 1 and 2: lines whose result a learner predicts, run with g on a GPU (meta stands in) and c on the CPU.
_MADE = ("torch.zeros_like(g)", "torch.zeros(3, dtype=g.dtype)", "g.new_ones(2)", "torch.ones(g.shape)", "g[0]")
_MIXED = ("g[c > 0]", "torch.tensor(2.0) * g", "g.sum() + c", "c.sum() + g.sum()", "torch.where(c > 0, g, 0.0)")
_RAN = {"gpu": "its result lives on the GPU", "cpu": "its result lives on the CPU", "error": "it raises RuntimeError"}
_word = lambda v: {"cuda": "gpu", "cuda:0": "gpu", "meta": "gpu"}.get(w := str(v).strip().lower(), w)  # g: cuda:0


def _ran(line: str, gpu: str) -> str:  # where the result of `line` lives, "gpu" or "cpu", or "error": it raised
    try:  # (a check runs with torch's own default device, the CPU)
        return "cpu" if eval(line, dict(torch=torch, g=torch.ones(3, device=gpu), c=torch.ones(3))).is_cpu else "gpu"
    except RuntimeError:
        return "error"


def _predicted(name: str, lines: tuple, given: Any) -> None:  # a dict: each line's 'gpu', 'cpu' or 'error', as run
    given = expect_type(given, dict, "a dict: each line of the cell, then 'gpu', 'cpu' or 'error'")
    if bad := next((k for k in lines if _word(given.get(k)) not in _RAN), None):
        value = "missing" if bad not in given else "still ..." if given[bad] is ... else show(given[bad])
        raise Wrong(f"{name}[{bad!r}] is {value}: keep each line of the cell as a key, and say 'gpu', 'cpu' or 'error'")
    if wrong := [(k, ran) for k in lines if _word(given[k]) != (ran := _ran(k, "meta"))]:
        (k, ran), off = wrong[0], f"predictions off: {len(wrong)} of {len(lines)}; the cell after question 2 runs them"
        raise Wrong(f"{k}: you said {_word(given[k])!r}, but {_RAN[ran]} ({off})")


_TS = (torch.arange(3), torch.tensor([True, False]), torch.ones(0, 2).half(), torch.tensor(1j))  # 0-d, empty, n = 0
_TS += (torch.tensor([7]).byte(), torch.ones(2, dtype=torch.bfloat16, requires_grad=True))  # 6 dtypes, requiring grad
_ZEROS = [((t, d), n) for t, n in zip(_TS, (5, 0, 3, 1, 4, 2), strict=True) for d in DEVICES]
#: Many rows, few, one; float64, integer and float16 x (whose product with the float32 weights is float32).
_ROWS = (torch.arange(12.0).reshape(4, 3), torch.tensor([[0.1, 2.5], [-1.2, 3.0]]).double(), torch.tensor([[3, 1, -4]]))
_XS = [((x, d),) for x in (*_ROWS, torch.tensor([[1.5, -2.0], [4.0, 0.25], [8.0, 3.0]]).half()) for d in DEVICES]
_CHECKS = (  # the predictions; then each function with its name, arguments, cases, right result, whether made there
    partial(_predicted, "made", _MADE),
    partial(_predicted, "mixed", (*_MIXED, "torch.cat([g, c])")),
    partial(_on_devices, "zeros_for", "(t, n)", _ZEROS, lambda t, n: torch.zeros(n, dtype=t.dtype), True),
    partial(_on_devices, "scale_rows", "(x)", _XS, lambda x: x * torch.linspace(0.5, 1.5, len(x))[:, None], False),
)
#: Each question's task (the notebook states it in full), then its hint, a line each.
_TEXTS = """Set `made` to where each line's result lives, 'gpu' or 'cpu' (g lives on the GPU, c on the CPU), then run.
Without device=, a factory function makes its tensor on the CPU; *_like and new_* take the device of a tensor.
Set `mixed` to where each line's result lives, 'gpu' or 'cpu', or 'error' where torch refuses it, then run.
Numbers and 0-d CPU tensors join a GPU tensor in arithmetic, CPU indices may index it; other tensors share its device.
Write `zeros_for(t, n)`: `n` zeros (1-D) of `t`'s dtype, created directly on `t`'s device.
A tensor knows its own t.dtype and t.device: pass both to torch.zeros.
Debug `scale_rows(x)` to work wherever x lives, computing the same and leaving x where it is.
Where does a factory function create a tensor when you do not say? x.device names the place it should be.""".split("\n")
_NAMES = ("made", "mixed", "zeros_for", "scale_rows")
QUESTIONS = [*map(partial(Question, chapter="02"), range(1, 5), _TEXTS[::2], _NAMES, _CHECKS, _TEXTS[1::2])]
