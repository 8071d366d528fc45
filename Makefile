# The course's commands; each sets up .venv first if it is missing or out of date.
#   make run         execute every chapter headless into build/ (QUICK=1 for small sizes)
#   make test        lint, then the whole test suite (what CI runs)
#   make lab         JupyterLab on notebooks/
#   make tidy        put every chapter in the course's shape after editing it
#   make test-cuda-build   every chapter and the unit tests on a CUDA build of torch 2.10 with no GPU driver
#   make test-newest-torch the same on the newest torch (2.15, a CUDA build, no driver)
#   make selftest    on a GPU machine, with its own Python and torch: every chapter, then the GPU tests,
#                    one table (build/selftest.json) and one archive of what ran and was measured
#                    (build/gpu-run.tar.gz); PYTHON=... picks the interpreter, WHEELHOUSE=DIR
#                    first installs what it needs from DIR alone (no network)
#   make wheelhouse  build/wheelhouse/: those needs as wheels to copy (WHEEL_PYTHON=3.12, HAVE=freeze.txt)
#   make test-selftest-offline   the offline install proved: a wheelhouse, a fresh venv, the self-test on 01
#   make verified    write docs/verified.* from the runs above (after make test and the two CUDA-build stacks)
#   make handout     build/handout/: chapters, helpers without the exercise solutions, the site (after make run)
#   make teacher     build/teacher/: the same with the solutions (after make run)
# torch is pinned so that set-up is quick and predictable; pick another supported release with
# e.g. `make run TORCH=torch==2.10.0` (pyproject.toml declares the supported range).
PYTHON ?= python3

# torch.compile's first use on a machine probes the CPU's vector instructions by compiling small
# test programs (about 10 s here), cached in the temporary folder. Set-up pays it once, so chapter
# 11's QUICK time measures the chapter; its own first compile is still cold (a new graph).
export PRIME_INDUCTOR = import torch; torch.compile(lambda x: x + 1)(torch.zeros(2))
export SAY_STACK = import sys, torch; print("stack: Python", sys.version.split()[0], "| torch", torch.__version__, "| CUDA", torch.version.cuda, "| GPU usable:", torch.cuda.is_available())
VENV := .venv
PY := $(VENV)/bin/python
TORCH ?= torch==2.13.0
# Triton for chapter 13 on the CPU-only stack, where its interpreter (TRITON_INTERPRET=1) runs the
# kernels on CPU tensors. A CUDA build of torch brings the Triton it pins, so pyproject.toml names
# none; this is the release torch 2.13.0's CUDA build pins. Linux wheels only: elsewhere pip skips it.
TRITON ?= triton==3.7.1

.PHONY: setup run test lint lab tidy clean test-cuda-build test-newest-torch selftest wheelhouse test-selftest-offline \
	verified handout teacher

setup: $(VENV)/.installed

# The learner package (helpers) plus the course tooling and test extras.
$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)"
	$(PY) -m pip install --quiet "$(TRITON); platform_system == 'Linux'"
	$(PY) -m pip install --quiet -e '.[course,dev]'
	$(PY) -c "$$PRIME_INDUCTOR"
	touch $@

run: setup
	$(PY) -m coursetools run $(if $(filter-out 0,$(QUICK)),--quick)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: setup lint
	$(PY) -m pytest

lab: setup
	$(VENV)/bin/jupyter lab notebooks

# The self-test runs on the interpreter and torch already on the GPU machine, never on .venv: it
# tests the torch learners there have, and installs nothing but what WHEELHOUSE holds.
selftest:
	$(PYTHON) -m coursetools selftest $(if $(WHEELHOUSE),--wheelhouse $(WHEELHOUSE)) --json build/selftest.json \
		--bundle build/gpu-run.tar.gz

wheelhouse:
	$(PYTHON) -m coursetools wheelhouse --out build/wheelhouse $(if $(WHEEL_PYTHON),--python $(WHEEL_PYTHON)) \
		$(if $(HAVE),--have $(HAVE))

# CI's proof that the self-test installs offline: a wheelhouse for this machine's Python, a fresh venv
# holding torch alone, the self-test's needs installed from the folder alone, then chapter 01 and the
# GPU tests (skipped here, each with its reason).
OFFLINE := build/offline
test-selftest-offline:
	rm -rf $(OFFLINE)
	$(PYTHON) -m venv $(OFFLINE)/venv
	$(OFFLINE)/venv/bin/python -m pip install --quiet "$(TORCH)"
	$(PYTHON) -m coursetools wheelhouse --out $(OFFLINE)/wheelhouse \
		--python $$($(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	$(OFFLINE)/venv/bin/python -m coursetools selftest --wheelhouse $(OFFLINE)/wheelhouse --only 01 \
		--json $(OFFLINE)/selftest.json

verified: setup
	$(PY) -m coursetools verified

handout: setup
	$(PY) -m coursetools edition handout

teacher: setup
	$(PY) -m coursetools edition teacher

tidy: setup
	$(PY) -m coursetools tidy

# Two more stacks a learner has, each a venv on Python 3.12 (Kaggle's, where this machine has it)
# with a CUDA build of torch, on a machine without an NVIDIA driver, where the first CUDA call
# raises "Found no NVIDIA driver" and device-generic calls pick CUDA: the oldest supported torch
# (what Kaggle runs), and the newest release (what `pip install torch` gives a learner today).
CUDA_VENV := .venv-cuda-nodriver
CUDA_TORCH ?= torch==2.10.0
NEWEST_VENV := .venv-torch-newest
NEWEST_TORCH ?= torch==2.15.0
TORCH_OF_$(CUDA_VENV) = $(CUDA_TORCH)
TORCH_OF_$(NEWEST_VENV) = $(NEWEST_TORCH)
PYTHON312 := $(firstword $(foreach p,python3.12 $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12),$(shell $(p) -c "" >/dev/null 2>&1 && echo $(p))) $(PYTHON))
# A CUDA build with its NVIDIA libraries is 6-8 GB in the venv; --no-cache-dir keeps pip from keeping
# a second copy of its wheels. These machines cap pip's torch with a constraints file (/etc/xdg/pip); an empty constraints file
# lifts it for these installs (an empty PIP_CONSTRAINT does not, on pip 23-26). Harmless elsewhere.
NO_CAP := PIP_CONSTRAINT=/dev/null

.venv-%/.installed: pyproject.toml
	$(PYTHON312) -m venv $(@D)
	$(NO_CAP) $(@D)/bin/python -m pip install --quiet --upgrade pip
	$(NO_CAP) $(@D)/bin/python -m pip install --quiet --no-cache-dir "$(TORCH_OF_$(@D))"
	$(NO_CAP) $(@D)/bin/python -m pip install --quiet -e '.[course,dev]'
	$(@D)/bin/python -c "import torch, sys; sys.exit(0 if torch.version.cuda and not torch.cuda.is_available() else 'expected a CUDA build of torch and no usable GPU')"
	$(@D)/bin/python -c "$$PRIME_INDUCTOR"
	touch $@

# The unit tests and every chapter, on the venv $(1).
stack_tests = $(1)/bin/python -c "$$SAY_STACK" && $(1)/bin/python -m pytest tests/unit notebooks

test-cuda-build: $(CUDA_VENV)/.installed
	$(call stack_tests,$(CUDA_VENV))

test-newest-torch: $(NEWEST_VENV)/.installed
	$(call stack_tests,$(NEWEST_VENV))

clean:
	rm -rf build
