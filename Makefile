# The two commands of the README. Everything builds in the release profile,
# so RocksDB (C++, ~14 minutes on two cores) is compiled once and shared by
# tests, runs and benches; scripts/build.sh says what that first build does.

CARGO ?= cargo

.PHONY: demo test setup build lint

setup:
	@bash scripts/setup.sh

build: setup
	@bash scripts/build.sh --workspace --all-targets

demo: setup
	@bash scripts/build.sh -p bench-harness --bin lab
	@bash scripts/demo.sh

test: setup
	@bash scripts/build.sh --workspace
	$(CARGO) test --release --workspace

lint: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
