#!/usr/bin/env bash
# Runs one of the native build's board programs (power_cut_test,
# board_memory_test) on the board the environment names (OUTBOX_VM_ARCH
# etc., power_cut_test.cc), for a cross build's ctest (arm_board.cmake).
#
#   run_harness.sh NATIVE_BIN PROGRAM [ARG...]
set -euo pipefail
bin=$1
program=$2
shift 2
for needed in "$program" outbox-lossy-disk; do
  if [[ ! -x "$bin/$needed" ]]; then
    echo "run_harness: $bin/$needed is missing: the ARM board is driven" \
      "by the native build's harness (make build, then make test-aarch64)" >&2
    exit 1
  fi
done
exec "$bin/$program" "$@"
