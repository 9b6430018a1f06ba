#!/usr/bin/env bash
# Installs what the build needs and a fresh machine of this kind lacks:
# libclang, which the `rocksdb` crate's bindings generator (bindgen, through
# clang-sys) loads at build time, and a JDK 17 (java, javac, jar), which
# Flink and the lab's capture sink need (`lab flink install` then makes the
# project's PyFlink virtualenv); and ccache when it can, through which
# scripts/cxx compiles RocksDB once per machine. Safe to run again: it does
# nothing when they are already there.
#
#   scripts/setup.sh            detect, install when missing
#   scripts/setup.sh --check    detect only: exit 0 when found, 1 when missing
#
# Detection follows clang-sys: in $LIBCLANG_PATH, `llvm-config --libdir` and
# the system library directories it searches, a file named `libclang.so`,
# `libclang-*.so`, `libclang.so.*` or `libclang-*.so.*`, but never
# `libclang-cpp.so*` (Clang's C++ library, which a fresh Debian machine has
# without libclang itself). SETUP_ROOT prefixes every system directory, so a
# test can point the detection at a fake tree.
set -euo pipefail

root="${SETUP_ROOT:-}"

# Is $1 a libclang clang-sys would load?
is_libclang() {
  local name
  name="$(basename "$1")"
  case "$name" in
    libclang-cpp.so | libclang-cpp.so.* | libclang-cpp[.-]*) return 1 ;;
    libclang.so | libclang-*.so | libclang.so.* | libclang-*.so.*) return 0 ;;
    *) return 1 ;;
  esac
}

# Prints the first libclang found in the directories given, if any.
find_in() {
  local dir f
  for dir in "$@"; do
    [ -d "$dir" ] || continue
    for f in "$dir"/libclang*; do
      [ -e "$f" ] || continue
      if is_libclang "$f"; then
        echo "$f"
        return 0
      fi
    done
  done
  return 1
}

find_libclang() {
  local dirs=()
  if [ -n "${LIBCLANG_PATH:-}" ]; then
    dirs+=("$LIBCLANG_PATH")
  fi
  if [ -z "$root" ] && command -v llvm-config >/dev/null 2>&1; then
    dirs+=("$(llvm-config --libdir 2>/dev/null || true)")
  fi
  local d
  for d in "$root"/usr/lib/llvm-* "$root"/usr/local/llvm*/lib "$root"/usr/lib/llvm-*/lib \
    "$root"/usr/lib/x86_64-linux-gnu "$root"/usr/lib/aarch64-linux-gnu "$root"/usr/lib64 \
    "$root"/usr/lib "$root"/usr/local/lib "$root"/usr/local/lib64 "$root"/lib/x86_64-linux-gnu; do
    dirs+=("$d")
  done
  find_in "${dirs[@]}"
}

if [ "${1:-}" = "--check" ]; then
  if found="$(find_libclang)"; then
    echo "setup: libclang found: $found"
    exit 0
  fi
  echo "setup: libclang not found"
  exit 1
fi

if ! find_libclang >/dev/null; then
  echo "setup: installing libclang-dev (needed to build RocksDB's Rust bindings)" >&2
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
  elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "setup: libclang is missing and this user cannot install packages; install libclang-dev" >&2
    exit 2
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libclang-dev >/dev/null
  if ! find_libclang >/dev/null; then
    echo "setup: libclang-dev was installed but no libclang.so was found; set LIBCLANG_PATH" >&2
    exit 2
  fi
fi

have_jdk() {
  command -v javac >/dev/null 2>&1 && command -v jar >/dev/null 2>&1 &&
    java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])'
}

if ! have_jdk; then
  echo "setup: installing openjdk-17-jdk-headless (Flink, the second engine, runs on it)" >&2
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
  elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "setup: a JDK 17+ is missing and this user cannot install packages; install openjdk-17-jdk-headless" >&2
    exit 2
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-jdk-headless >/dev/null
fi

# ccache is a speed-up, not a need (scripts/cxx compiles without it): a
# machine that cannot install it builds RocksDB in every clone.
if ! command -v ccache >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
  elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    SUDO="none"
  fi
  if [ "$SUDO" != "none" ]; then
    echo "setup: installing ccache (a clone or worktree then reuses this machine's compiled RocksDB)" >&2
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq ccache >/dev/null; } ||
      echo "setup: ccache could not be installed; every clone compiles RocksDB itself" >&2
  fi
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo is not on PATH; install the Rust toolchain (rustup)" >&2
  exit 2
fi
