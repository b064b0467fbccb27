#!/usr/bin/env python3
"""How many GoogleTest tests a ctest run passed, skipped and failed.

    test_counts.py BUILD_DIR [LABEL]

Reads <build>/Testing/Temporary/LastTest.log, in which ctest keeps every
test's output, and adds up GoogleTest's own summary lines ("[  PASSED  ] 3
tests.", "[  SKIPPED ] 1 test,", "[  FAILED  ] 2 tests,"). Natively ctest
runs each GoogleTest test in a process of its own, under an emulator each
executable as one (CMakeLists.txt, OUTBOX_TEST_WHOLE_EXECUTABLES): these sums
count the tests either way, where ctest's own count would not.
"""

import os
import re
import sys

SUMMARY = re.compile(
    r"^\[  (PASSED|SKIPPED|FAILED)  ?\] (\d+) tests?[.,]", re.M)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    build_dir = sys.argv[1]
    label = sys.argv[2] if len(sys.argv) == 3 else build_dir
    path = os.path.join(build_dir, "Testing", "Temporary", "LastTest.log")
    if not os.path.exists(path):
        return
    with open(path, errors="replace") as log:
        text = log.read()
    counts = {"PASSED": 0, "SKIPPED": 0, "FAILED": 0}
    for kind, number in SUMMARY.findall(text):
        counts[kind] += int(number)
    entries = len(re.findall(r"^\d+/\d+ Testing: ", text, re.M))
    print(f"{label}: {entries} ctest tests; GoogleTest tests passed "
          f"{counts['PASSED']}, skipped {counts['SKIPPED']}, failed "
          f"{counts['FAILED']}")


if __name__ == "__main__":
    main()
