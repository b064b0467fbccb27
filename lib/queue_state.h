// Copyright (c) edge-outbox authors.
//
// The queue's counters (storage::QueueState), kept in one place. Every write
// that changes the queue computes the state it writes with these functions,
// so the counters of a commit, a replay, a delivery and a dead letter can
// never disagree about what an entry counts for.

#ifndef OUTBOX_LIB_QUEUE_STATE_H_
#define OUTBOX_LIB_QUEUE_STATE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "outbox/options.h"
#include "proto/storage.pb.h"

namespace outbox::queue_state {

// a - b, or 0 where that would wrap: the counters never go below zero (a
// wrapped count would make the queue look full forever).
inline uint64_t SaturatingSub(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
}

// Counts a new pending entry of `bytes` stored bytes at the end of the queue
// and returns its seq (the old next_seq).
uint64_t Append(uint64_t bytes, storage::QueueState* state);

// Counts one pending entry of `bytes` stored bytes out of the queue. An empty
// queue has zero bytes by definition, which heals any drift (an entry damaged
// on disk may have changed size).
void Remove(uint64_t bytes, storage::QueueState* state);

// A pending entry was rewritten from `old_bytes` to `new_bytes` stored bytes.
void Resize(uint64_t old_bytes, uint64_t new_bytes, storage::QueueState* state);

// OK if `after` (the state a write would leave) is within the limits of
// `options`; otherwise kResourceExhausted saying which limit and that nothing
// was written. `what` names the write ("3 events", "dead letter X").
// Makes `entry` a newly queued event at `seq` (a replay, a cancelled
// workflow queued again): pending, due at `now_ms`, attempts and their
// history reset. Its id, type, key and payload do not change.
void ResetForQueue(uint64_t seq, int64_t now_ms, storage::OutboxEntry* entry);

absl::Status CheckCapacity(const storage::QueueState& after,
                           const Options& options, absl::string_view what);

}  // namespace outbox::queue_state

#endif  // OUTBOX_LIB_QUEUE_STATE_H_
