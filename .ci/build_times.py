#!/usr/bin/env python3
"""Where a build's time went, from ninja's own log (<build>/.ninja_log).

    build_times.py BUILD_DIR [LABEL]

Prints one line per kind of step (compile, link, archive, other: protoc,
custom commands) with its count and the seconds its steps took, added up
(CPU-bound steps, so about CPU seconds), then the build's wall time and the
slowest compiles and links. Only the steps of the newest build in the log
are counted: ninja appends, and a re-run rebuilds only what changed.
"""

import os
import sys


def newest_build(path):
    """The log's entries since ninja last started from time 0."""
    steps = []
    with open(path) as log:
        for line in log:
            if line.startswith("#"):
                continue
            start, end, _, output, _ = line.rstrip("\n").split("\t")
            start, end = int(start), int(end)
            if steps and start < steps[-1][0] and start == 0:
                steps = []  # a later ninja run restarts the clock
            steps.append((start, end, output))
    # A step with several outputs (a custom command naming both an absolute
    # and a relative path, say) is logged once per output: count it once.
    seen, unique = set(), []
    for start, end, output in steps:
        key = (start, end, os.path.basename(output))
        if key not in seen:
            seen.add(key)
            unique.append((start, end, output))
    return unique


def kind(output):
    if output.endswith(".o"):
        return "compile"
    if output.endswith(".a"):
        return "archive"
    if output.startswith("bin/") or "/bin/" in output:
        return "link"
    return "other"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    build_dir = sys.argv[1]
    label = sys.argv[2] if len(sys.argv) == 3 else build_dir
    path = os.path.join(build_dir, ".ninja_log")
    if not os.path.exists(path):
        sys.exit(f"build_times: no {path}")
    steps = newest_build(path)
    if not steps:
        print(f"{label}: nothing was built")
        return
    totals = {}
    for start, end, output in steps:
        count, secs = totals.get(kind(output), (0, 0.0))
        totals[kind(output)] = (count + 1, secs + (end - start) / 1000)
    wall = (max(e for _, e, _ in steps) - min(s for s, _, _ in steps)) / 1000
    print(f"{label}: {len(steps)} steps in {wall:.0f} s of wall time")
    for name in ("compile", "link", "archive", "other"):
        count, secs = totals.get(name, (0, 0.0))
        print(f"  {name:8} {count:4} steps {secs:7.0f} s")
    for name in ("compile", "link"):
        slow = sorted(((e - s) / 1000, o) for s, e, o in steps
                      if kind(o) == name)[-3:]
        for secs, output in reversed(slow):
            print(f"  slowest {name}: {secs:5.1f} s {output}")


if __name__ == "__main__":
    main()
