// Copyright (c) edge-outbox authors.
//
// Column family names and key encodings of an outbox store.
//
//   outbox.meta     "manifest" -> StoreManifest, "queue" -> QueueState
//   outbox.pending  Seq(seq)   -> OutboxEntry          (the FIFO queue)
//   outbox.dead     event id   -> DeadLetter
//   outbox.idem     "k" + key  -> IdempotencyRecord
//                   "t" + Seq(commit unix ms) + key -> "" (expiry index,
//                     the wall clock's time; the window itself runs on the
//                     store clock, lib/store_clock.h)
//   outbox.workflows  "s" + event id -> WorkflowState
//                     "c" + event id -> WorkflowCancel
//                     "r" + event id + "/" + 4-byte big-endian n -> StepResult
//                     "f" + Seq(finished unix ms) + event id -> ""
//                       (retention index of finished workflows)
//                     "d" + definition id -> a workflow definition, as
//                       the agent encodes it (opaque to the store)
//                     feature workflow_rows, instead of "s":
//                     "w" + event id -> WorkflowHead
//                     "t" + event id + "/" + 2-byte big-endian i
//                       -> WorkflowStep (step i)
//                     "a" + event id + "/" + 2-byte big-endian i
//                       -> StepAnswer (step i's kept answer)
//
// Sequence numbers are fixed-width big-endian so that RocksDB's bytewise
// order is commit order, and a scan can start exactly at the queue's head.

#ifndef OUTBOX_LIB_KEYS_H_
#define OUTBOX_LIB_KEYS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace outbox::keys {

inline constexpr char kMetaFamily[] = "outbox.meta";
inline constexpr char kPendingFamily[] = "outbox.pending";
inline constexpr char kDeadFamily[] = "outbox.dead";
inline constexpr char kIdempotencyFamily[] = "outbox.idem";
// Added after the first release: a writable open creates it in older stores.
inline constexpr char kWorkflowFamily[] = "outbox.workflows";
inline constexpr char kReservedPrefix[] = "outbox.";

inline constexpr char kManifestKey[] = "manifest";
inline constexpr char kQueueStateKey[] = "queue";

// 8-byte big-endian encoding of `seq`.
std::string Seq(uint64_t seq);
// Inverse of Seq(); nullopt unless `key` is exactly 8 bytes.
std::optional<uint64_t> ParseSeq(absl::string_view key);
// Seq() as 16 hex digits, for messages.
std::string SeqForHumans(uint64_t seq);

std::string IdempotencyRecordKey(absl::string_view idempotency_key);
std::string IdempotencyExpiryKey(int64_t committed_ms,
                                 absl::string_view idempotency_key);
inline constexpr char kIdempotencyExpiryPrefix[] = "t";
// Splits an expiry key; nullopt if malformed.
struct ExpiryKey {
  int64_t committed_ms;  // its record's committed_unix_ms
  std::string idempotency_key;
};
std::optional<ExpiryKey> ParseIdempotencyExpiryKey(absl::string_view key);

std::string WorkflowStateKey(absl::string_view event_id);
std::string WorkflowCancelKey(absl::string_view event_id);
// Every result row of `event_id` starts with this; row `n` is the prefix
// followed by n in 4 big-endian bytes, so rows sort in number order.
std::string WorkflowResultPrefix(absl::string_view event_id);
std::string WorkflowResultKey(absl::string_view event_id, uint32_t n);
// The rows of a workflow (feature workflow_rows). Steps and answers are
// keyed by the step's index (steps number at most 65535: agent/config/workflows.cc).
inline constexpr char kWorkflowHeadPrefix[] = "w";
inline constexpr char kWorkflowStepPrefix[] = "t";
inline constexpr char kWorkflowAnswerPrefix[] = "a";
std::string WorkflowHeadKey(absl::string_view event_id);
std::string WorkflowStepPrefix(absl::string_view event_id);
std::string WorkflowStepKey(absl::string_view event_id, uint32_t i);
std::string WorkflowAnswerPrefix(absl::string_view event_id);
std::string WorkflowAnswerKey(absl::string_view event_id, uint32_t i);
// Splits a step or answer key (either prefix); nullopt if malformed.
struct RowKey {
  std::string event_id;
  uint32_t step;
};
std::optional<RowKey> ParseWorkflowRowKey(absl::string_view key);
inline constexpr char kWorkflowFinishedPrefix[] = "f";
std::string WorkflowFinishedKey(int64_t finished_unix_ms,
                                absl::string_view event_id);
// Splits a finished-index key; nullopt if malformed.
struct FinishedKey {
  int64_t finished_unix_ms;
  std::string event_id;
};
std::optional<FinishedKey> ParseWorkflowFinishedKey(absl::string_view key);
inline constexpr char kWorkflowDefinitionPrefix[] = "d";
std::string WorkflowDefinitionKey(absl::string_view definition_id);

}  // namespace outbox::keys

#endif  // OUTBOX_LIB_KEYS_H_
