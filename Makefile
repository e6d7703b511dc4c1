# geon: two commands.
#   make run    set up everything, then serve the editor (Daphne) and a Celery worker
#   make test   the same set-up, then every check and the whole test suite
#
# Needs Python >= 3.11 and Node >= 20.19 on the PATH; everything else is installed here.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
# Each recipe runs in one shell, so `make run` can export the secret and then exec the server.
.ONESHELL:
.DEFAULT_GOAL := help

PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8000
CHROMIUM ?= /usr/bin/chromium

VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.geon-installed
NODE_MODULES := frontend/node_modules/.geon-installed
BUNDLE := geon/static/editor/editor.js
FRONTEND_SOURCES := $(shell find frontend/src -type f) frontend/vite.config.ts frontend/tsconfig.json

export GEON_DATA_DIR ?= $(CURDIR)/data
SECRET_FILE := $(GEON_DATA_DIR)/secret_key
DEMO_PASSWORD_FILE := $(GEON_DATA_DIR)/demo_password
# Static checks import the settings (mypy's Django plugin, makemigrations) but use no secret.
CHECK_ENV := SECRET_KEY=static-checks-only GEON_DATA_DIR=$(GEON_DATA_DIR)/checks

.PHONY: help setup run test lint frontend-check protocol api-client format pytest chromium clean

help:
	@echo "make run    set up and serve geon on http://localhost:$(PORT)/ (Ctrl-C stops)"
	@echo "make test   set up, then run every check and the whole test suite"

# --- set-up ---------------------------------------------------------------------------------

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,jax]'
	touch $@

$(NODE_MODULES): frontend/package.json frontend/package-lock.json
	(cd frontend && npm ci --no-audit --no-fund --loglevel=error)
	touch $@

$(BUNDLE): $(NODE_MODULES) $(FRONTEND_SOURCES)
	(cd frontend && npm run --silent build)

setup: $(INSTALLED) $(BUNDLE)

$(SECRET_FILE):
	mkdir -p $(GEON_DATA_DIR)
	umask 077 && $(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(48))' > $@

$(DEMO_PASSWORD_FILE):
	mkdir -p $(GEON_DATA_DIR)
	umask 077 && $(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(9))' > $@

# --- make run -------------------------------------------------------------------------------

run: setup $(SECRET_FILE) $(DEMO_PASSWORD_FILE)
	export SECRET_KEY="$${SECRET_KEY:-$$(cat $(SECRET_FILE))}"
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py ensure_demo_user --username demo --password "$$(cat $(DEMO_PASSWORD_FILE))"
	$(BIN)/python manage.py load_gallery --owner demo
	exec $(BIN)/python -m geon serve --host $(HOST) --port $(PORT)

# --- make test ------------------------------------------------------------------------------

chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
	  echo "installing Debian's chromium for the browser tests"; \
	  sudo=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
	  $$sudo apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends chromium; \
	fi

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(CHECK_ENV) $(BIN)/mypy
	$(BIN)/lint-imports --no-logo
	$(CHECK_ENV) $(BIN)/python manage.py makemigrations --check --dry-run

# The editor's protocol types, generated from the websocket's schemas (geon/graphs/protocol.py).
PROTOCOL_TS := frontend/src/sync/protocol.ts
PROTOCOL_GEN = $(BIN)/python -m geon.graphs.protocol_schema | (cd frontend && node scripts/protocol.mjs)

protocol: $(INSTALLED) $(NODE_MODULES)
	$(PROTOCOL_GEN) > $(PROTOCOL_TS)

# The editor's REST types (used by frontend/src/api/), generated from the server's OpenAPI
# document (geon/api.py, django-ninja's export_openapi_schema; no server runs) by
# openapi-typescript. Generated files live in frontend/generated/, beside the written ones.
OPENAPI_JSON := frontend/generated/openapi.json
OPENAPI_TS := frontend/generated/api-schema.d.ts
OPENAPI_DUMP = $(CHECK_ENV) $(BIN)/python manage.py export_openapi_schema --api geon.api.api --indent 2
# (a field with a default is optional: in a request body the server fills it in)
OPENAPI_GEN = (cd frontend && npx --no-install openapi-typescript --default-non-nullable false)

api-client: $(INSTALLED) $(NODE_MODULES)
	$(OPENAPI_DUMP) > $(OPENAPI_JSON)
	$(OPENAPI_GEN) < $(OPENAPI_JSON) > $(OPENAPI_TS)

frontend-check: $(INSTALLED) $(NODE_MODULES)
	fresh=$$(mktemp)
	$(PROTOCOL_GEN) > "$$fresh"
	if ! diff -u $(PROTOCOL_TS) "$$fresh"; then \
	  rm -f "$$fresh"; \
	  echo "$(PROTOCOL_TS) is not current with geon/graphs/protocol.py: run make protocol"; exit 1; \
	fi
	$(OPENAPI_DUMP) > "$$fresh"
	if ! diff -u $(OPENAPI_JSON) "$$fresh" || ! $(OPENAPI_GEN) < "$$fresh" | diff -u $(OPENAPI_TS) -; then \
	  rm -f "$$fresh"; \
	  echo "$(OPENAPI_JSON) or $(OPENAPI_TS) is not current with the server's API: run make api-client"; exit 1; \
	fi
	rm -f "$$fresh"
	(cd frontend && $(PRETTIER) --check $(PRETTIER_FILES))
	(cd frontend && npm run --silent typecheck && npm run --silent test)

# The TypeScript's formatting (prettier, frontend/.prettierrc.json): frontend-check (so make test)
# fails on a file prettier would change; `make format` writes them.
PRETTIER := npx --no-install prettier --log-level warn
PRETTIER_FILES := src scripts vite.config.ts
format: $(NODE_MODULES)
	(cd frontend && $(PRETTIER) --write $(PRETTIER_FILES))

# Each step's seconds (steps.tsv) and each suite's (tests/timing_plugin.py) go here; make test
# and make pytest end with them as a table (scripts/ci_timings.py), also when a step failed.
TIMINGS := $(GEON_DATA_DIR)/test-timings
# `step NAME COMMAND...` runs COMMAND and records its seconds and exit status under NAME (recipes
# that use it start with @: .ONESHELL would echo the definition; step echoes each command).
define STEP
microseconds() {  # bash 5's clock; whole seconds where bash is older (macOS's 3.2)
  local now=$${EPOCHREALTIME:-$$SECONDS.000000}
  echo "$${now/[.,]/}"
}
step() {
  local name=$$1 start status=0 took
  start=$$(microseconds)
  shift
  echo "== $$name: $$*"
  "$$@" || status=$$?
  took=$$(( ($$(microseconds) - start) / 100000 ))
  printf '%s\t%d.%d\t%d\n' "$$name" $$((took / 10)) $$((took % 10)) "$$status" \
    >> "$$GEON_TEST_TIMINGS/steps.tsv"
  return $$status
}
if [ -z "$${GEON_TEST_TIMINGS:-}" ]; then
  export GEON_TEST_TIMINGS=$(TIMINGS)
  rm -rf "$$GEON_TEST_TIMINGS" && mkdir -p "$$GEON_TEST_TIMINGS"
  trap '$(PYTHON) scripts/ci_timings.py "$$GEON_TEST_TIMINGS"' EXIT
fi
endef

# The second pass, on PostgreSQL and Redis, runs what differs there: the tests that touch the
# database, the channel layer or the broker (tests/suite_marks.py marks them), and of the browser
# stories the few marked story_on_services. The first pass runs everything.
SECOND_PASS := (database or channel_layer or broker) and not browser or story_on_services

# pytest exits 5 when it collects nothing; like every other non-zero status, that fails make.
pytest: setup chromium
	@$(STEP)
	step "pytest pass 1" env -u REDIS_URL -u DATABASE_URL GEON_TEST_PASS=1 $(BIN)/python -m pytest
	if [ -n "$${REDIS_URL:-}$${DATABASE_URL:-}" ]; then
	  echo "again against REDIS_URL=$${REDIS_URL:-(unset)} DATABASE_URL=$${DATABASE_URL:-(unset)}:"
	  echo "  -m '$(SECOND_PASS)'"
	  step "pytest pass 2" env GEON_TEST_PASS=2 $(BIN)/python -m pytest -m '$(SECOND_PASS)'
	fi

test:
	@$(STEP)
	step setup $(MAKE) --no-print-directory setup chromium
	step lint $(MAKE) --no-print-directory lint
	step frontend-check $(MAKE) --no-print-directory frontend-check
	$(MAKE) --no-print-directory pytest

clean:
	rm -rf $(VENV) frontend/node_modules geon/static/editor .mypy_cache .ruff_cache .pytest_cache
