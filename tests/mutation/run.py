#!/usr/bin/env python3
"""The mutation campaign: does the suite catch each listed break?

For each mutation of tests/mutation/mutations.txt (or those named on the
command line), alone: applies it, rebuilds with ninja, runs ctest on the
native build (fuzz, soak and bench labels excluded, stopping at the first
failure), prints "caught by <first failing test>" or "SURVIVED", and puts the
file back byte for byte with a new mtime (ninja compares mtimes: a restored
copy older than the mutated object would leave the mutant linked in, and
every later mutation would look caught). A mutation with a `tests` regex
runs those tests first; only if they pass does the whole suite run. The
file is restored on Ctrl-C, SIGTERM and any exception too.

A mutation whose text is not found exactly once, or that does not build,
is an error, not a survivor. A guarantee should be caught by the test
written for it: a mutation its `tests` let through that only the whole suite
catches is reported "caught elsewhere" (by a benchmark or an unrelated test),
and counts as a failure of the campaign like a survivor. Exit status: 0 when
every mutation run was caught by its own tests, 1 otherwise.

Usage: tests/mutation/run.py [--build-dir build] [--jobs N] [--full] [NAME...]
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIST = os.path.join(ROOT, "tests", "mutation", "mutations.txt")
# As `make test` (CMakePresets.json's default test preset excludes soak and
# bench), and fuzz too: each fuzz target runs for 20 s and checks parsing,
# not the guarantees.
EXCLUDED_LABELS = "^(fuzz|soak|bench)$"
KEYS = ("name", "file", "find", "replace", "breaks", "tests", "targets")
# The product's code, and the ARM board's guest builder, whose refusal of a
# dynamic binary is what makes the board's run test the static firmware.
ROOTS = ("lib/", "agent/", "platform/", "webhooks/", "tests/vm/build-guest.sh")


class MutationError(Exception):
    """A mutation that cannot be judged: bad entry, text not found once."""


def parse(path):
    """The entries of `path`: a list of dicts, in file order."""
    entries = []
    with open(path, encoding="utf-8") as f:
        blocks = f.read().split("\n\n")
    for block in blocks:
        entry = {}
        for line in block.splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            key, sep, value = line.partition(": ")
            if not sep or key not in KEYS:
                raise MutationError(f"{path}: not an entry line: {line!r}")
            if key in entry:
                raise MutationError(f"{path}: {key} twice in one entry: {line!r}")
            entry[key] = value
        if not entry:
            continue
        for key in ("name", "file", "find", "replace", "breaks"):
            if key not in entry:
                raise MutationError(f"{path}: entry {entry} has no {key}")
        if not entry["file"].startswith(ROOTS):
            raise MutationError(f"{entry['name']}: {entry['file']} is not under "
                                f"{', '.join(ROOTS)}")
        entry["find"] = entry["find"].strip()
        entries.append(entry)
    names = [e["name"] for e in entries]
    for name in names:
        if names.count(name) > 1:
            raise MutationError(f"{path}: two entries named {name}")
    return entries


def mutated(entry, original):
    """`original` (bytes) with `entry` applied; MutationError unless its text
    occurs exactly once."""
    find = entry["find"].encode()
    count = original.count(find)
    if count != 1:
        raise MutationError(f"{entry['name']}: {entry['find']!r} occurs {count} "
                            f"times in {entry['file']}, not once")
    return original.replace(find, entry["replace"].encode())


def touch(path):
    now = time.time()
    os.utime(path, (now, now))


def build(build_dir, targets):
    """True when ninja built `targets` (all when empty)."""
    cmd = ["nice", "-n", "10", "ninja", "-C", build_dir] + targets
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, check=False)
    if r.returncode != 0:
        sys.stdout.write(r.stdout[-4000:])
    return r.returncode == 0


# "3/9 Test #12: Suite.Test ....***Failed", "...Subprocess aborted***Exception".
FAILED = re.compile(
    r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*[\w ]*?\*{3}(\w+)", re.M)
NOT_RUN = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*(Not Run)", re.M)


# ctest's summary after a failure: "\t 12 - Suite.Test (Failed)".
SUMMARY = re.compile(r"^\s*\d+ - (\S+) \((\w[\w ]*)\)", re.M)


def ctest(build_dir, jobs, regex, log):
    """Runs ctest, its output into `log`; returns (first failing test or
    None, tests run)."""
    cmd = ["nice", "-n", "10", "ctest", "--test-dir", build_dir, "-LE",
           EXCLUDED_LABELS, "--stop-on-failure", "-j", str(jobs),
           "--timeout", "900", "--output-on-failure"]
    if regex:
        cmd += ["-R", regex]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, check=False)
    with open(log, "w", encoding="utf-8") as f:
        f.write(" ".join(cmd) + "\n" + r.stdout)
    ran = len(re.findall(r"^\s*\d+/\d+ Test\s+#", r.stdout, re.M))
    tail = r.stdout.split("The following tests FAILED:", 1)
    # In the order they ended, then ctest's summary (in test number order).
    failed = FAILED.findall(r.stdout) + NOT_RUN.findall(r.stdout)
    failed += SUMMARY.findall(tail[1]) if len(tail) > 1 else []
    if failed:
        return failed[0][0], ran
    if r.returncode != 0 and ran > 0:
        return f"ctest failed (see {log})", ran
    return None, ran


def log_path(args, entry, run):
    """Where a run's ctest output goes: <build>/mutation/<name>.<run>.log."""
    directory = os.path.join(args.build_dir, "mutation")
    os.makedirs(directory, exist_ok=True)
    return os.path.join(directory, f"{entry['name']}.{run}.log")


def run_one(entry, args):
    """Applies, builds, tests and restores one mutation: a result dict."""
    path = os.path.join(ROOT, entry["file"])
    with open(path, "rb") as f:
        original = f.read()
    changed = mutated(entry, original)
    result = {"name": entry["name"], "result": "SURVIVED", "by": "", "how": ""}
    start = time.monotonic()
    try:
        with open(path, "wb") as f:
            f.write(changed)
        touch(path)
        regex = entry.get("tests") if not args.full else None
        if regex:
            targets = entry.get("targets", "").split()
            if not build(args.build_dir, targets):
                result.update(result="ERROR", by="does not build")
                return result
            by, ran = ctest(args.build_dir, args.jobs, regex,
                            log_path(args, entry, "targeted"))
            result["how"] = f"targeted ({ran} tests)"
            if by:
                result.update(result="caught", by=by)
                return result
            if ran == 0:
                result["how"] = "targeted matched nothing"
        if not build(args.build_dir, []):
            result.update(result="ERROR", by="does not build")
            return result
        by, ran = ctest(args.build_dir, args.jobs, None,
                        log_path(args, entry, "suite"))
        result["how"] = (result["how"] + ", then " if result["how"] else "") + \
            f"whole suite ({ran} tests)"
        if by:
            # Its own tests passed (or it names none): not the test meant
            # for it. --full runs the whole suite alone, by choice.
            meant = args.full or not regex
            result.update(result="caught" if meant else "ELSEWHERE", by=by)
        return result
    finally:
        restore(path, original)
        result["seconds"] = time.monotonic() - start


def restore(path, original):
    """Puts `original` back at `path`, byte for byte and newer than the
    mutated object files. Written aside and renamed, with SIGINT and SIGTERM
    held meanwhile: a signal in the middle of a plain rewrite once left a
    source file truncated to nothing."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK,
                                  {signal.SIGINT, signal.SIGTERM})
    try:
        aside = path + ".mutation-restore"
        with open(aside, "wb") as f:
            f.write(original)
        os.replace(aside, path)
        touch(path)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="mutations to run (all)")
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--jobs", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--full", action="store_true",
                        help="skip the targeted runs: the whole suite each time")
    parser.add_argument("--list", default=LIST)
    args = parser.parse_args()

    # SIGTERM restores like Ctrl-C does (run_one's finally).
    def on_term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_term)

    try:
        entries = parse(args.list)
    except MutationError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.names:
        known = {e["name"] for e in entries}
        unknown = [n for n in args.names if n not in known]
        if unknown:
            print(f"error: no mutation named {', '.join(unknown)}", file=sys.stderr)
            return 2
        by_name = {e["name"]: e for e in entries}
        entries = [by_name[n] for n in dict.fromkeys(args.names)]  # as named

    results = []
    begun = time.monotonic()
    for i, entry in enumerate(entries, 1):
        print(f"[{i}/{len(entries)}] {entry['name']}: {entry['file']}: "
              f"{entry['breaks']}", flush=True)
        try:
            r = run_one(entry, args)
        except MutationError as e:
            r = {"name": entry["name"], "result": "ERROR", "by": str(e),
                 "how": "", "seconds": 0.0}
        results.append(r)
        if r["result"] == "caught":
            line = f"caught by {r['by']}"
        elif r["result"] == "ELSEWHERE":
            line = f"caught ELSEWHERE, by {r['by']}: its own tests passed"
        elif r["result"] == "SURVIVED":
            line = "SURVIVED"
        else:
            line = f"ERROR: {r['by']}"
        print(f"    {line}  [{r['how']}; {r['seconds']:.0f} s]", flush=True)

    width = max([len(r["name"]) for r in results] + [4])
    print(f"\n{'name':<{width}}  {'result':<9}  {'seconds':>7}  caught by (run)")
    for r in results:
        print(f"{r['name']:<{width}}  {r['result']:<9}  {r['seconds']:7.0f}  "
              f"{r['by']}{' (' + r['how'] + ')' if r['how'] else ''}")
    counts = {k: sum(1 for r in results if r["result"] == k)
              for k in ("caught", "ELSEWHERE", "SURVIVED", "ERROR")}
    print(f"\n{len(results)} mutations: {counts['caught']} caught by their "
          f"own tests, {counts['ELSEWHERE']} caught only elsewhere, "
          f"{counts['SURVIVED']} survived, {counts['ERROR']} errors, "
          f"{time.monotonic() - begun:.0f} s")
    return 0 if counts["caught"] == len(results) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt as e:
        # run_one's finally has put the file back already.
        print(f"\ninterrupted ({e or 'Ctrl-C'}); the mutated file was restored",
              file=sys.stderr)
        sys.exit(130)
