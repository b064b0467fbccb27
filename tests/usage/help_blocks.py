#!/usr/bin/env python3
"""The command-line reference is each program's own --help.

Every block of the reference (docs/command-line.md) of the form

    <!-- help: outboxctl stats --help -->
    ```text
    ...
    ```

holds what that command prints, verbatim. `check` (a ctest) fails on any
difference, and also when a program or an outboxctl command has no block;
`update` rewrites the blocks from the programs (`make docs-help`).
"""

import argparse
import difflib
import os
import re
import subprocess
import sys

BLOCK = re.compile(r"<!-- help: (?P<cmd>[^>]+?) -->\n```text\n(?P<text>.*?)```\n",
                   re.S)
PROGRAMS = ["outbox-agent", "outboxctl", "outbox-sink", "outbox-pos-sim",
            "outbox-demo"]


def run(bin_dir, command):
    args = command.split()
    args[0] = os.path.join(bin_dir, args[0])
    done = subprocess.run(args, capture_output=True, text=True, timeout=60,
                          check=False)
    if done.returncode != 0:
        sys.exit(f"`{command}` exited {done.returncode}: {done.stderr}")
    return done.stdout.rstrip("\n") + "\n"


def ctl_commands(bin_dir):
    """The commands `outboxctl --help` lists under "commands:"."""
    text = run(bin_dir, "outboxctl --help")
    listed = text.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in listed.splitlines() if line.strip()]


def expected_commands(bin_dir):
    commands = [f"{p} --help" for p in PROGRAMS]
    commands += [f"outboxctl {c} --help" for c in ctl_commands(bin_dir)]
    return commands


def check(path, doc, bin_dir):
    name = os.path.basename(path)
    failures = []
    documented = set()
    for block in BLOCK.finditer(doc):
        command = block["cmd"]
        documented.add(command)
        actual = run(bin_dir, command)
        if block["text"] != actual:
            diff = difflib.unified_diff(
                block["text"].splitlines(True), actual.splitlines(True),
                path, command)
            failures.append(f"{name}'s block for `{command}` differs from "
                            f"its output:\n{''.join(diff)}")
    for command in expected_commands(bin_dir):
        if command not in documented:
            failures.append(f"{path} has no block for `{command}`")
    for f in failures:
        print(f)
    if failures:
        print("run `make docs-help` to rewrite the blocks")
        return 1
    print(f"{len(documented)} help blocks match their programs")
    return 0


def update(path, doc, bin_dir):
    def replace(block):
        return (f"<!-- help: {block['cmd']} -->\n```text\n"
                f"{run(bin_dir, block['cmd'])}```\n")
    # Every program runs before the file is opened: a program that fails
    # (not built yet) exits here and leaves the file as it was.
    updated = BLOCK.sub(replace, doc)
    with open(path, "w", encoding="utf-8") as f:
        f.write(updated)
    return check(path, updated, bin_dir)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["check", "update"])
    parser.add_argument("--doc", required=True,
                        help="the Markdown file with the blocks")
    parser.add_argument("--bin-dir", required=True)
    args = parser.parse_args()
    with open(args.doc, encoding="utf-8") as f:
        doc = f.read()
    if args.mode == "check":
        return check(args.doc, doc, args.bin_dir)
    return update(args.doc, doc, args.bin_dir)


if __name__ == "__main__":
    sys.exit(main())
