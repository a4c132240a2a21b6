# ccarena: set-up, quick start, tests and benchmark.
#   make quickstart   build the package into .venv (what running needs) and run scenarios/quickstart.toml
#   make emu          build the link emulator of `--backend emu` into .venv/bin/ccarena-emu
#   make install      both: the package and the emulator
#   make test         install, add the test and dask extras, then run every test (cargo and pytest)
#   make wheel        an abi3 wheel (Python >= 3.11) in target/wheels/, installable without Rust; .ci/wheel-check tries it
#   make bench        engine packets per second on fixed scenarios
#   make fuzz         2000 fuzzed experiment files through ccarena run
#   make reproduce-all every full preset of scenarios/<paper>/, stored in scenarios/<paper>/results/, and the
#                      README's table of published experiments made from the stored results
#   make emu-deps     what the emulation backend needs from the system (iproute2), if missing
#   make browser-deps what the report test needs from the system (chromium, chromedriver), if missing

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ccarena-built
EXTRAS := $(VENV)/.ccarena-extras
EMU    := $(VENV)/bin/ccarena-emu
SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml pyproject.toml

.PHONY: install quickstart emu wheel test test-rust test-python bench fuzz reproduce-all clean emu-deps browser-deps

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/bin/maturin: | $(PY)
	$(PY) -m pip install --quiet "maturin>=1.5,<2"

# The package (editable) and its dependencies: what running needs.
$(STAMP): $(PY) $(SOURCES) | $(VENV)/bin/maturin
	$(VENV)/bin/maturin develop --quiet --release
	touch $(STAMP)

# The test and dask extras on top: a second stamp, so that a venv first built without them gets them.
$(EXTRAS): $(PY) pyproject.toml | $(STAMP)
	$(VENV)/bin/maturin develop --quiet --release --extras test,dask
	touch $(EXTRAS)

# The link emulator of `ccarena run --backend emu`, next to the venv's python.
$(EMU): $(PY) $(SOURCES)
	cargo build --quiet --release -p ccarena-emu
	install -m 755 target/release/ccarena-emu $(EMU)

# The report test opens reports in a headless browser: Debian's chromium and its driver,
# installed only when missing and when root.
browser-deps:
	@command -v chromedriver >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } || true

# The emulation backend uses `ip` (iproute2); installed only when missing and when root.
emu-deps:
	@command -v ip >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null; } || true

install: $(STAMP) $(EMU)

emu: $(EMU)

# An abi3 wheel of the package (not the emulator), built with the venv's python so that it reuses
# the develop build in target/; the previous wheels are removed first.
wheel: | $(VENV)/bin/maturin
	rm -rf target/wheels
	$(VENV)/bin/maturin build --quiet --release -i $(PY) --out target/wheels

quickstart: $(STAMP)
	$(VENV)/bin/ccarena run scenarios/quickstart.toml

test-rust:
	cargo test --quiet --workspace --exclude ccarena-py

test-python: $(STAMP) $(EXTRAS) $(EMU) emu-deps browser-deps
	$(PY) -m pytest -q tests

test: test-rust test-python

bench:
	bash bench/run.sh

# 2000 fuzzed experiment files (make test runs 200)
# Longer fuzzing: 2000 experiment files through the CLI, and 30 000 engine configurations
# from a fresh random seed (the test suite runs 200 and 3000 from fixed ones).
fuzz: $(STAMP) $(EXTRAS)
	CCARENA_FUZZ_EXAMPLES=2000 $(PY) -m pytest -q tests/test_hardening.py -k fuzz -p no:logging
	PROPTEST_CASES=30000 PROPTEST_RNG_SEED=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ') \
		cargo test --release -p ccarena-sim --test config_boundary -- --nocapture
# Every full preset (B1 takes about 15 min with 2 jobs; each campaign resumes where it stopped), then the table.
# The kernel's runs, as root and in real time (about an hour; B5 and C3 need tcp_cubic's 2.6 settings, see
# their files): $(PY) bench/reproduce_all.py E1 E2 E3 B5 C3 --backend emu --jobs 1
reproduce-all: $(STAMP)
	$(PY) bench/reproduce_all.py --jobs 2

clean:
	rm -rf $(VENV) target
