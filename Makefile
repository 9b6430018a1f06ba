# The two commands of the README. Everything builds in the release profile,
# so RocksDB (C++, ~14 minutes on two cores) is compiled once and shared by
# tests, runs and benches; scripts/build.sh says what that first build does.

CARGO ?= cargo
LAB = $(CARGO) run --release --quiet -p bench-harness --bin lab --

.PHONY: demo test setup build lint flink

setup:
	@bash scripts/setup.sh

build: setup
	@bash scripts/build.sh --workspace --all-targets

demo: setup
	@bash scripts/build.sh -p bench-harness --bin lab
	@bash scripts/demo.sh

# Flink, the second engine: .flink/venv with the pinned apache-flink and the
# lab's capture sink (reused when present; the Flink test also runs it).
flink: setup
	@bash scripts/build.sh -p bench-harness --bin lab
	$(LAB) flink install

test: flink
	@bash scripts/build.sh --workspace
	$(CARGO) test --release --workspace

lint: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
