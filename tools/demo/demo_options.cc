// Copyright (c) edge-outbox authors.

#include "tools/demo/demo_options.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"

namespace outbox::demo {
namespace {

absl::Status Bad(absl::string_view flag, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", why));
}

// The short story `make test` runs: the same steps, smaller. Higher fault
// rates keep every fault in it at this size.
void UseShortStory(DemoOptions* o) {
  o->short_mode = true;
  o->sales = 40;
  o->rate = 200;
  o->offline = absl::Seconds(1);
  o->faults.fail_rate = 0.1;
  o->faults.throttle_rate = 0.05;
  o->faults.drop_rate = 0.05;
  o->stall_timeout = absl::Seconds(60);
}

// --transport batch: a request carries up to batch_max_events sales, so
// four times the sales (committed four times as fast: the offline step
// lasts as long) give the receiver about as many requests as the webhook
// story, and each fault as many turns at the same rates.
void UseBatchStory(DemoOptions* o) {
  o->sales *= 4;
  o->rate *= 4;
}

// --transport mqtt or kafka: a broker on loopback takes a sale in about
// 0.1 ms, so the till to kill, let run 1 ms at a time, would drain 40
// sales in one slice that a loaded machine stretches to tens of
// milliseconds. Ten times the sales (five times as fast) keep its drain
// longer than any slice.
void UseBrokerStory(DemoOptions* o) {
  o->sales *= 10;
  o->rate *= 5;
}

absl::Status SetTransport(const std::string& value, DemoOptions* o) {
  const Transport all[] = {Transport::kWebhook, Transport::kBatch,
                           Transport::kMqtt, Transport::kKafka};
  for (Transport t : all) {
    if (value != TransportName(t)) continue;
    const absl::Status built = TransportBuilt(t);
    if (!built.ok()) return Bad("transport", built.message());
    o->transport = t;
    return absl::OkStatus();
  }
  return Bad("transport", absl::StrCat("want webhook, batch, mqtt or kafka, ",
                                       "got \"", value, "\""));
}

absl::Status SetFlag(absl::string_view name, const std::string& value,
                     DemoOptions* o) {
  double seconds = 0;
  if (name == "dir") {
    if (value.empty()) return Bad(name, "want a directory");
    o->dir = value;
  } else if (name == "tills") {
    if (!absl::SimpleAtoi(value, &o->tills) || o->tills < 2 || o->tills > 9) {
      return Bad(name, absl::StrCat("want 2 to 9 tills, got \"", value, "\""));
    }
  } else if (name == "sales") {
    if (!absl::SimpleAtoi(value, &o->sales) || o->sales < 8) {
      return Bad(name, absl::StrCat("want at least 8 sales per till, got \"",
                                    value, "\""));
    }
  } else if (name == "rate") {
    if (!absl::SimpleAtod(value, &o->rate) || !(o->rate > 0)) {
      return Bad(
          name, absl::StrCat("want sales per second > 0, got \"", value, "\""));
    }
  } else if (name == "offline-seconds") {
    if (!absl::SimpleAtod(value, &seconds) || !(seconds >= 0)) {
      return Bad(name, absl::StrCat("want seconds >= 0, got \"", value, "\""));
    }
    o->offline = absl::Seconds(seconds);
  } else if (name == "transport") {
    return SetTransport(value, o);
  } else if (name == "seed") {
    if (!absl::SimpleAtoi(value, &o->faults.seed)) {
      return Bad(name, absl::StrCat("want an integer, got \"", value, "\""));
    }
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown flag --", name, " (see --help)"));
  }
  return absl::OkStatus();
}

// Splits "--name=value" or "--name value" at args[*i]; advances *i past
// what it used.
absl::Status NextFlag(const std::vector<std::string>& args, size_t* i,
                      std::string* name, std::string* value) {
  absl::string_view arg = args[*i];
  if (!absl::ConsumePrefix(&arg, "--")) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument \"", args[*i], "\" (see --help)"));
  }
  const size_t eq = arg.find('=');
  *name = std::string(arg.substr(0, eq));
  if (eq != absl::string_view::npos) {
    *value = std::string(arg.substr(eq + 1));
  } else if (*i + 1 < args.size()) {
    *value = args[++*i];
  } else {
    return Bad(*name, "needs a value");
  }
  return absl::OkStatus();
}

}  // namespace

const char* TransportName(Transport transport) {
  switch (transport) {
    case Transport::kWebhook:
      return "webhook";
    case Transport::kBatch:
      return "batch";
    case Transport::kMqtt:
      return "mqtt";
    case Transport::kKafka:
      return "kafka";
  }
  return "webhook";
}

absl::StatusOr<DemoOptions> ParseDemoFlags(const std::vector<std::string>& args,
                                           const char* short_env) {
  DemoOptions o;
  const bool short_flag =
      std::find(args.begin(), args.end(), "--short") != args.end();
  if (short_flag || (short_env != nullptr && std::string(short_env) == "1")) {
    UseShortStory(&o);
  }
  std::vector<std::pair<std::string, std::string>> flags;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--short") continue;
    if (args[i] == "--help" || args[i] == "-h") {
      o.help = true;
      continue;
    }
    std::string name, value;
    OUTBOX_RETURN_IF_ERROR(NextFlag(args, &i, &name, &value));
    flags.emplace_back(std::move(name), std::move(value));
  }
  // The transport's sizes first, so that --sales and --rate override them.
  for (const auto& [name, value] : flags) {
    if (name == "transport") OUTBOX_RETURN_IF_ERROR(SetTransport(value, &o));
  }
  if (o.transport == Transport::kBatch) UseBatchStory(&o);
  if (o.transport == Transport::kMqtt || o.transport == Transport::kKafka) {
    UseBrokerStory(&o);
  }
  for (const auto& [name, value] : flags) {
    OUTBOX_RETURN_IF_ERROR(SetFlag(name, value, &o));
  }
  return o;
}

std::string DemoUsage() {
  return R"(outbox-demo: the outbox's promise, end to end, on this machine.

Starts two or more tills (outbox-pos-sim, each with its own store) that commit
sales while their receiver is down, brings the receiver (outbox-sink) up
answering some requests 503, some 429 with Retry-After and losing some answers,
SIGKILLs one till in the middle of its drain and restarts it, waits until every
till has drained, and audits every committed sale against the receiver's log.
Then the saga chapter: one till whose agent runs each sale as seed 003's four
steps (reserve stock, fraud check, shipping, billing) against an outbox-sink
playing those services; some cards are declined at billing, some sales are
refunded (cancelled) after they completed, and every workflow's requests and
reverts are audited. Ends with a table per till and one per saga outcome;
exits 1 if a sale was lost, an audit check fired or a step failed.

--transport picks what the tills deliver to; the SIGKILL of a till in its
drain, and the audit, happen with each:
  webhook  one signed POST per sale to outbox-sink, with the faults above.
  batch    the same outbox-sink and faults, sales in NDJSON batches of up to
           5 (batch {}): one answer, and one fault, per batch; 4x the sales
           at 4x the rate, so that there are as many requests.
  mqtt     QoS 1 publishes (mqtt {}) to the mosquitto broker (persistence
           on), stopped at first, then restarted; a recorder subscribed
           under a persistent session logs what it gets. Needs mosquitto
           (apt-get install mosquitto) and MQTT in the build.
  kafka    records produced (kafka {}) to librdkafka's mock cluster, in
           this process, its broker down at first; a consumer logs each
           one. Needs Kafka in the build.
MQTT and Kafka carry no signature and a broker answers no 503 or 429: their
faults are the broker's downtime and the SIGKILL, and the till to kill is
held (SIGSTOP) and let run 1 ms at a time, since it drains in milliseconds;
10x the sales at 5x the rate keep its drain longer than a slice.
The saga chapter runs with webhook only (workflow steps are HTTP requests).

Usage:
  outbox-demo [--short] [--dir DIR] [--transport T] [options]

  --short              The short story (40 sales per till, 1 s offline), as
                       `make test` runs it. Also: OUTBOX_DEMO_SHORT=1.
  --dir DIR            Where the stores, configs and logs go. Default:
                       demo-out. A directory left by an earlier run is
                       replaced; any other non-empty directory is refused.
  --transport T        webhook, batch, mqtt or kafka (above). Default:
                       webhook.
  --tills N            Tills, 2 to 9. Default: 3.
  --sales N            Sales per till, at least 8. Default: 300 (short: 40).
  --rate R             Sales per second per till. Default: 100 (short: 200).
  --offline-seconds S  The receiver stays down at least S seconds, and until
                       every till has committed its sales. Default: 6
                       (short: 1).
  --seed N             Seed of the receiver's fault draws. Default: 7.

Exit codes: 0 nothing lost; 1 a sale lost, an audit check fired or a step
failed; 2 usage;
130 interrupted (every process it started is stopped first).
)";
}

}  // namespace outbox::demo
