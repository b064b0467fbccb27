// Copyright (c) edge-outbox authors.
//
// Command-line options of outbox-demo: how big the story is and what the
// tills deliver to. The faults the receiver injects come with the mode, not
// from flags, so that every run shows the same steps.

#ifndef OUTBOX_TOOLS_DEMO_DEMO_OPTIONS_H_
#define OUTBOX_TOOLS_DEMO_DEMO_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace outbox::demo {

// What the tills' agents deliver to (--transport).
enum class Transport {
  kWebhook,  // one signed POST per sale to outbox-sink
  kBatch,    // NDJSON batches of sales to outbox-sink (batch {})
  kMqtt,     // QoS 1 publishes to mosquitto (mqtt {})
  kKafka,    // produced to librdkafka's mock cluster (kafka {}), in process
};
// "webhook", "batch", "mqtt", "kafka".
const char* TransportName(Transport transport);

// What outbox-sink does on purpose while the tills drain.
struct ReceiverFaults {
  double fail_rate = 0.05;      // answered 503
  double throttle_rate = 0.02;  // answered 429 with Retry-After
  double drop_rate = 0.03;      // processed, answer lost: a duplicate follows
  std::string retry_after = "1";
  // Every answer waits this long, so that a till's drain lasts long enough
  // for the SIGKILL to land in its middle.
  int delay_ms = 5;
  uint64_t seed = 7;  // the draws; fixed so that each run shows each fault
};

// The saga chapter: one till whose sales run seed 003's four steps.
struct SagaOptions {
  int64_t sales = 20;
  double rate = 200;  // sales per second
  // pos-sim's --decline-every and --refund-every: sales 5, 11, 17 fail at
  // billing and 7, 15 are refunded (cancelled) after they completed.
  int64_t decline_every = 6;
  int64_t refund_every = 8;
  // The receiver answers some requests 503 (retried) and loses some answers
  // (resent under the same id: duplicates).
  double fail_rate = 0.05;
  double drop_rate = 0.05;
  uint64_t seed = 3;
};

struct DemoOptions {
  // Stores, configuration, secrets and logs. Default: demo-out.
  std::string dir = "demo-out";
  int tills = 3;
  int64_t sales = 300;  // per till
  double rate = 100;    // sales per second, per till
  // The receiver stays down at least this long, and until every till has
  // committed all its sales.
  absl::Duration offline = absl::Seconds(6);
  Transport transport = Transport::kWebhook;
  // With --transport batch: the most sales in one request. Small, so that
  // a drain takes several batches and the SIGKILL lands between two.
  int64_t batch_max_events = 5;
  ReceiverFaults faults;
  SagaOptions saga;
  // A step that sees no progress for this long fails the demo.
  absl::Duration stall_timeout = absl::Seconds(120);
  bool short_mode = false;  // --short, or OUTBOX_DEMO_SHORT=1
  bool help = false;
};

// Parses argv[1..]; `short_env` is the value of OUTBOX_DEMO_SHORT (nullptr
// if unset). --short (or the variable set to 1) first picks the short
// story's sizes, then the other flags override them. Both `--flag value`
// and `--flag=value` work. Errors: kInvalidArgument naming the flag (a
// --transport this build lacks included: TransportBuilt).
absl::StatusOr<DemoOptions> ParseDemoFlags(const std::vector<std::string>& args,
                                           const char* short_env);

// OK if this build can run `transport`: webhook and batch always; MQTT
// with libmosquitto (OUTBOX_WITH_MQTT), Kafka with librdkafka
// (OUTBOX_WITH_KAFKA). Else kFailedPrecondition saying how to build it in.
// Defined with the receivers (receiver.h), by the files CMake picks.
absl::Status TransportBuilt(Transport transport);

// The --help text.
std::string DemoUsage();

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_DEMO_OPTIONS_H_
