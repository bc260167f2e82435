# Two entry points, each doing all set-up on a fresh machine (Python 3.10+):
#   make book   execute every chapter (default preset) into build/ and refresh papers_figures/
#               (EDITION=student: the book without the exercises' solutions, and its site, into build/student/)
#   make test   run the test suite (unit tests + every chapter at the smoke preset)
#   make site   the executed book (after make book) as a static HTML site, offline
#   make lab    JupyterLab on notebooks/ (a double click opens a chapter as a notebook)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PRESET ?= default
# full: the book with the exercises' solutions; student: without them (the checks stay), for a teacher to hand out
EDITION ?= full
JOBS ?= 2  # chapters make book runs side by side (one thread each)
export HF_HUB_OFFLINE := 1
export PYTHONHASHSEED := 0

# JupyterLab settings of this environment: a double click opens a Python file (every chapter, notebooks/NN_*.py)
# as a notebook through jupytext, instead of as text; and no news or update pop-up (the book works offline)
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.d/covlib.json

.PHONY: book site test setup lab bench lint clean

setup: $(STAMP) $(LAB_SETTINGS)

# torch is installed first and pinned to 2.13.0: on this machine pip takes the CPU wheel from
# disk; any other spec would download a multi-GB CUDA build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

$(LAB_SETTINGS): $(STAMP) Makefile
	$(BIN)/jupytext-config --settings-file $@ set-default-viewer python
	$(BIN)/python -m covlib.book.lab_settings $@

book: setup
	$(BIN)/covlib book --preset $(PRESET) --jobs $(JOBS) --edition $(EDITION)
	$(if $(filter student,$(EDITION)),$(BIN)/covlib site --preset $(PRESET) --edition student)

# the executed chapters in build/$(PRESET)/ as a static HTML book: build/site/$(PRESET)/index.html
# (EDITION=student: build/student/$(PRESET)/ into build/student/site/$(PRESET)/index.html)
site: setup
	$(BIN)/covlib site --preset $(PRESET) --edition $(EDITION)

test: setup
	$(BIN)/python -m pytest -q

lab: setup
	$(BIN)/jupyter lab notebooks/ $(if $(filter 0,$(shell id -u)),--allow-root)

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check covlib tests benchmarks notebooks

clean:
	rm -rf build
