"""Chapter 01's GPU claims: `torch.device(0)` on a usable GPU, the current device (`with torch.cuda.device`,
`set_device`, `.cuda()` against `.cuda(0)`, one per thread), `CUDA_VISIBLE_DEVICES` (renumbering, hiding, ignored
once CUDA has started),
`CUDA_DEVICE_ORDER`, and the exercise solutions on the real GPUs.

Settings that count only at start-up run in a fresh Python process (helpers.processes), as in the chapter.
"""

from __future__ import annotations

import threading

import pytest
import torch

from helpers.exercises import ch01
from helpers.processes import run_fresh_python

#: A child that prints, one line per GPU it sees: its UUID and its PCI (domain, bus, device).
LIST_GPUS = """
import torch
for i in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(i)
    print(p.uuid, p.pci_domain_id, p.pci_bus_id, p.pci_device_id)
"""


def _gpus(**env: str | None) -> list[list[str]]:
    """What LIST_GPUS prints in a child with `env` (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER unset unless given)."""
    env = {"CUDA_VISIBLE_DEVICES": None, "CUDA_DEVICE_ORDER": None, **env}
    return [line.split() for line in run_fresh_python(LIST_GPUS, env=env).splitlines() if line.strip()]


@pytest.mark.gpu
def test_a_bare_index_and_the_usable_accelerator_are_cuda() -> None:
    assert torch.device(0) == torch.device("cuda", 0)
    usable = torch.accelerator.current_accelerator(check_available=True)
    assert usable is not None and usable.type == "cuda"
    assert torch.accelerator.current_accelerator().type == "cuda"
    assert torch.ones(3, device=torch.device(0)).device == torch.device("cuda", 0)


@pytest.mark.gpu
def test_the_exercise_solutions_choose_the_real_gpus() -> None:
    namespace: dict = {"torch": torch}
    for question in ch01.QUESTIONS[:2]:
        exec(question.solution_code, namespace)
    count = torch.cuda.device_count()
    assert namespace["try_gpu"]() == torch.device("cuda", 0)
    assert namespace["try_gpu"](count) == torch.device("cpu")
    assert namespace["try_all_gpus"]() == [torch.device("cuda", i) for i in range(count)]


@pytest.mark.gpu
def test_the_stage_devices_fix_uses_every_gpu_there_is_and_runs() -> None:
    """Question 4's solution: both stages on the one GPU, or one GPU each; a two-stage product runs on them."""
    namespace: dict = {"torch": torch}
    exec(ch01.QUESTIONS[3].solution_code, namespace)
    first, second = namespace["stage_devices"]()
    count = torch.cuda.device_count()
    assert (first, second) == (torch.device("cuda", 0), torch.device("cuda", 1 if count >= 2 else 0))
    x, w1, w2 = torch.randn(4, 8), torch.randn(8, 8), torch.randn(8, 8)
    y = (x.to(first) @ w1.to(first)).to(second) @ w2.to(second)
    assert y.device == second
    torch.testing.assert_close(y.cpu(), x @ w1 @ w2, rtol=1e-2, atol=1e-2)  # TF32 may be on


def _in_a_new_thread(make):  # what make() returns when a new threading.Thread runs it
    made: list = []
    thread = threading.Thread(target=lambda: made.append(make()))
    thread.start()
    thread.join()
    return made[0]


@pytest.mark.gpu2
def test_inside_torch_cuda_device_new_tensors_follow_the_block_and_results_their_operands() -> None:
    """The lesson's `with torch.cuda.device(1):` cell, run in this process: `.cuda()` follows the block, `.cuda(0)`
    and a new thread do not, and the block restores the current device."""
    before = torch.cuda.current_device()
    x = torch.ones(2, device="cuda:0")
    with torch.cuda.device(1):
        assert torch.cuda.current_device() == 1
        a = torch.ones(2, device="cuda")
        b = torch.ones(2).cuda()
        moved = torch.ones(2).to(device="cuda")
        named = torch.ones(2).cuda(0)
        c = a + b
        z = x + x
        in_thread = _in_a_new_thread(lambda: (torch.cuda.current_device(), torch.ones(2, device="cuda").device))
    assert [t.device for t in (a, b, moved, c)] == [torch.device("cuda", 1)] * 4
    assert named.device == torch.device("cuda", 0), ".cuda(0) is GPU 0 whatever the current device"
    assert z.device == torch.device("cuda", 0), "a result follows its operands, not the current device"
    assert in_thread == (0, torch.device("cuda", 0)), "a new thread starts at GPU 0, not at the block's GPU"
    assert torch.cuda.current_device() == before


@pytest.mark.gpu2
def test_set_device_moves_what_cuda_without_an_index_means() -> None:
    out = run_fresh_python("""
        import torch
        torch.cuda.set_device(1)
        print(torch.zeros(1, device="cuda").device, torch.cuda.current_device())
        with torch.cuda.device(0):
            print(torch.zeros(1, device="cuda").device)
        print(torch.ones(1).cuda().device, torch.ones(1).cuda(0).device)
    """).split()
    assert out == ["cuda:1", "1", "cuda:0", "cuda:1", "cuda:0"]


@pytest.mark.gpu2
def test_set_device_changes_the_current_device_of_the_calling_thread_only() -> None:
    """`set_device` sets CUDA's per-thread device (`cudaSetDevice`; c10 keeps its pending choice `thread_local`):
    a thread started afterwards begins at GPU 0 and must set its own, as the DataLoader's pin-memory thread does
    (`torch/utils/data/_utils/pin_memory.py`, `torch.accelerator.set_device_index(device_id)`)."""
    out = run_fresh_python("""
        import threading
        import torch
        torch.cuda.set_device(1)
        seen = []
        def worker():
            seen.append(torch.cuda.current_device())
            seen.append(torch.ones(1, device="cuda").device)
            torch.cuda.set_device(1)
            seen.append(torch.ones(1).cuda().device)
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        print(torch.cuda.current_device(), torch.ones(1, device="cuda").device, *seen)
    """).split()
    assert out == ["1", "cuda:1", "0", "cuda:0", "cuda:1"], out


@pytest.mark.gpu2
def test_cuda_visible_devices_picks_renumbers_and_hides() -> None:
    every = _gpus()
    assert len(every) >= 2
    assert _gpus(CUDA_VISIBLE_DEVICES="1") == [every[1]], "the machine's second GPU becomes cuda:0"
    assert _gpus(CUDA_VISIBLE_DEVICES="1,0") == [every[1], every[0]], "listed order is torch's order"
    assert _gpus(CUDA_VISIBLE_DEVICES="") == [], "an empty list hides every GPU"


@pytest.mark.gpu
def test_cuda_visible_devices_set_after_the_first_cuda_call_is_ignored() -> None:
    """CUDA keeps the GPUs it started with: judged by where tensors land. What device_count() says
    afterwards depends on the release (docs/sources.md §2): torch 2.10 and 2.11 count through NVML,
    which re-reads the variable ("" leaves no GPU to count: 0); 2.12 and later ask CUDA (1)."""
    out = run_fresh_python("""
        import os
        import torch
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        before = torch.cuda.device_count()
        torch.zeros(1, device="cuda")
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        lands = torch.ones(1, device="cuda").device
        x = torch.arange(4.0, device="cuda") * 2
        print(before, torch.cuda.device_count(), lands, x.device, x.sum().item(), torch.__version__)
    """).split()
    print(f"before: {out[0]} GPU; after the late '': device_count() {out[1]}, tensors on {out[2]} (torch {out[5]})")
    before, after, lands, computed_on, total = out[:5]
    assert before == "1" and lands == "cuda:0" and computed_on == "cuda:0" and total == "12.0", out
    if torch.torch_version.TorchVersion(out[5]) >= (2, 12):
        assert after == "1", f"torch {out[5]} counts with CUDA once it has started: {out}"
    else:
        assert after in ("0", "1"), out


@pytest.mark.gpu
def test_cuda_device_order_pci_bus_id_counts_in_pci_order() -> None:
    by_pci = _gpus(CUDA_DEVICE_ORDER="PCI_BUS_ID")
    addresses = [tuple(int(x) for x in gpu[1:]) for gpu in by_pci]
    assert addresses == sorted(addresses), "PCI_BUS_ID numbers GPUs in ascending PCI address"
    fastest = _gpus(CUDA_DEVICE_ORDER="FASTEST_FIRST")
    assert sorted(fastest) == sorted(by_pci), "both orders show the same GPUs"
    assert _gpus() == fastest, "FASTEST_FIRST is the default"
