#!/usr/bin/env bash
# BuildGuest.RefusesADynamicExecutable: build-guest.sh --arch aarch64 must
# refuse a binary that is not a static aarch64 executable (the ARM board's
# guest holds no shared library), saying which, before it downloads or
# writes anything.
#
#   build_guest_test.sh BUILD_GUEST_SH INIT_SCRIPT DYNAMIC_BINARY
set -uo pipefail

script=$1 init=$2 dynamic=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="$work/guest"

fail() { echo "FAIL: $*" >&2; exit 1; }

# OUTBOX_SYSROOT_BASE points nowhere: the refusal may not depend on a sysroot.
OUTBOX_SYSROOT_BASE="$work/no-sysroot" bash "$script" --arch aarch64 "$out" \
  "$init" "$dynamic" >"$work/stdout" 2>"$work/stderr"
rc=$?
cat "$work/stderr" >&2
[[ $rc -eq 1 ]] || fail "exit code $rc, expected 1"
grep -qF "$(realpath "$dynamic") is not a static aarch64 executable" \
  "$work/stderr" || fail "stderr does not name the refused binary"
[[ ! -e "$out" ]] || fail "$out was created before the refusal"
echo "refused, as expected: $dynamic"
