# One developer entry point that mirrors CI: `make test` is what .ci/run runs.
PY ?= python3

.PHONY: test deps install lint rust-test py-test bench

test: deps install lint rust-test py-test

# Debian packages the tests run: strace and Valgrind as tracers, postmark
# and bonnie++ as the real programs they capture, zstd to compress traces,
# headless Chromium with its WebDriver to render the HTML reports, and the
# programs whose captures S5's paging reproduction ships
# (python/tierlab/experiments/traces/make-s5-traces.sh remakes them).
# CMDS: the command each package puts on the PATH, in the same order.
DEBS = strace valgrind postmark bonnie++ zstd chromium chromium-driver freecell-solver-bin vim libjpeg-turbo-progs poppler-utils flac
CMDS = strace valgrind postmark bonnie++ zstd chromium chromedriver fc-solve vim djpeg pdftoppm flac
deps:
	@missing=""; for p in $(CMDS); do command -v $$p >/dev/null || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(DEBS); \
	fi

# Builds the engine (release, LTO) into the package, with the test tools.
install:
	$(PY) -m pip install --quiet -e '.[test]'

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(PY) -m ruff check python tests benches docs
	$(PY) -m ruff format --check python tests benches docs
	$(PY) -m mypy python/tierlab

rust-test:
	cargo test -p tierlab-core

py-test:
	$(PY) -m pytest

# Speed: criterion in the core crate, then tierlab beside libCacheSim.
bench:
	cargo bench -p tierlab-core
	$(PY) benches/vs_libcachesim.py --trace bench-data/zipf20m.oracleGeneral.bin --generate
