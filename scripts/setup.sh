#!/usr/bin/env bash
# Installs what the build needs and a fresh machine of this kind lacks:
# libclang, which the `rocksdb` crate's bindings generator loads, and a
# JDK 17 (java, javac, jar), which Flink and the lab's capture sink need
# (`lab flink install` then makes the project's PyFlink virtualenv).
# Safe to run again: it does nothing when both are already there.
set -euo pipefail

have_libclang() {
  if [ -n "${LIBCLANG_PATH:-}" ] && ls "$LIBCLANG_PATH"/libclang*.so* >/dev/null 2>&1; then
    return 0
  fi
  ls /usr/lib/llvm-*/lib/libclang*.so* /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1
}

if ! have_libclang; then
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

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo is not on PATH; install the Rust toolchain (rustup)" >&2
  exit 2
fi
