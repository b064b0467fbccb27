#!/usr/bin/env python3
"""Lower rooms never include higher ones (docs/architecture.md).

    room_includes.py check --root DIR   the tree at DIR
    room_includes.py self-test          a small tree with known violations

The rooms, lowest first: base/, platform/, then lib/ and webhooks/ (side by
side: neither includes the other), then agent/, c/, tools/ and examples/.
Inside agent/, retry/ and expr/ are lowest, then config/, then the rest.
What a file of a lower room must not include:
  base/          any other folder of the project
  platform/      lib/, webhooks/ and everything above them
  lib/           webhooks/, agent/, c/, tools/, examples/
  webhooks/      proto/, lib/, agent/, c/, tools/, examples/
  agent/retry/   the rest of agent/
  agent/expr/    the rest of agent/
  agent/config/  the rest of agent/ but retry/ and expr/
and none of them tests/, except a unit test beside its code (*_test.cc),
which uses the shared helpers of tests/testing/. Every `#include "dir/..."`
of a .h, .cc or .c file under those rooms is checked.

The loop's own header, agent/agent_impl.h, is included only by the loop's
files (those directly in agent/): the parts the loop holds (the batcher, the
metrics writer) have headers of their own, and tests reach the broken
variants through agent/agent_variant.h. LOOP_HEADER_EXCEPTIONS names what
still does, and why. Failures print file:line and the include.
"""

import argparse
import os
import re
import sys
import tempfile

ABOVE_LIB = ("agent/", "c/", "tools/", "examples/")
ABOVE_AGENT_ROOMS = ("c/", "tools/", "examples/", "tests/")
# room: (the include prefixes it must not use, the exceptions among them)
RULES = {
    "base": (("platform/", "proto/", "lib/", "webhooks/", "tests/") + ABOVE_LIB,
             ()),
    "platform": (("lib/", "webhooks/", "tests/") + ABOVE_LIB, ()),
    "lib": (("webhooks/", "tests/") + ABOVE_LIB, ()),
    "webhooks": (("proto/", "lib/", "tests/") + ABOVE_LIB, ()),
    "agent/retry": (("agent/",) + ABOVE_AGENT_ROOMS, ("agent/retry/",)),
    "agent/expr": (("agent/",) + ABOVE_AGENT_ROOMS, ("agent/expr/",)),
    "agent/config": (("agent/",) + ABOVE_AGENT_ROOMS,
                     ("agent/config/", "agent/retry/", "agent/expr/")),
}
LOOP_HEADER = "agent/agent_impl.h"
# Files outside agent/ itself that still include the loop's header.
LOOP_HEADER_EXCEPTIONS = {
    # The workflow driver: still AgentImpl's methods, until it is an object
    # the loop holds (issue 42, "the loop owns its parts").
    "agent/workflow/agent_workflow.cc",
}
SCANNED = ("base", "platform", "lib", "webhooks", "agent", "c", "tools",
           "examples", "tests")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]*/[^"]*)"')


def breaks(rule, name, included):
    forbidden, allowed = rule
    if included.startswith(allowed) or not included.startswith(forbidden):
        return False
    # A unit test beside its code uses the shared helpers of tests/testing/.
    return not (included.startswith("tests/") and name.endswith("_test.cc"))


def violations(root):
    found = []
    for room, rule in RULES.items():
        for folder, _, files in os.walk(os.path.join(root, room)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc", ".c")):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or not breaks(rule, name, m.group(1)):
                            continue
                        rel = os.path.relpath(path, root)
                        found.append(f"{rel}:{number}: {room}/ includes "
                                     f"{m.group(1)}: {line.strip()}")
    return found + loop_header_violations(root)


def loop_header_violations(root):
    found = []
    for top in SCANNED:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc", ".c")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                if (os.path.dirname(rel) == "agent" or
                        rel in LOOP_HEADER_EXCEPTIONS):
                    continue
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) == LOOP_HEADER:
                            found.append(f"{rel}:{number}: only the loop's "
                                         f"files include {LOOP_HEADER}")
    return found


def check(root):
    found = violations(root)
    for v in found:
        print(v)
    if found:
        print(f"{len(found)} include(s) run from a lower room to a higher one")
        return 1
    print("room_includes: every include of " + ", ".join(
        f"{room}/" for room in RULES) + " stays in its room or below, and "
          f"only the loop's files include {LOOP_HEADER}")
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
        "webhooks/signature.cc": '#include "platform/files.h"\n'
                                 '#include "lib/keys.h"\n',          # bad
        "agent/retry/policy.cc": '#include "agent/decision.h"\n',   # bad
        "agent/expr/condition.h": '#include "agent/expr/value_ref.h"\n'
                                  '#include "agent/config/config.h"\n',  # bad
        "agent/config/config.h": '#include "agent/retry/policy.h"\n'
                                 '#include "agent/expr/template.h"\n'
                                 '#include "agent/send/sender.h"\n'   # bad
                                 '#include "webhooks/signature.h"\n'
                                 '#include "tools/sink/receiver.h"\n',  # bad
        "agent/config/config_test.cc":
            '#include "tests/testing/status.h"\n',                # fine
        "agent/agent_results.cc": '#include "agent/agent_impl.h"\n',  # fine
        "agent/send/batcher.cc": '#include "agent/agent_impl.h"\n',   # bad
        "tests/crash/soak.h": '#include "agent/agent_impl.h"\n',      # bad
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in tree.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)),
                        exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        found = violations(root)
    want = ["platform/files.cc:2", "lib/store.cc:2", "lib/store_impl.h:1",
            "webhooks/signature.cc:2", "agent/retry/policy.cc:1",
            "agent/expr/condition.h:2", "agent/config/config.h:3",
            "agent/config/config.h:5", "agent/send/batcher.cc:1",
            "tests/crash/soak.h:1"]
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
