"""Bad input to every public helper a chapter calls: a clear error or a sane result, never a traceback or a hang.

Hypothesis feeds each helper (the list `SUBJECTS`, from the chapters' `helpers.` calls) one bad
argument at a time: wrong types, negatives, NaN and infinities, huge sizes and device strings
that are misspelt or name a device this machine cannot use; every other argument is a valid,
quick value. Each call runs under a time limit in a thread and ends in one of:

* a clear error: ValueError or TypeError (or one of the course's own errors) whose message names
  the argument (or says what the argument is, `aliases`);
* a sane result: returned normally, no NaN or infinity in it, and the subject's own check passed;
* a bare traceback (any other exception, or a message that does not name the argument), a wrong
  result, a hang (no answer within `LIMIT_S`), or a process started for a bad launch argument.

The last four must not happen. `test_figures` prints the tally, the issue's figures re-measured.
Multi-process helpers run with process starts forbidden: bad input must be refused before any
rank or child starts. The same tests run on the CPU-only build and on a CUDA build without a
driver (where 'cuda' is compiled in but unusable).
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing.process
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import helpers
from helpers import (
    bandwidth,
    devices,
    distributed,
    fresh_python,
    gpu_specs,
    hogwild,
    launches,
    memory,
    parallel,
    roofline,
    scratch,
    sharding,
    streams,
    timing,
    training,
    transfers,
)
from helpers.environment import stamp, usable_cpu_count
from helpers.memory import NeedsCudaError

#: Seconds a single call may take before it counts as a hang.
LIMIT_S = 10.0
#: Examples per argument of each helper: enough to reach every kind of bad value, few enough for ~30 s in all.
EXAMPLES = 25

#: The errors a bad argument may raise: ValueError, TypeError, and the course's NeedsCudaError (this
#: machine has no CUDA GPU, which a helper that reads one says before looking at its arguments).
CLEAR_ERRORS = (ValueError, TypeError, NeedsCudaError)

# --------------------------------------------------------------------------------------------- bad values

NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])
WRONG_TYPES = st.one_of(
    st.none(),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.just(object()),
    st.just(1j),
)
NEGATIVE_INTS = st.integers(max_value=-1)
NEGATIVE_FLOATS = st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False)
HUGE_INTS = st.integers(min_value=10**12, max_value=2**64)


def unusable_device_strings() -> list[str]:
    """Device spellings torch rejects, and ones it accepts but this machine cannot use."""
    bad = ["gpu", "cuda:x", "cuda:-1", "CUDA", "cuda:0:1", "", "npu", "cpu:x", "cuda:99", "mps:7"]
    if not torch.cuda.is_available():
        bad += ["cuda", "cuda:0", "cuda:1"]
    if not torch.backends.mps.is_available():
        bad += ["mps", "mps:0"]
    return bad


BAD_DEVICES = st.one_of(
    st.sampled_from(unusable_device_strings()), st.integers(), st.just(3.5), st.just(["cpu"]), st.just(object())
)


def bad_count(*, huge: bool = True, zero: bool = True, none: bool = True) -> st.SearchStrategy[Any]:
    """Not a whole number ≥ 1: floats, bools, other types, negatives, NaN, (zero), (huge sizes)."""
    kinds = [
        WRONG_TYPES if none else WRONG_TYPES.filter(lambda v: v is not None),
        st.booleans(),
        st.floats(min_value=0.5, max_value=1e6),
        NON_FINITE,
        NEGATIVE_INTS,
    ]
    if zero:
        kinds.append(st.just(0))
    if huge:
        kinds.append(HUGE_INTS)
    return st.one_of(*kinds)


def bad_number(*, huge: bool = True, zero: bool = True, none: bool = True) -> st.SearchStrategy[Any]:
    """Not a positive finite number: other types, bools, negatives, NaN and infinities, (zero), (huge)."""
    kinds = [
        WRONG_TYPES if none else WRONG_TYPES.filter(lambda v: v is not None),
        st.booleans(),
        NON_FINITE,
        NEGATIVE_FLOATS,
        NEGATIVE_INTS,
    ]
    if zero:
        kinds.append(st.just(0))
    if huge:
        kinds.append(st.sampled_from([1e300, 10**15]))
    return st.one_of(*kinds)


NOT_A_FLAG = st.one_of(st.sampled_from(["yes", "no", "", 0, 1, None, 2.0]), st.lists(st.booleans(), max_size=1))
NOT_TEXT = st.one_of(st.none(), st.integers(), st.floats(allow_nan=True), st.lists(st.text(max_size=2), max_size=2))
NOT_CALLABLE = st.one_of(st.none(), st.integers(), st.text(max_size=4), st.just([print]))

# --------------------------------------------------------------------------------------------- bad data to plot

NOT_A_LIST = st.one_of(st.none(), st.integers(), st.text(max_size=4), st.just({}), st.just(object()))
NOT_A_MAPPING = st.one_of(st.none(), st.integers(), st.text(max_size=4), st.just([]), st.just([("a", 1)]))

#: Small valid records of each kind the plotting helpers draw.
SPAN = streams.Span("stream 0", "copy", 0.0, 1.0, "copy")
PIECE = transfers.PieceTiming(1, 1024, 1024, 1e-3, 1.0, 1, "h2h", "stamp")
STEP = memory.Step("allocate", 1024, 2048)
COPY = bandwidth.BandwidthResult(1024, "h2d", False, 1e-3, 1.0, "cpu", "stamp")
POINT = {"what": "matmul", "dtype": "float32", "flops": 2e6, "bytes": 1.2e4, "seconds": 1e-3}
MATMUL = {"shape": (64, 64, 64), "dtype": "float32", "tflops": 0.01}
REFERENCE = {"nbytes": 2**20, "gb_per_s": (10.0, 12.0), "what": "published"}


def bad_list(good: Any, most: int = 10_000, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Not a list of good items: another type, empty, an item of the wrong type, an item with one bad field
    (a record's field or a dict's key), or more items than a figure can show."""

    def one_bad(field_name: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        if isinstance(good, dict):
            return values.map(lambda v: [good, {**good, field_name: v}])
        return values.map(lambda v: [good, dataclasses.replace(good, **{field_name: v})])

    kinds = [NOT_A_LIST, st.just([]), st.lists(WRONG_TYPES, min_size=1, max_size=2), st.just([good] * (most + 1))]
    kinds += [one_bad(name, values) for name, values in fields.items()]
    if isinstance(good, dict):
        kinds.append(st.sampled_from(sorted(good)).map(lambda k: [{n: v for n, v in good.items() if n != k}]))
    return st.one_of(*kinds)


# --------------------------------------------------------------------------------------------- the subjects


def _pure(*_: Any, **__: Any) -> None:
    """A quick function for the helpers that time or run one."""


def _copy_many(tensors: list[torch.Tensor], device: torch.device, non_blocking: bool) -> list[torch.Tensor]:
    return [t.to(device, non_blocking=non_blocking, copy=True) for t in tensors]


def add_one(x: int) -> int:
    """An importable worker for the launchers (a child process can import this module)."""
    return x + 1


def rank_worker(rank: int, world_size: int) -> int:
    return rank


def parse_seconds(text: str) -> float:
    number, unit = text.split(" ")
    return float(number) * {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}[unit]


def parse_bytes(text: str) -> float:
    number, unit = text.split(" ")
    return float(number) * {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[unit]


def about(parse: Callable[[str], float], value: float, result: str) -> bool:
    """The formatted text reads back as `value` (to the digits shown), sign and unit included."""
    back = parse(result)
    return math.isclose(back, value, rel_tol=0.06, abs_tol=0.5 if parse is parse_bytes else 0.0)


@dataclass
class Subject:
    """One public helper: a valid quick call (`good`), and a strategy of bad values per argument."""

    name: str
    fn: Callable[..., Any]
    good: dict[str, Any]
    bad: dict[str, st.SearchStrategy[Any]]
    #: Words a clear message may use instead of the argument's name.
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: A check of a result returned for a bad value: (argument, value, result) -> sane?
    sane: Callable[[str, Any, Any], bool] | None = None
    #: The helper is a context manager: the call only counts once its block is entered.
    enters: bool = False


SUBJECTS = [
    # devices (chapters 00-02 and all set-up cells)
    Subject("try_gpu", helpers.try_gpu, {"i": 0}, {"i": bad_count(zero=False, huge=False)}, {"i": ("device index",)}),
    Subject(
        "have_gpus",
        helpers.have_gpus,
        {"n": 0, "task": "test"},
        {"n": bad_count(zero=False, huge=False), "task": NOT_TEXT},
        {"n": ("device index",)},
        sane=lambda arg, value, result: isinstance(result, bool),
    ),
    Subject("synchronize", helpers.synchronize, {"device": "cpu"}, {"device": BAD_DEVICES}),
    Subject(
        "describe_device_spelling",
        devices.describe_device_spelling,
        {"spelling": "cpu"},
        {"spelling": st.one_of(BAD_DEVICES, NOT_TEXT)},
        sane=lambda arg, value, result: isinstance(result, str) and result != "",
    ),
    Subject(
        "pretend_machine",
        devices.pretend_machine,
        {"accelerator": "cuda", "count": 1},
        {"accelerator": st.one_of(st.just(""), st.integers(), st.just(["cuda"])), "count": bad_count(zero=False)},
        {"count": ("device index",)},
        enters=True,
    ),
    # timing (chapters 04, 07)
    Subject(
        "format_seconds",
        timing.format_seconds,
        {"seconds": 1.0},
        {"seconds": st.one_of(WRONG_TYPES, NON_FINITE, NEGATIVE_FLOATS, st.floats(-1e6, 1e6))},
        sane=lambda arg, value, result: about(parse_seconds, value, result),
    ),
    Subject(
        "wall_seconds", timing.wall_seconds, {"fn": _pure, "device": "cpu"}, {"fn": NOT_CALLABLE, "device": BAD_DEVICES}
    ),
    Subject(
        "time_call",
        timing.time_call,
        {"fn": _pure, "device": "cpu", "min_run_time": 0.001},
        {"fn": NOT_CALLABLE, "device": BAD_DEVICES, "min_run_time": bad_number()},
    ),
    # memory (chapter 05)
    Subject(
        "format_bytes",
        memory.format_bytes,
        {"n": 1},
        {"n": st.one_of(WRONG_TYPES, NON_FINITE, NEGATIVE_INTS, NEGATIVE_FLOATS)},
        {"n": ("format_bytes",)},
        sane=lambda arg, value, result: about(parse_bytes, value, result),
    ),
    Subject(
        "round_size", memory.round_size, {"nbytes": 1}, {"nbytes": bad_count(huge=False)}, {"nbytes": ("request",)}
    ),
    Subject(
        "segment_size",
        memory.segment_size,
        {"rounded": 512},
        {"rounded": bad_count(huge=False)},
        {"rounded": ("request",)},
    ),
    Subject(
        "CachingAllocatorModel",
        memory.CachingAllocatorModel,
        {"capacity": 2**20},
        {"capacity": bad_count(huge=False, none=False)},
        {"capacity": ("request",)},
    ),
    # copies (chapter 03)
    Subject(
        "piece_counts",
        transfers.piece_counts,
        {"total_bytes": 4096, "smallest_piece_bytes": 1024, "step": 4},
        {"total_bytes": bad_count(huge=False), "smallest_piece_bytes": bad_count(huge=False), "step": bad_count()},
    ),
    Subject(
        "sweep_pieces",
        transfers.sweep_pieces,
        {"total_bytes": 4096, "counts": [1, 4], "device": "cpu", "repeats": 1, "progress": False},
        {
            "total_bytes": bad_count(),
            "counts": st.one_of(st.just([]), st.lists(bad_count(), min_size=1, max_size=2), st.just(None), st.just(3)),
            "device": BAD_DEVICES.filter(lambda v: v is not None),
            "repeats": bad_count(),
            "copy": NOT_CALLABLE.filter(lambda v: v is not None),
        },
    ),
    Subject(
        "threads_on_cpu",
        training.threads_on_cpu,
        {"device": "cpu", "threads": 1},
        {"device": BAD_DEVICES, "threads": bad_count(none=False)},
    ),
    # streams (chapter 06)
    Subject(
        "split_work",
        streams.split_work,
        {"chunks": 4, "total_copy_ms": 10.0, "total_compute_ms": 10.0},
        {
            "chunks": bad_count(),
            "total_copy_ms": bad_number(),
            "total_compute_ms": bad_number(),
            "launch_ms": bad_number(zero=False),
        },
    ),
    Subject(
        "simulated_cuda",
        streams.simulated_cuda,
        {"launch_ms": 0.005},
        {"launch_ms": bad_number(zero=False)},
        enters=True,
    ),
    Subject(
        "profile_spans",
        streams.profile_spans,
        {"fn": _pure, "device": "cpu"},
        {"fn": NOT_CALLABLE, "device": BAD_DEVICES},
    ),
    Subject(
        "gpu_cycles_per_ms", streams.gpu_cycles_per_ms, {"device_index": 0}, {"device_index": bad_count(zero=False)}
    ),
    # pinned memory and bandwidth (chapters 07, 10)
    Subject(
        "copies_for",
        bandwidth.copies_for,
        {"nbytes": 1024, "total_bytes": 4096, "max_copies": 8},
        {"nbytes": bad_count(huge=False), "total_bytes": bad_count(huge=False), "max_copies": bad_count(huge=False)},
    ),
    Subject(
        "time_copy_batch",
        bandwidth.time_copy_batch,
        {
            "copy": _copy_many,
            "nbytes": 1024,
            "device": "cpu",
            "copies": 2,
            "pinned": False,
            "non_blocking": False,
            "repeats": 1,
        },
        {
            "copy": NOT_CALLABLE,
            "nbytes": bad_count(),
            "device": BAD_DEVICES,
            "copies": bad_count(),
            "pinned": NOT_A_FLAG,
            "non_blocking": NOT_A_FLAG,
            "repeats": bad_count(),
        },
    ),
    Subject(
        "two_by_two",
        bandwidth.two_by_two,
        {"copy": _copy_many, "sizes": [1024], "device": "cpu", "total_bytes": 4096, "max_copies": 2, "repeats": 1},
        {
            "copy": NOT_CALLABLE,
            "sizes": st.one_of(st.just([]), st.lists(bad_count(), min_size=1, max_size=2), st.just(None), st.just(5)),
            "device": BAD_DEVICES,
            "total_bytes": bad_count(),
            "max_copies": bad_count(),
            "repeats": bad_count(),
        },
    ),
    Subject(
        "copy_bandwidth",
        bandwidth.copy_bandwidth,
        {"nbytes": 1024, "direction": "h2d", "pinned": False, "repeats": 1},
        {
            "nbytes": bad_count(),
            "direction": st.one_of(NOT_TEXT, st.just("sideways")),
            "pinned": NOT_A_FLAG,
            "repeats": bad_count(),
            "device": BAD_DEVICES.filter(lambda v: v is not None),
        },
        {"device": ("GPU", "device")},
    ),
    Subject(
        "pcie_peak_gb_per_s",
        bandwidth.pcie_peak_gb_per_s,
        {"generation": 3, "width": 16},
        {"generation": bad_count(), "width": bad_count()},
        {"generation": ("PCIe generation",), "width": ("link",)},
    ),
    Subject(
        "ratio_lines",
        bandwidth.ratio_lines,
        {"results": [], "peak_gb_per_s": 10.0},
        {
            "results": st.one_of(st.none(), st.integers(), st.just([1.5])),
            "peak_gb_per_s": bad_number(huge=False),
            "min_nbytes": bad_count(zero=False, huge=False),
        },
    ),
    # several GPUs, processes (chapters 08, 09, 12): refused before any process starts
    Subject(
        "launch",
        distributed.launch,
        {"worker": rank_worker, "world_size": 2, "timeout": 30},
        {
            "worker": NOT_CALLABLE,
            "world_size": bad_count(),
            "args": st.one_of(st.none(), st.integers(), st.text(max_size=3)),
            "backend": st.one_of(st.just("mpi"), st.just("NCCL "), st.integers()),
            "timeout": bad_number(),
            "threads_per_rank": bad_count(none=False),
            "init_group": NOT_A_FLAG,
        },
    ),
    Subject(
        "run_commands",
        distributed.run_commands,
        {"commands": [["true"]], "timeout": 30},
        {
            "commands": st.one_of(st.none(), st.just([]), st.just([[]]), st.just("true"), st.just([["true", 5]])),
            "timeout": bad_number(),
        },
    ),
    Subject(
        "run_in_children",
        hogwild.run_in_children,
        {"fn": add_one, "args_per_child": [(1,)], "timeout": 30},
        {
            "fn": NOT_CALLABLE,
            "args_per_child": st.one_of(st.none(), st.just([]), st.just([1, 2]), st.just("ab"), st.just([(1,)] * 1000)),
            "timeout": bad_number(),
        },
    ),
    Subject(
        "time_limit",
        hogwild.time_limit,
        {"processes": [], "seconds": 1.0},
        {"processes": st.one_of(st.none(), st.just(()), st.integers()), "seconds": bad_number(huge=False)},
    ),
    Subject(
        "run_fresh_python",
        fresh_python.run_fresh_python,
        {"code": "print(1)", "timeout": 30},
        {
            "code": NOT_TEXT,
            "env": st.one_of(st.just(["A"]), st.just({"A": 1}), st.just({1: "a"}), st.integers()),
            "timeout": bad_number(),
        },
    ),
    Subject(
        "bytes_per_rank",
        sharding.bytes_per_rank,
        {"n_params": 10, "dtype_bytes": 4, "optimizer": "Adam", "world_size": 2, "strategy": "FSDP"},
        {
            "n_params": bad_count(zero=False, huge=False),
            "dtype_bytes": bad_count(huge=False),
            "optimizer": st.one_of(NOT_TEXT, st.just("adam!")),
            "world_size": bad_count(huge=False),
            "strategy": st.one_of(NOT_TEXT, st.just("ZeRO")),
        },
    ),
    Subject(
        "draw_batch_flow",
        parallel.draw_batch_flow,
        {},
        {"batch_size": bad_count(), "n_devices": bad_count(), "title": NOT_TEXT.filter(lambda v: v is not None)},
    ),
    # choosing a GPU, fewer launches (chapters 10, 11)
    Subject(
        "by_short_name",
        gpu_specs.by_short_name,
        {"short": "T4"},
        {"short": st.one_of(NOT_TEXT, st.just("T5"))},
        {"short": ("GPU",)},
    ),
    Subject(
        "format_table", gpu_specs.format_table, {}, {"specs": st.one_of(st.none(), st.integers(), st.just(("T4",)))}
    ),
    Subject(
        "explain",
        roofline.explain,
        {"spec": gpu_specs.by_short_name("T4"), "precision": "fp32", "intensity": 1.0},
        {
            "spec": st.one_of(NOT_TEXT, st.just("T4")),
            "precision": st.one_of(NOT_TEXT, st.just("fp64")),
            "intensity": bad_number(huge=False),
        },
    ),
    Subject("spec_for_device", roofline.spec_for_device, {"device": "cpu"}, {"device": BAD_DEVICES}),
    Subject(
        "compiler_advice",
        launches.compiler_advice,
        {"exc": RuntimeError("x"), "device": "cpu"},
        {"exc": NOT_TEXT, "device": BAD_DEVICES},
    ),
    Subject(
        "compiled_files",
        launches.compiled_files,
        {"folder": "/nonexistent"},
        {"folder": st.one_of(st.none(), st.integers(), st.just([Path(".")]))},
    ),
    # plots and widgets (chapters 03, 05-08, 10, 12): each builds a figure or a widget, never shows it here
    Subject(
        "plot_timelines",
        streams.plot_timelines,
        {"panels": {"one stream": [SPAN]}, "title": "t", "simulated": True},
        {
            "panels": st.one_of(
                NOT_A_MAPPING,
                st.just({}),
                st.just({1: [SPAN]}),
                st.builds(lambda v: {"p": v}, st.one_of(NOT_A_LIST, st.lists(WRONG_TYPES, min_size=1, max_size=2))),
                st.just({f"p{i}": [SPAN] for i in range(21)}),
                st.just({"p": [SPAN] * 10_001}),
            ),
            "title": NOT_TEXT,
            "simulated": NOT_A_FLAG,
            "share_x": NOT_A_FLAG,
        },
    ),
    Subject(
        "plot_throughput",
        distributed.plot_throughput,
        {"labels": ["one", "two"], "samples_per_second": [10.0, 20.0], "title": "t", "stamp_text": "s"},
        {
            "labels": st.one_of(
                NOT_A_LIST,
                st.just([]),
                st.lists(NOT_TEXT, min_size=2, max_size=2),
                st.just(["a"]),
                st.just(["a"] * 101),
            ),
            "samples_per_second": st.one_of(
                NOT_A_LIST, st.just([]), st.lists(bad_number(), min_size=1, max_size=2), st.just([1.0])
            ),
            "title": NOT_TEXT,
            "stamp_text": NOT_TEXT,
        },
    ),
    Subject(
        "plot_sweep",
        transfers.plot_sweep,
        {"records": [PIECE]},
        {
            "records": bad_list(
                PIECE,
                seconds=bad_number(huge=False),
                gb_per_s=bad_number(huge=False),
                pieces=bad_count(huge=False),
                piece_bytes=bad_count(huge=False),
            )
        },
    ),
    Subject(
        "pieces_widget",
        transfers.pieces_widget,
        {"device": "cpu", "sizes_mib": (1,), "max_pieces": 4, "repeats": 1},
        {
            "device": BAD_DEVICES.filter(lambda v: v is not None),
            "sizes_mib": st.one_of(NOT_A_LIST, st.just([]), st.lists(bad_count(), min_size=1, max_size=2)),
            "max_pieces": bad_count(),
            "repeats": bad_count(),
            "copy": NOT_CALLABLE.filter(lambda v: v is not None),
        },
    ),
    Subject(
        "plot_steps",
        memory.plot_steps,
        {"history": [STEP], "label": "model", "capacity": 2**20},
        {
            "history": bad_list(STEP, most=1000, allocated=bad_count(zero=False), reserved=bad_count(zero=False)),
            "label": NOT_TEXT,
            "title": NOT_TEXT.filter(lambda v: v is not None),
            "capacity": bad_count(none=False, huge=False),
        },
    ),
    Subject(
        "allocator_widget",
        memory.allocator_widget,
        {"playground": memory.AllocatorPlayground.create()},
        {
            "playground": st.one_of(NOT_TEXT, st.just(memory.CachingAllocatorModel(2**20))),
            "sizes_mib": st.one_of(NOT_A_LIST, st.just([]), st.lists(bad_number(), min_size=1, max_size=2)),
        },
    ),
    Subject(
        "plot_bandwidth",
        bandwidth.plot_bandwidth,
        {"results": [COPY], "peak_gb_per_s": 16.0, "reference": [REFERENCE], "stamp": "s"},
        {
            "results": bad_list(COPY, most=1000, nbytes=bad_count(huge=False), gb_per_s=bad_number(huge=False)),
            "peak_gb_per_s": bad_number(none=False, huge=False),
            "peak_label": NOT_TEXT,
            "reference": bad_list(
                REFERENCE,
                most=100,
                nbytes=bad_count(huge=False),
                gb_per_s=st.one_of(NOT_A_LIST, st.lists(bad_number(huge=False), min_size=1, max_size=2)),
                what=NOT_TEXT,
            ),
            "stamp": NOT_TEXT.filter(lambda v: v is not None),
            "title": NOT_TEXT,
        },
    ),
    Subject(
        "plot_per_rank",
        sharding.plot_per_rank,
        {"measured": {"DDP": dict.fromkeys(sharding.PARTS, 1e6)}, "stamp_text": "s"},
        {
            "measured": st.one_of(
                NOT_A_MAPPING,
                st.just({}),
                st.just({1: dict.fromkeys(sharding.PARTS, 1.0)}),
                st.just({"DDP": {}}),
                st.builds(lambda v: {"DDP": v}, NOT_A_MAPPING),
                st.builds(
                    lambda v: {"DDP": {**dict.fromkeys(sharding.PARTS, 1.0), "gradients": v}},
                    bad_number(zero=False, huge=False),
                ),
                st.just({f"s{i}": dict.fromkeys(sharding.PARTS, 1.0) for i in range(21)}),
            ),
            "stamp_text": NOT_TEXT,
        },
    ),
    Subject("budget_widget", sharding.budget_widget, {}, {}),
    Subject(
        "plot_roofline",
        roofline.plot_roofline,
        {"points": [POINT], "bandwidth_gbs": 10.0, "compute_tflops": {"float32": 0.5}, "stamp": "s"},
        {
            "points": bad_list(
                POINT, flops=bad_number(huge=False), bytes=bad_number(huge=False), seconds=bad_number(huge=False)
            ),
            "bandwidth_gbs": bad_number(huge=False),
            "compute_tflops": st.one_of(
                NOT_A_MAPPING,
                st.just({}),
                st.just({1: 1.0}),
                st.builds(lambda v: {"float32": v}, bad_number(huge=False)),
                st.just({f"d{i}": 1.0 for i in range(21)}),
            ),
            "stamp": NOT_TEXT,
            "spec": st.one_of(st.text(max_size=3), st.integers(), st.just("T4")),
            "device": BAD_DEVICES.filter(lambda v: not isinstance(v, str)),
        },
    ),
    Subject(
        "plot_matmul_sweep",
        roofline.plot_matmul_sweep,
        {"results": [MATMUL, {**MATMUL, "shape": (128, 128, 128), "tflops": 0.05}], "stamp": "s"},
        {
            "results": bad_list(
                MATMUL,
                tflops=bad_number(huge=False),
                dtype=NOT_TEXT,
                shape=st.one_of(NOT_A_LIST, st.just(()), st.lists(bad_count(huge=False), min_size=1, max_size=3)),
            ),
            "stamp": NOT_TEXT,
        },
    ),
    *(
        Subject(
            name,
            fn,
            {},
            {
                "specs": st.one_of(
                    NOT_A_LIST, st.just([]), st.just(["T4"]), st.just([None]), st.just(gpu_specs.GPUS * 10)
                )
            },
        )
        for name, fn in (
            ("plot_price_performance", roofline.plot_price_performance),
            ("plot_performance_per_watt", roofline.plot_performance_per_watt),
            ("roofline_widget", roofline.roofline_widget),
        )
    ),
    # set-up cells, every chapter
    Subject("scratch_folder", scratch.scratch_folder, {"importable": False}, {"importable": NOT_A_FLAG}),
    Subject("stamp", stamp, {}, {"m": st.one_of(st.integers(), st.text(max_size=3), st.just({}))}),
    Subject(
        "load_exercises",
        helpers.load_exercises,
        {"chapter": "01", "namespace": {}},
        {"chapter": st.one_of(st.just("99"), st.just("x"), st.integers(min_value=13, max_value=10**6))},
    ),
]


#: The subjects that draw a figure or build a widget: their valid calls are run too.
DRAWN = [s for s in SUBJECTS if s.name.startswith("plot_") or s.name.endswith("_widget")]


def close_figures() -> None:
    """Close every figure a call made (the plotting subjects draw one per accepted call)."""
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


@pytest.mark.parametrize("subject", DRAWN, ids=[s.name for s in DRAWN])
def test_a_valid_call_to_a_plotting_helper_draws(subject: Subject, capsys: pytest.CaptureFixture[str]) -> None:
    """The `good` call of each plotting subject works, so a bad argument is the only thing wrong in the calls above.

    A widget prints itself when built outside a notebook: `capsys` keeps that out of the figures' output.
    """
    import matplotlib

    matplotlib.use("Agg")
    try:
        drawn = subject.fn(**subject.good)
    finally:
        close_figures()
    assert type(drawn).__name__ in ("Figure", "interactive", "VBox"), type(drawn)


def test_the_subjects_cover_what_the_chapters_call() -> None:
    """Every name the list is about exists, and every good call is fast and quiet (sanity of the harness)."""
    assert len({s.name for s in SUBJECTS}) == len(SUBJECTS)
    assert usable_cpu_count() >= 1


# --------------------------------------------------------------------------------------------- the harness

TALLY: Counter[str] = Counter()
FAULTS: list[str] = []


class ProcessStarted(BaseException):
    """Raised by a process start during the bad-input calls: bad input must be refused before any starts."""


@pytest.fixture
def no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise ProcessStarted("a process was started for a bad argument")

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)
    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)


def non_finite_inside(value: Any, depth: int = 0) -> bool:
    if depth > 4:
        return False
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, str):
        return "nan" in value.split() or "inf" in value.split()
    if isinstance(value, (list, tuple)):
        return any(non_finite_inside(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(non_finite_inside(v, depth + 1) for v in value.values())
    return False


def call_with_limit(subject: Subject, kwargs: dict[str, Any]) -> tuple[str, Any]:
    """('returned', result) | ('raised', exc) | ('hang', None), the call made in a thread under LIMIT_S."""
    outcome: list[tuple[str, Any]] = []

    def run() -> None:
        try:
            result = subject.fn(**kwargs)
            if subject.enters:
                with result as entered:
                    result = entered
            outcome.append(("returned", result))
        except BaseException as exc:  # noqa: BLE001 - classified below
            outcome.append(("raised", exc))

    thread = threading.Thread(target=run, daemon=True, name=f"bad input to {subject.name}")
    thread.start()
    thread.join(LIMIT_S)
    return outcome[0] if outcome else ("hang", None)


def classify(subject: Subject, arg: str, value: Any, kind: str, payload: Any) -> str:
    """'clear' or 'sane' (good), or 'bare', 'unclear', 'wrong', 'hang', 'started' (faults)."""
    if kind == "hang":
        return "hang"
    if kind == "returned":
        ok = not non_finite_inside(payload) and (subject.sane is None or subject.sane(arg, value, payload))
        return "sane" if ok else "wrong"
    if isinstance(payload, ProcessStarted):
        return "started"
    if not isinstance(payload, CLEAR_ERRORS):
        return "bare"
    if isinstance(payload, NeedsCudaError):
        return "clear"  # the machine has no CUDA GPU: said before any argument could matter, with what to do
    message = str(payload)
    return "clear" if any(word in message for word in (arg, *subject.aliases.get(arg, ()))) else "unclear"


CASES = [(subject, arg) for subject in SUBJECTS for arg in subject.bad]


@pytest.mark.parametrize(("subject", "arg"), CASES, ids=[f"{s.name}-{a}" for s, a in CASES])
def test_bad_input_gets_a_clear_error_or_a_sane_result(subject: Subject, arg: str, no_processes: None) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(subject.bad[arg])
    def check(value: Any) -> None:
        kind, payload = call_with_limit(subject, {**subject.good, arg: value})
        close_figures()
        verdict = classify(subject, arg, value, kind, payload)
        TALLY["calls"] += 1
        TALLY[verdict] += 1
        if verdict not in ("clear", "sane"):
            what = f"{type(payload).__name__}: {payload}" if kind == "raised" else repr(payload)[:200]
            FAULTS.append(f"{subject.name}({arg}={value!r:.60}): {verdict}: {what[:300]}")
            raise AssertionError(f"{subject.name}({arg}={value!r:.60}) gave a {verdict} outcome: {what[:500]}")

    check()


def test_figures() -> None:
    """The issue's figures, re-measured by the tests above (run the file whole to fill them)."""
    if not TALLY["calls"]:
        pytest.skip("run the whole file: the figures are counted by the tests above")
    faults = {k: TALLY[k] for k in ("bare", "unclear", "wrong", "hang", "started")}
    print(
        f"\nbad input to {len(SUBJECTS)} public helpers: {TALLY['calls']} calls, {TALLY['clear']} clear errors, "
        f"{TALLY['sane']} sane results, {faults['bare'] + faults['unclear']} bare tracebacks, "
        f"{faults['wrong']} wrong results, {faults['hang']} hangs, {faults['started']} processes started"
    )
    assert not any(faults.values()), "\n".join(FAULTS)


# --------------------------------------------------------------------------------------------- children's failures


def write_to_stderr_and_die(code: int) -> None:
    """A child that dies without reporting (as C++ code that aborts would), its cause only on stderr."""
    import os
    import sys

    print("the cause: the child's own words on stderr", file=sys.stderr, flush=True)
    os._exit(code)


def test_a_child_that_dies_is_reported_with_the_last_lines_of_its_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(distributed.WorkerFailed) as failed:
        hogwild.run_in_children(write_to_stderr_and_die, [(1,)], timeout=60)
    message = str(failed.value)
    assert "exited with code 1 before reporting a result" in message
    assert "the cause: the child's own words on stderr" in message
    assert "the child's own words" in capfd.readouterr().err  # still shown where it showed before


def test_an_argument_the_child_cannot_rebuild_is_reported_with_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    only_here = types.ModuleType("course_module_only_in_the_parent")

    class Thing:
        pass

    Thing.__module__, Thing.__qualname__ = only_here.__name__, "Thing"
    only_here.Thing = Thing  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, only_here.__name__, only_here)
    with pytest.raises(distributed.WorkerFailed, match="No module named 'course_module_only_in_the_parent'"):
        hogwild.run_in_children(add_one, [(Thing(),)], timeout=60)


def test_an_argument_that_cannot_be_sent_is_refused_naming_it() -> None:
    with pytest.raises(TypeError, match=r"args_per_child\[0\] cannot be sent to a child process"):
        hogwild.run_in_children(add_one, [(lambda: 1,)], timeout=60)


# --------------------------------------------------------------------------------------------- the device check


@pytest.mark.parametrize(
    ("machine", "spelling", "words"),
    [
        ((None, 0, None), "cuda:9", "not usable here: this machine has no usable cuda device; pass 'cpu'"),
        ((None, 0, None), "gpu", "not a device torch knows; pass 'cpu', 'cuda'"),
        ((None, 0, None), "mps", "no usable mps device"),
        ((None, 0, "cuda"), "cuda", "not usable here"),  # a CUDA build without a driver: decided by is_available()
        (("cuda", 2, None), "cuda:2", "does not exist: this machine has 2 cuda device(s), numbered from 0"),
        (("mps", 1, None), "cuda", "no usable cuda device"),
    ],
)
def test_a_bad_device_is_refused_saying_what_to_pass(machine: tuple, spelling: str, words: str) -> None:
    from helpers.validation import DeviceError, usable_device

    accelerator, count, built = machine
    with devices.pretend_machine(accelerator, count, built=built), pytest.raises(DeviceError) as refused:
        usable_device(spelling)
    assert words in str(refused.value)
    assert isinstance(refused.value, ValueError) and isinstance(refused.value, RuntimeError)


@pytest.mark.parametrize(("machine", "spelling"), [((None, 0), "cpu"), ((None, 0), "meta"), (("cuda", 2), "cuda:1")])
def test_a_usable_device_passes(machine: tuple, spelling: str) -> None:
    from helpers.validation import usable_device

    with devices.pretend_machine(*machine):
        assert usable_device(spelling) == torch.device(spelling)
