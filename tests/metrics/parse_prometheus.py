#!/usr/bin/python3
# Parses a Prometheus text-format file with the official Python client's
# parser (Debian: python3-prometheus-client) and prints what it read as one
# JSON object, for tests/metrics/metrics_end_to_end_test.cc:
#   {"families": {name: {"type": t, "help": h}},
#    "samples": {"name{label=\"v\",...}": value}}   (labels sorted by name;
#    a value JSON cannot hold is a string: "+Inf", "-Inf", "NaN")
# It also checks what the parser lets pass: every family has HELP text and a
# known type, and every histogram's buckets are cumulative, end with
# le="+Inf" and agree with _count.
# Exit status: 0 parsed and checked; 1 the text is not valid (message on
# stderr); 3 the prometheus_client module is missing.
import json
import math
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError as e:
    print(f"python3 cannot import prometheus_client ({e}); "
          "apt-get install python3-prometheus-client", file=sys.stderr)
    sys.exit(3)


def key(name, labels):
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}" if inner else name


def check_histogram(family, problems):
    series = {}
    for s in family.samples:
        rest = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
        series.setdefault(rest, {"buckets": [], "count": None})
        if s.name.endswith("_bucket"):
            series[rest]["buckets"].append((float(s.labels["le"]), s.value))
        elif s.name.endswith("_count"):
            series[rest]["count"] = s.value
    for rest, h in series.items():
        values = [v for _, v in h["buckets"]]
        if values != sorted(values):
            problems.append(f"{family.name}{rest}: buckets not cumulative")
        if not h["buckets"] or not math.isinf(h["buckets"][-1][0]):
            problems.append(f"{family.name}{rest}: no le=\"+Inf\" bucket last")
        elif h["count"] != h["buckets"][-1][1]:
            problems.append(f"{family.name}{rest}: _count != +Inf bucket")


def json_value(value):
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return value


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    out = {"families": {}, "samples": {}}
    problems = []
    try:
        for family in text_string_to_metric_families(text):
            if family.type not in ("counter", "gauge", "histogram"):
                problems.append(f"{family.name}: type {family.type}")
            if not family.documentation:
                problems.append(f"{family.name}: no HELP text")
            if family.type == "histogram":
                check_histogram(family, problems)
            out["families"][family.name] = {"type": family.type,
                                            "help": family.documentation}
            for s in family.samples:
                out["samples"][key(s.name, s.labels)] = json_value(s.value)
    except ValueError as e:
        problems.append(f"parser: {e}")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)
    json.dump(out, sys.stdout)


main()
