#!/usr/bin/env python3
"""Lower rooms never include higher ones (docs/architecture.md).

    room_includes.py check --root DIR   the tree at DIR
    room_includes.py self-test          a small tree with known violations

The rooms, lowest first: base/, platform/, lib/, then agent/, c/, tools/ and
examples/. What a file of a lower room must not include:
  base/      any other folder of the project
  platform/  lib/ and everything above it
  lib/       agent/, c/, tools/, examples/
and none of them tests/, except a unit test beside its code (*_test.cc),
which uses the shared helpers of tests/testing/. Every `#include "dir/..."`
of a .h, .cc or .c file under base/, platform/ and lib/ is checked. Failures
print file:line and the include.
"""

import argparse
import os
import re
import sys
import tempfile

ABOVE_LIB = {"agent", "c", "tools", "examples"}
FORBIDDEN = {
    "base": {"platform", "proto", "lib", "tests"} | ABOVE_LIB,
    "platform": {"lib", "tests"} | ABOVE_LIB,
    "lib": {"tests"} | ABOVE_LIB,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/[^"]*"')


def violations(root):
    found = []
    for room, forbidden in FORBIDDEN.items():
        for folder, _, files in os.walk(os.path.join(root, room)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc", ".c")):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or m.group(1) not in forbidden:
                            continue
                        if m.group(1) == "tests" and name.endswith("_test.cc"):
                            continue
                        rel = os.path.relpath(path, root)
                        found.append(f"{rel}:{number}: {room}/ includes "
                                     f"{m.group(1)}/: {line.strip()}")
    return found


def check(root):
    found = violations(root)
    for v in found:
        print(v)
    if found:
        print(f"{len(found)} include(s) run from a lower room to a higher one")
        return 1
    print("room_includes: every include of base/, platform/ and lib/ stays "
          "in its room or below")
    return 0


def self_test():
    tree = {
        "base/status_macros.h": '#include "absl/status/status.h"\n',
        "platform/files.cc": '#include "base/status_macros.h"\n'
                             '#include "lib/store_impl.h"\n',        # bad
        "lib/store.cc": '#include "platform/files.h"\n'
                        '#include "agent/config/config.h"\n',        # bad
        "lib/store_test.cc": '#include "tests/testing/status.h"\n',  # fine
        "lib/store_impl.h": '#include "tests/testing/status.h"\n'
                            '#include "proto/storage.pb.h"\n',        # bad, fine
        "agent/loop.cc": '#include "lib/store_impl.h"\n',            # fine
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in tree.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)),
                        exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        found = violations(root)
    want = ["platform/files.cc:2", "lib/store.cc:2", "lib/store_impl.h:1"]
    got = sorted(v.split(": ")[0] for v in found)
    if got != sorted(want):
        print(f"self-test: expected {sorted(want)}, found {got}")
        return 1
    print(f"self-test: the {len(want)} planted violations were reported")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("--root", required=True)
    sub.add_parser("self-test")
    args = parser.parse_args()
    sys.exit(check(args.root) if args.command == "check" else self_test())


if __name__ == "__main__":
    main()
