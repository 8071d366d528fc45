# The course's commands; each sets up .venv first if it is missing or out of date.
#   make run         execute every chapter headless into build/ (QUICK=1 for small sizes)
#   make test        the whole test suite (what CI runs)
#   make lab         JupyterLab on notebooks/
# torch is pinned so that set-up is quick and predictable; pick another supported release with
# e.g. `make run TORCH=torch==2.10.0` (pyproject.toml declares the supported range).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
TORCH ?= torch==2.13.0

.PHONY: setup run test lab clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH)"
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

run: setup
	$(PY) -m helpers run $(if $(filter-out 0,$(QUICK)),--quick)

test: setup
	$(PY) -m pytest

lab: setup
	$(VENV)/bin/jupyter lab notebooks

clean:
	rm -rf build
