// Copyright (c) edge-outbox authors.
//
// LogLimiter: keeps per-event records from flooding a device's log. A
// receiver answering 503 to a backlog of 100,000 events would otherwise make
// one retry_scheduled record per attempt, thousands a second. Per (event,
// destination), the first `burst` records of each `window` are written; the
// rest are counted, and the count is reported once, as one log_suppressed
// record, when the next record of that kind arrives after the window, or
// when the agent stops. State changes (unreachable, paused, ...) are never
// limited: they are one record each already.
// Thread-compatible: the agent's thread owns it.

#ifndef OUTBOX_AGENT_TELEMETRY_LOG_LIMITER_H_
#define OUTBOX_AGENT_TELEMETRY_LOG_LIMITER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "outbox/log.h"

namespace outbox {

class LogLimiter {
 public:
  // Records held back in one window, reported later.
  struct Held {
    LogEvent event;
    std::string destination;
    uint64_t count = 0;
    absl::Duration over;  // from the window's first record to its last
  };

  LogLimiter(int burst, absl::Duration window);

  // Whether a record of `event` about `destination` at `now` (a monotonic
  // time) is written. If an earlier window of that key held records back,
  // `*held` is set to them (count > 0), to be reported before this record.
  bool Admit(LogEvent event, absl::string_view destination, absl::Time now,
             Held* held);

  // Every count still held back, and forgets them (at stop).
  std::vector<Held> TakeHeld();

 private:
  struct Window {
    absl::Time start;
    absl::Time last;
    int written = 0;
    uint64_t held = 0;
  };
  using Key = std::pair<LogEvent, std::string>;

  const int burst_;
  const absl::Duration window_;
  absl::flat_hash_map<Key, Window> windows_;
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_TELEMETRY_LOG_LIMITER_H_
