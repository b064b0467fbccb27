// Copyright (c) edge-outbox authors.
//
// Batcher: the loop's part for destinations that take batches
// (Destination::batch). The loop queues the round's due events bound for
// them (Queue), then has them packed into NDJSON requests (batch_request.h)
// instead of one request each (SendAll); it starts each request itself, and
// settles each event of a batch as the one answer says (a 2xx delivers them
// all).
//
// FIFO per ordering key: a keyed event due now heads its key, and the events
// queued behind it (Store::KeyFollowers) ride in the same request, in order,
// as far as they may (Port::MayRide). A key's run is never split across two
// requests in flight: what does not fit waits for this batch to be settled,
// and so cannot overtake it.
//
// Thread-safety: none; owned and used by the loop's thread alone.

#ifndef OUTBOX_AGENT_SEND_BATCHER_H_
#define OUTBOX_AGENT_SEND_BATCHER_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/config/config.h"
#include "outbox/store.h"

namespace outbox {

class Batcher {
 public:
  // What the batcher asks of the loop while it packs a round's batches.
  class Port {
   public:
    virtual ~Port() = default;
    // Whether the loop may start no more requests this round.
    virtual bool Full() const = 0;
    // Whether `follower`, queued behind a batch's event under the same key,
    // may ride in the batch to `destination` at `now`. Errors: the store's.
    virtual absl::StatusOr<bool> MayRide(const PendingEvent& follower,
                                         const Destination& destination,
                                         absl::Time now) = 0;
    // Starts `batch` as one request to `destination` with `body`, its
    // events' BatchLines in order; false when it cannot start this round.
    virtual bool SendBatch(std::vector<PendingEvent> batch, std::string body,
                           const Destination& destination, absl::Time now) = 0;
  };

  // `store` is borrowed (the key followers are read from it).
  Batcher(Store* store, const AgentConfig& config);

  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // How many more due events than free request slots a round may ask for:
  // a batch takes up to max_events of them in one slot (the largest
  // max_events - 1; 0 without batching destinations).
  size_t extra() const { return extra_; }

  // Keeps `event` for this round's batches to `destination` (borrowed from
  // the configuration).
  void Queue(PendingEvent event, const Destination& destination);

  // Packs and starts, through `port`, the events Queue kept this round, and
  // forgets them. Returns when a batch held back for more events (max_wait)
  // is due on the monotonic clock (InfiniteFuture: none held). Errors: the
  // store's.
  absl::StatusOr<absl::Time> SendAll(Port* port, absl::Time now,
                                     absl::Time steady);
  // Forgets what Queue kept this round, unsent (a round that stopped on an
  // error: the events are still pending, and read again later).
  void Forget() { heads_.clear(); }

 private:
  absl::Status SendTo(Port* port, const Destination& destination,
                      std::vector<PendingEvent> heads, absl::Time now,
                      absl::Time steady, absl::Time* hold_until);
  // `head` and the events queued behind it under its key that may go with
  // it to `destination` now, at most max_events. Errors: the store's.
  absl::StatusOr<std::vector<PendingEvent>> RunOf(
      Port* port, PendingEvent head, const Destination& destination,
      absl::Time now);
  // When `batch` (not full) is to be sent if it waits for more events
  // under its destination's max_wait; InfinitePast: send it now.
  static absl::Time HoldUntil(const std::vector<PendingEvent>& batch,
                              size_t bytes, const Destination& destination,
                              absl::Time now, absl::Time steady);

  Store* const store_;
  size_t extra_ = 0;
  // This round's due events, per batching destination, in due order.
  std::vector<std::pair<const Destination*, std::vector<PendingEvent>>> heads_;
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_SEND_BATCHER_H_
