#!/usr/bin/env python3
"""Every suite that a configure may leave out is registered with ctest.

    registered_suites.py check --ctest CTEST --build-dir DIR
    registered_suites.py check --listing FILE     (the output of `ctest -N`)
    registered_suites.py self-test

A suite whose library or program is missing at configure time (libmosquitto,
librdkafka, the mosquitto broker, qemu-io, qemu-system-x86_64, faketime,
clang++) is not registered at all: ctest then runs fewer tests and passes.
This check counts, in `ctest -N`, the tests of each such suite (and of the
batch and workflow suites, which must not shrink either) and fails, naming
every suite below its floor and what it needs, so that a CI machine without
libmosquitto fails instead of passing with fewer tests.

The floors are a little under the counts of the native build at the time they
were set (in each SUITES entry's comment): a test removed or merged on purpose
does not trip the check, a suite gone does. Raise them as suites grow.
Native builds only: under an emulator ctest lists executables, not tests, and
the cross builds leave MQTT, Kafka and the virtual board out on purpose.

`self-test` feeds the check made-up listings: one with every suite at its
floor must pass, and for each suite a listing with that suite one short, or
gone, must fail naming that suite and no other.
"""

import argparse
import re
import subprocess
import sys

# (suite, what it needs at configure time, a pattern of its test names, the
# floor, and a name of it for the self-test). Today's count is in each
# comment.
SUITES = [
    # 5: the reason-code tables, built with outbox_mqtt.
    ("MQTT", "libmosquitto-dev (OUTBOX_WITH_MQTT)",
     r"^(ConnackStatusTest|PubackStatusTest|MosquittoStatusTest)\.", 4,
     "PubackStatusTest.X"),
    # 27: publisher, agent, TLS, the kill soak and the demo's MQTT story.
    ("MQTT against the mosquitto broker",
     "libmosquitto-dev and mosquitto (the broker, mosquitto_passwd)",
     r"^(MqttPublisher|MqttPublisherTls|AgentMqtt|AgentMqttTls)Test\."
     r"|^PosSimKillTest\.Mqtt|^OutboxDemo\.ShortMqtt", 22,
     "AgentMqttTest.X"),
    # 44: producer, status tables, agent, kill soak, the demo's Kafka story.
    ("Kafka", "librdkafka-dev (OUTBOX_WITH_KAFKA)",
     r"^(KafkaProducer\w*|Kafka\w+Status|AgentKafka)Test\."
     r"|^PosSimKillTest\.Kafka|^OutboxDemo\.ShortKafka", 38,
     "AgentKafkaTest.X"),
    # 36: configuration, request building, agent, kill soak, demo story.
    ("batches", "nothing optional",
     r"^(AgentBatch|ConfigBatch|BatchId|BuildBatchRequest|LinesThatFit)Test\."
     r"|^SinkKillTest\.Batched|^OutboxDemo\.ShortBatch", 32,
     "AgentBatchTest.X"),
    # 96: the agent against outbox-sink's routes and the planner's units.
    ("workflows", "nothing optional",
     r"^(AgentWorkflow\w*|ConfigWorkflow|WorkflowPlan|ChooseDestination"
     r"|Compare|Evaluate|Operator|StepRequestId|Uuid5|ParseTemplate"
     r"|PercentEncode|Template|ParseValueRef|ToJsonPointer|ValueResolver)"
     r"Test\.", 88,
     "AgentWorkflowTest.X"),
    # 7: outbox-lossy-disk driven by qemu's NBD client.
    ("virtual board: the lossy disk over NBD", "qemu-io (qemu-utils)",
     r"^LossyDiskTest\.", 5,
     "LossyDiskTest.X"),
    # 3: power cuts of the virtual board.
    ("virtual board: power cuts",
     "qemu-system-x86_64 (qemu-system-x86), mkfs.ext4, e2fsck, debugfs",
     r"^(VmPowerCut|JudgeFsck)Test\.", 2,
     "VmPowerCutTest.X"),
    # 2: the agent six years in the past.
    ("stale clock", "faketime",
     r"^FaketimeTest\.", 1,
     "FaketimeTest.X"),
    # 5: the libFuzzer targets, run short.
    ("fuzz", "clang++ (OUTBOX_FUZZ)",
     r"^Fuzz\.", 4,
     "Fuzz.X"),
]

TEST_LINE = re.compile(r"^\s*Test\s+#\d+: (\S+)", re.M)


def shortfalls(listing):
    """The lines naming each suite below its floor, for a `ctest -N` text."""
    names = TEST_LINE.findall(listing)
    found = []
    for suite, needs, pattern, floor, _ in SUITES:
        count = sum(1 for n in names if re.search(pattern, n))
        if count < floor:
            found.append(f"suite '{suite}': {count} tests registered, at "
                         f"least {floor} expected; it needs {needs}")
    return found


def check(listing):
    found = shortfalls(listing)
    for line in found:
        print(line)
    if found:
        not_built = [n for n in TEST_LINE.findall(listing)
                     if n.endswith("_NOT_BUILT")]
        if not_built:
            print("executables not built yet: " + ", ".join(not_built))
        print(f"{len(found)} suite(s) short: left out at configure time (see "
              "the configure's output and the suite's CMakeLists.txt), or "
              "not built")
        return 1
    print(f"registered_suites: all {len(SUITES)} suites are registered")
    return 0


def fake_listing(counts):
    """A `ctest -N` text with counts[i] tests of SUITES[i]."""
    lines, number = ["Test project /fake/build"], 0
    for (_, _, _, _, sample), count in zip(SUITES, counts):
        for i in range(count):
            number += 1
            lines.append(f"  Test #{number}: {sample}{i}")
    lines.append(f"  Test #{number + 1}: QueueTest.Unrelated")
    lines.append(f"\nTotal Tests: {number + 1}")
    return "\n".join(lines) + "\n"


def self_test():
    failures = []
    floors = [floor for _, _, _, floor, _ in SUITES]
    if shortfalls(fake_listing(floors)):
        failures.append("a listing with every suite at its floor failed: "
                        f"{shortfalls(fake_listing(floors))}")
    for i, (suite, _, _, floor, _) in enumerate(SUITES):
        for short in (floor - 1, 0):
            counts = list(floors)
            counts[i] = short
            found = shortfalls(fake_listing(counts))
            if len(found) != 1 or f"suite '{suite}'" not in found[0]:
                failures.append(f"'{suite}' with {short} tests: reported "
                                f"{found}")
    for f in failures:
        print(f"self-test: {f}")
    if failures:
        return 1
    print(f"self-test: each of the {len(SUITES)} suites, one short or gone, "
          "was reported alone")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("--ctest")
    c.add_argument("--build-dir")
    c.add_argument("--listing")
    sub.add_parser("self-test")
    args = parser.parse_args()
    if args.command == "self-test":
        sys.exit(self_test())
    if args.listing:
        with open(args.listing) as f:
            sys.exit(check(f.read()))
    if not (args.ctest and args.build_dir):
        parser.error("check needs --listing, or --ctest and --build-dir")
    listing = subprocess.run([args.ctest, "-N", "--test-dir", args.build_dir],
                             check=True, capture_output=True, text=True).stdout
    sys.exit(check(listing))


if __name__ == "__main__":
    main()
