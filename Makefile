# The two commands that matter: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run test bench lint screenshots clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/rlm-desktop

test: $(STAMP)
	$(VENV)/bin/ruff check rlm_desktop tests
	$(VENV)/bin/mypy
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest tests/benchmarks -m bench -s -p no:randomly --timeout=900

lint: $(STAMP)
	$(VENV)/bin/ruff check rlm_desktop tests
	$(VENV)/bin/mypy

SCREENSHOT_DEBS := xvfb libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 \
	libxcb-render-util0 libxcb-shape0 libxcb-sync1 libxcb-xfixes0 libxcb-xkb1 libxkbcommon-x11-0 libx11-xcb1

screenshots: $(STAMP)
	@command -v Xvfb >/dev/null || { test "$$(id -u)" = 0 && apt-get update -qq && \
		apt-get install -y -qq --no-install-recommends $(SCREENSHOT_DEBS); } || \
		{ echo "make screenshots needs: $(SCREENSHOT_DEBS)"; exit 1; }
	$(PY) -m tests.screenshots

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
