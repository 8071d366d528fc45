# The course's commands; each sets up .venv first if it is missing or out of date.
#   make run         execute every chapter headless into build/ (QUICK=1 for small sizes)
#   make test        lint, then the whole test suite (what CI runs)
#   make lab         JupyterLab on notebooks/
#   make tidy        put every chapter in the course's shape after editing it
#   make test-cuda-build   every chapter and the unit tests on a CUDA build of torch with no GPU driver
#   make selftest    on a CUDA machine: every chapter, then the GPU tests, one table (build/selftest.json)
#   make verified    write docs/verified.* from the runs above (after make test, make test-cuda-build)
#   make handout     build/handout/: chapters, helpers without the exercise solutions, the site (after make run)
#   make teacher     build/teacher/: the same with the solutions (after make run)
# torch is pinned so that set-up is quick and predictable; pick another supported release with
# e.g. `make run TORCH=torch==2.10.0` (pyproject.toml declares the supported range).
PYTHON ?= python3

# torch.compile's first use on a machine probes the CPU's vector instructions by compiling small
# test programs (about 10 s here), cached in the temporary folder. Set-up pays it once, so chapter
# 11's QUICK time measures the chapter; its own first compile is still cold (a new graph).
export PRIME_INDUCTOR = import torch; torch.compile(lambda x: x + 1)(torch.zeros(2))
VENV := .venv
PY := $(VENV)/bin/python
TORCH ?= torch==2.13.0

.PHONY: setup run test lint lab tidy clean test-cuda-build selftest verified handout teacher

setup: $(VENV)/.installed

# The learner package (helpers) plus the course tooling and test extras.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)"
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

selftest: setup
	$(PY) -m helpers selftest --json build/selftest.json

verified: setup
	$(PY) -m coursetools verified

handout: setup
	$(PY) -m coursetools edition handout

teacher: setup
	$(PY) -m coursetools edition teacher

tidy: setup
	$(PY) -m coursetools tidy

# The second stack a learner has: a CUDA build of the oldest supported torch (what Kaggle runs)
# on a machine without an NVIDIA driver, where the first CUDA call raises "Found no NVIDIA
# driver" and device-generic calls pick CUDA. Python 3.12 (Kaggle's) where this machine has it.
CUDA_VENV := .venv-cuda-nodriver
CUDA_TORCH ?= torch==2.10.0
PYTHON312 := $(firstword $(foreach p,python3.12 $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12),$(shell $(p) -c "" >/dev/null 2>&1 && echo $(p))) $(PYTHON))

$(CUDA_VENV)/.installed: pyproject.toml
	$(PYTHON312) -m venv $(CUDA_VENV)
	$(CUDA_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CUDA_VENV)/bin/python -m pip install --quiet "$(CUDA_TORCH)"
	$(CUDA_VENV)/bin/python -m pip install --quiet -e '.[course,dev]'
	$(CUDA_VENV)/bin/python -c "import torch, sys; sys.exit(0 if torch.version.cuda and not torch.cuda.is_available() else 'expected a CUDA build of torch and no usable GPU')"
	$(CUDA_VENV)/bin/python -c "$$PRIME_INDUCTOR"
	touch $@

test-cuda-build: $(CUDA_VENV)/.installed
	$(CUDA_VENV)/bin/python -c "import sys, torch; print('CUDA-build stack: Python', sys.version.split()[0], '| torch', torch.__version__, '| CUDA', torch.version.cuda, '| GPU usable:', torch.cuda.is_available())"
	$(CUDA_VENV)/bin/python -m pytest tests/unit notebooks

clean:
	rm -rf build
