// Copyright (c) edge-outbox authors.
//
// Command-line options of outbox-demo: how big the story is. The faults the
// receiver injects come with the mode, not from flags, so that every run
// shows the same steps.

#ifndef OUTBOX_TOOLS_DEMO_DEMO_OPTIONS_H_
#define OUTBOX_TOOLS_DEMO_DEMO_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace outbox::demo {

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

struct DemoOptions {
  // Stores, configuration, secrets and logs. Default: demo-out.
  std::string dir = "demo-out";
  int tills = 3;
  int64_t sales = 300;  // per till
  double rate = 100;    // sales per second, per till
  // The receiver stays down at least this long, and until every till has
  // committed all its sales.
  absl::Duration offline = absl::Seconds(6);
  ReceiverFaults faults;
  // A step that sees no progress for this long fails the demo.
  absl::Duration stall_timeout = absl::Seconds(120);
  bool short_mode = false;  // --short, or OUTBOX_DEMO_SHORT=1
  bool help = false;
};

// Parses argv[1..]; `short_env` is the value of OUTBOX_DEMO_SHORT (nullptr
// if unset). --short (or the variable set to 1) first picks the short
// story's sizes, then the other flags override them. Both `--flag value`
// and `--flag=value` work. Errors: kInvalidArgument naming the flag.
absl::StatusOr<DemoOptions> ParseDemoFlags(const std::vector<std::string>& args,
                                           const char* short_env);

// The --help text.
std::string DemoUsage();

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_DEMO_OPTIONS_H_
