# `make preview` and `make test` work on a fresh machine: the first use creates .venv and installs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STACK ?= prod

.PHONY: preview test bench clean

$(VENV)/.installed: requirements.txt requirements-dev.txt policies/requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

preview: $(VENV)/.installed
	$(PY) -m mixed_os_racks.offline preview --stack $(STACK)

test: $(VENV)/.installed
	$(PY) -m pytest -q

bench: $(VENV)/.installed
	$(PY) benchmarks/bench_preview.py
	$(PY) benchmarks/bench_policy.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
