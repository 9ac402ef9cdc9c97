# `make preview` and `make test` work on a fresh machine: the first use creates the virtualenvs and
# installs: .venv (this package, editable, and the test tools) and policies/venv (the policy pack's
# own, which `pulumi preview --policy-pack policies` and the offline preview both start it in; it
# installs this package too, whose pack/ holds the policies).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PACK_VENV := policies/venv
PIP_FLAGS := --quiet --disable-pip-version-check
STACK ?= prod

.PHONY: preview test test-fast lint format bench readme tables prices clean compiled python

$(VENV)/.installed: requirements.txt requirements-dev.txt policies/requirements.txt pyproject.toml
	@echo "make: creating $(VENV): this package (editable), the Pulumi SDKs and the test tools, from PyPI (a few minutes the first time)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install $(PIP_FLAGS) -r requirements-dev.txt
	@echo "make: creating $(PACK_VENV): the policy pack's own virtualenv, as pulumi preview --policy-pack policies runs it"
	$(PYTHON) -m venv $(PACK_VENV)
	cd policies && venv/bin/python -m pip install $(PIP_FLAGS) -r requirements.txt
	touch $@

# The TypeScript example's packages (@pulumi/pulumi, @pulumi/kubernetes, typescript), exactly as its lock file
# pins them, for the tests that preview it offline. Without npm the step says so, and those tests skip. No install
# scripts: @pulumi/kubernetes's only fetches its provider binary through the Pulumi CLI, which an offline preview
# does not use (and which ends with success when the CLI is absent).
NODE_EXAMPLE := examples/typescript-consumer
# Only the tests and the benchmark need them: `make preview` runs the Python rack program, and does not install them.
$(NODE_EXAMPLE)/node_modules/.package-lock.json: $(NODE_EXAMPLE)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then echo "make: installing the TypeScript example's Node.js packages (npm ci in $(NODE_EXAMPLE))"; \
	cd $(NODE_EXAMPLE) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error; \
	else echo "npm not found: the TypeScript example's tests will skip (install Node.js 20+ and npm)"; fi

# The package byte-compiled, as pip compiles what it installs: an editable install is not, and with
# PYTHONDONTWRITEBYTECODE set every process (each preview, each pack) would compile it again.
python: $(VENV)/.installed
	@$(PY) -m compileall -q components

# Everything the tests and the benchmark need: the virtualenvs, the compiled package, the Node.js packages.
compiled: python $(NODE_EXAMPLE)/node_modules/.package-lock.json

preview: python
	@echo "make: the offline preview of the $(STACK) stack (mixed-os-racks preview --stack $(STACK))"
	$(PY) -m mixed_os_racks.offline preview --stack $(STACK)

# HYPOTHESIS_PROFILE=wide make test: new property-test draws each run, and more of them (tests/conftest.py)
test: compiled lint  # the format and lint check, the type check (mypy, strict, over components/: configured in pyproject.toml), then the tests
	$(PY) -m mypy
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(PY) -m pytest -q -n auto --dist loadscope

# The inner loop: the type check and every test but the end-to-end ones marked slow (pip, git and Node.js
# installs, wheels, pyright, tsc, npm programs); `make test` runs them all.
test-fast: compiled lint
	$(PY) -m mypy
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(PY) -m pytest -q -n auto --dist loadscope -m "not slow"

# The formatter and the linter (ruff, configured in pyproject.toml) over the package, its tests, benchmarks and
# entry points: `make lint` checks, `make format` rewrites.
LINTED := components tests benchmarks policies/__main__.py provider
lint: $(VENV)/.installed
	$(VENV)/bin/ruff format --check --quiet $(LINTED)
	$(VENV)/bin/ruff check --quiet $(LINTED)

format: $(VENV)/.installed
	$(VENV)/bin/ruff format --quiet $(LINTED)
	$(VENV)/bin/ruff check --fix --quiet $(LINTED)

bench: compiled  # all run; it fails when any misses a bar
	status=0; for bench in bench_preview bench_policy bench_typescript bench_lanes; do $(PY) benchmarks/$$bench.py || status=1; done; exit $$status

readme: $(VENV)/.installed
	$(PY) -m mixed_os_racks.docs README.md docs/*.md

# The upstream tables generated from upstream files (components/facts/tables.py lists every table, its source,
# commit and date, and how the others are refreshed): the on-demand price table (components/facts/pricelist.py),
# the instance sizes and Karpenter's compatibility matrices (generated blocks of components/facts/instances.py and
# upstream.py), from a clone of
# aws/karpenter-provider-aws: make tables KARPENTER=~/src/karpenter-provider-aws [COMMIT=v1.14.1]
COMMIT ?= HEAD
tables: $(VENV)/.installed
	$(PY) -m mixed_os_racks.facts.pricegen --repo $(KARPENTER) --commit $(COMMIT)
	$(PY) -m mixed_os_racks.facts.sizegen --repo $(KARPENTER) --commit $(COMMIT)
	$(PY) -m mixed_os_racks.facts.matrixgen --repo $(KARPENTER) --commit $(COMMIT)

prices: tables  # its former name

clean:
	rm -rf $(VENV) $(PACK_VENV) $(NODE_EXAMPLE)/node_modules .pytest_cache .hypothesis
