// Copyright (c) edge-outbox authors.

#include "lib/queue_state.h"

#include "absl/strings/str_cat.h"

namespace outbox::queue_state {

uint64_t Append(uint64_t bytes, storage::QueueState* state) {
  const uint64_t seq = state->next_seq();
  state->set_next_seq(seq + 1);
  state->set_pending_count(state->pending_count() + 1);
  state->set_pending_bytes(state->pending_bytes() + bytes);
  return seq;
}

void Remove(uint64_t bytes, storage::QueueState* state) {
  state->set_pending_count(SaturatingSub(state->pending_count(), 1));
  state->set_pending_bytes(state->pending_count() == 0
                               ? 0
                               : SaturatingSub(state->pending_bytes(), bytes));
}

void Resize(uint64_t old_bytes, uint64_t new_bytes,
            storage::QueueState* state) {
  state->set_pending_bytes(SaturatingSub(state->pending_bytes(), old_bytes) +
                           new_bytes);
}

void ResetForQueue(uint64_t seq, int64_t now_ms, storage::OutboxEntry* entry) {
  entry->set_seq(seq);
  entry->set_state(storage::ENTRY_STATE_PENDING);
  entry->set_attempts(0);
  entry->set_first_attempt_unix_ms(0);
  entry->set_last_attempt_unix_ms(0);
  entry->set_retry_age_ms(0);
  entry->set_next_attempt_unix_ms(now_ms);
  entry->set_scheduled_unix_ms(now_ms);
  entry->set_last_error("");
  entry->set_last_http_status(0);
}

absl::Status CheckCapacity(const storage::QueueState& after,
                           const Options& options, absl::string_view what) {
  if (after.pending_count() > options.max_pending_events) {
    return absl::ResourceExhaustedError(
        absl::StrCat("outbox is full: ", what, " would take the queue to ",
                     after.pending_count(),
                     " pending events, past "
                     "Options::max_pending_events (",
                     options.max_pending_events, "); nothing was written"));
  }
  if (after.pending_bytes() > options.max_pending_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("outbox is full: ", what, " would take the queue to ",
                     after.pending_bytes(),
                     " stored bytes, past "
                     "Options::max_pending_bytes (",
                     options.max_pending_bytes, "); nothing was written"));
  }
  return absl::OkStatus();
}

}  // namespace outbox::queue_state
