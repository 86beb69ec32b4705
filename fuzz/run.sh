#!/usr/bin/env bash
# Builds one fuzz target with libFuzzer's coverage instrumentation on the
# stable toolchain (the flags cargo-fuzz passes, without a sanitizer) and runs
# it for the given seconds. Not part of CI.
#   fuzz/run.sh store_filter_line 120
set -euo pipefail
target=${1:?which target? see the [[bin]] names in fuzz/Cargo.toml}
seconds=${2:-120}
cd "$(dirname "$0")"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks" \
  cargo build --release --target x86_64-unknown-linux-gnu --bin "$target"
mkdir -p "corpus/$target"
exec "$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release/$target" "corpus/$target" \
  -max_total_time="$seconds" -rss_limit_mb=2048
