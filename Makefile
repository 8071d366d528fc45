# The course's commands; each sets up .venv first if it is missing or out of date.
#   make run         execute every chapter headless into build/ (QUICK=1 for small sizes)
#   make test        lint, then the whole test suite (what CI runs)
#   make lab         JupyterLab on notebooks/
#   make tidy        put every chapter in the course's shape after editing it
# torch is pinned so that set-up is quick and predictable; pick another supported release with
# e.g. `make run TORCH=torch==2.10.0` (pyproject.toml declares the supported range).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
TORCH ?= torch==2.13.0

.PHONY: setup run test lint lab tidy clean

setup: $(VENV)/.installed

# The learner package (helpers) plus the course tooling and test extras.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)"
	$(PY) -m pip install --quiet -e '.[course,dev]'
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

tidy: setup
	$(PY) -m coursetools tidy

clean:
	rm -rf build
