// Copyright (c) edge-outbox authors.
//
// ClockTrust: whether the agent may put the wall clock's time on what it
// sends. Receivers check a webhook's timestamp (Standard Webhooks: within 5
// minutes of theirs) and Kafka brokers may check a record's; a board that
// booted with a stale time would have every request refused. The store keeps
// the newest time it has seen (Store::WallClockMark, a lower bound on the
// true time while no clock ever ran ahead); a clock behind it by more than a
// tolerance is known to be wrong, and so is one the kernel calls
// unsynchronized when the configuration requires synchronization.
//
// REQUIRES: External synchronization (the agent's one thread).

#ifndef OUTBOX_AGENT_CLOCK_TRUST_H_
#define OUTBOX_AGENT_CLOCK_TRUST_H_

#include <optional>
#include <string>

#include "absl/time/time.h"

namespace outbox {

class ClockTrust {
 public:
  // `tolerance` ZeroDuration() turns the mark check off.
  ClockTrust(absl::Duration tolerance, bool require_synchronized)
      : tolerance_(tolerance), require_synchronized_(require_synchronized) {}

  // Judges the wall clock reading `now` against the store's `mark`
  // (InfinitePast: none) and the clock's `synchronized` (nullopt: cannot
  // tell, which counts as synchronized). Returns true when the verdict
  // changed, worth one log record (why() says what).
  bool Update(absl::Time now, absl::Time mark,
              std::optional<bool> synchronized);

  bool trusted() const { return trusted_; }
  // Why the clock is not trusted, for logs; after a change back to trusted,
  // what it was. Never empty after a change.
  const std::string& why() const { return why_; }

 private:
  const absl::Duration tolerance_;
  const bool require_synchronized_;
  bool trusted_ = true;
  std::string why_;
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_CLOCK_TRUST_H_
