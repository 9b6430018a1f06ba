#!/usr/bin/env bash
# Builds the workspace in the release profile, saying what the long first
# build is doing: RocksDB is C++ compiled from source by the `librocksdb-sys`
# build script (~340 files, about 14 minutes on two cores), during which
# cargo itself prints nothing. While that runs, a line every 30 seconds says
# how many of RocksDB's files are compiled and for how long it has run.
#
#   scripts/build.sh [cargo build arguments, e.g. --workspace or -p bench-harness]
#
# Later builds reuse the compiled RocksDB and print only cargo's own lines.
# Another clone or worktree on the same machine compiles RocksDB again, but
# through ccache (scripts/cxx), which hands back the files compiled before:
# a minute or two instead of fourteen.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
cargo_home="${CARGO_HOME:-$HOME/.cargo}"

rocksdb_built() {
  compgen -G "$target/release/build/librocksdb-sys-*/out/librocksdb.a" >/dev/null
}

# RocksDB's source files, from the crate's own list (blank when not found).
rocksdb_total() {
  local list
  list=$(compgen -G "$cargo_home/registry/src/*/librocksdb-sys-*/rocksdb_lib_sources.txt" | head -n 1 || true)
  if [ -n "$list" ]; then
    # + build_version.cc and snappy's three files, - the Windows/posix swaps.
    echo $(($(grep -c . "$list") + 3))
  fi
}

fmt_duration() {
  printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
}

# Prints progress until the build (pid $1) ends.
watch_rocksdb() {
  local build_pid=$1 start=$SECONDS total compiled
  while kill -0 "$build_pid" 2>/dev/null; do
    sleep 30
    kill -0 "$build_pid" 2>/dev/null || break
    rocksdb_built && break
    total=$(rocksdb_total)
    compiled=$(find "$target"/release/build/librocksdb-sys-*/out -maxdepth 1 -name '*.o' 2>/dev/null | wc -l)
    if [ "$compiled" -gt 0 ]; then
      echo "build: RocksDB ${compiled}${total:+/$total} files compiled ($(fmt_duration $((SECONDS - start))))" >&2
    else
      echo "build: compiling dependencies before RocksDB ($(fmt_duration $((SECONDS - start))))" >&2
    fi
  done
}

if rocksdb_built; then
  exec cargo build --release "$@"
fi

if command -v ccache >/dev/null 2>&1; then
  echo "build: first build of this clone: RocksDB's C++ through ccache (about 14 minutes on two cores" >&2
  echo "build: the first time on this machine, a minute or two after that), then the workspace. Progress every 30 s." >&2
else
  echo "build: first build: compiles RocksDB from source (C++, about 14 minutes on two cores)," >&2
  echo "build: then the workspace; later builds reuse it. Progress every 30 s." >&2
fi
start=$SECONDS
cargo build --release "$@" &
build=$!
watch_rocksdb "$build" &
watcher=$!
trap 'kill "$build" "$watcher" 2>/dev/null || true' INT TERM
status=0
wait "$build" || status=$?
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
if [ "$status" -eq 0 ]; then
  echo "build: done in $(fmt_duration $((SECONDS - start)))" >&2
fi
exit "$status"
