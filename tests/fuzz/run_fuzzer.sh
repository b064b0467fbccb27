#!/usr/bin/env bash
# Runs one libFuzzer target for a fixed time; ctest's Fuzz.* tests call it.
#   run_fuzzer.sh FUZZER SEED_DIR WORK_DIR [DICT]
# Seconds: $OUTBOX_FUZZ_SECONDS, default 10 (the short run of `make test`,
# a smoke run within CI's budget);
# `make fuzz` sets it higher. Inputs the fuzzer finds interesting accumulate
# in WORK_DIR/corpus (kept between runs, so long runs build on earlier ones);
# the checked-in seeds are read, never written. Any crash, sanitizer report,
# leak, FUZZ_CHECK failure or slow input (> 10 s) fails the run and leaves
# the input in WORK_DIR/artifacts.
set -euo pipefail

fuzzer=$1 seeds=$2 work=$3 dict=${4:-}
seconds=${OUTBOX_FUZZ_SECONDS:-10}
mkdir -p "$work/corpus" "$work/artifacts"

args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
      -print_final_stats=1 -artifact_prefix="$work/artifacts/")
if [ -n "$dict" ]; then args+=(-dict="$dict"); fi

# UBSan aborts on its first report (-fno-sanitize-recover) with a stack.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

rc=0
"$fuzzer" "${args[@]}" "$work/corpus" "$seeds" || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "run_fuzzer: $(basename "$fuzzer") failed (exit $rc). Inputs:" >&2
  ls -l "$work/artifacts" >&2 || true
  echo "Reproduce: $fuzzer $work/artifacts/<file>" >&2
fi
exit "$rc"
