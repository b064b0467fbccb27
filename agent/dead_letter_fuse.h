// Copyright (c) edge-outbox authors.
//
// DeadLetterFuse: a destination whose receiver gives one dead-lettering
// answer to everything is not believed past a point. Receivers built on the
// Standard Webhooks guide answer 400, not 401, to a bad signature or a stale
// timestamp; a till with a wrong clock the store's mark cannot catch (a
// fresh store), or a receiver with a new secret, would otherwise dead-letter
// its whole queue, one 400 at a time. After `limit` events in a row
// dead-lettered with the same answer (Destination::dead_letter_fuse) the
// fuse trips: the agent holds the destination as for a 401 (its events
// wait, one probe at a time) until a delivery, which resets it. A held
// event the receiver refuses again is a failed attempt, retried later (so
// the probes move on to other events), never a dead letter. A retry's
// answer (a 503, a timeout) neither counts nor resets it.
//
// Counts events, not requests: a batch rejected whole counts each of its
// events, and one that would take the count past `limit` is held whole, so
// at most `limit` events are dead-lettered. Kept in memory: a restart lets
// `limit` more through.
//
// REQUIRES: External synchronization (the agent's one thread).

#ifndef OUTBOX_AGENT_DEAD_LETTER_FUSE_H_
#define OUTBOX_AGENT_DEAD_LETTER_FUSE_H_

#include <cstddef>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace outbox {

class DeadLetterFuse {
 public:
  // What becomes of events an answer would dead-letter.
  enum class Verdict {
    kDeadLetter,       // as the answer says
    kDeadLetterTrips,  // as it says, and they make `limit`: hold from now on
    kHold,             // tripped: they stay pending, the destination is held
  };

  // `events` (1, or a batch's) that `destination`'s receiver answered with
  // `answer` (e.g. "HTTP 400"), which would dead-letter them; `limit` is its
  // dead_letter_fuse (0: no fuse). While tripped, every dead-lettering
  // answer is held, whatever it is.
  Verdict OnDeadLetters(absl::string_view destination, absl::string_view answer,
                        size_t events, int limit);

  // `destination`'s receiver took an event (2xx): the run ends. Returns
  // true if the fuse had tripped (it is reset).
  bool OnDelivered(absl::string_view destination);

  bool tripped(absl::string_view destination) const;

 private:
  struct State {
    std::string answer;  // of the current run
    size_t run = 0;      // events dead-lettered in a row with `answer`
    bool tripped = false;
  };
  absl::flat_hash_map<std::string, State> states_;
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_DEAD_LETTER_FUSE_H_
