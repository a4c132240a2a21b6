# ccarena: set-up, quick start, tests and benchmark.
#   make quickstart   build everything into .venv and run scenarios/quickstart.toml
#   make test         build, then run every test (cargo and pytest)
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
EMU    := $(VENV)/bin/ccarena-emu
SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml pyproject.toml

.PHONY: install quickstart test test-rust test-python bench fuzz reproduce-all clean emu-deps browser-deps

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(PY) $(SOURCES)
	$(PY) -m pip install --quiet "maturin>=1.5,<2"
	$(VENV)/bin/maturin develop --quiet --release --extras test,dask
	touch $(STAMP)

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

quickstart: $(STAMP)
	$(VENV)/bin/ccarena run scenarios/quickstart.toml

test-rust:
	cargo test --quiet --workspace --exclude ccarena-py

test-python: $(STAMP) $(EMU) emu-deps browser-deps
	$(PY) -m pytest -q tests

test: test-rust test-python

bench:
	bash bench/run.sh

# 2000 fuzzed experiment files (make test runs 200)
# Longer fuzzing: 2000 experiment files through the CLI, and 30 000 engine configurations
# from a fresh random seed (the test suite runs 200 and 3000 from fixed ones).
fuzz: $(STAMP)
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
