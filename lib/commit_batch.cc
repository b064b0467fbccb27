// Copyright (c) edge-outbox authors.

#include "lib/commit_batch.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/codec.h"
#include "lib/keys.h"
#include "lib/queue_state.h"
#include "lib/rocks_status.h"

namespace outbox {
namespace {

constexpr size_t kMaxIdempotencyKeyBytes = 512;
constexpr size_t kMaxCancelIdBytes = 64;
constexpr size_t kMaxCancelReasonBytes = 1024;

absl::Status AddRecords(const Txn& txn, const CommitContext& context,
                        rocksdb::WriteBatch* batch) {
  for (const Txn::RecordOp& op : txn.records()) {
    auto it = context.tables->find(op.table);
    if (it == context.tables->end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown table '", op.table, "' (not in Options::tables)"));
    }
    if (op.key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("empty key in table '", op.table, "'"));
    }
    rocksdb::Status s = op.kind == Txn::OpKind::kPut
                            ? batch->Put(it->second, op.key, op.value)
                            : batch->Delete(it->second, op.key);
    if (!s.ok()) return FromRocks(s, "building the commit");
  }
  return absl::OkStatus();
}

// The idempotency record (and its expiry index entry) that makes a repeat of
// this commit return this commit's answer.
absl::Status AddIdempotencyRecord(const Txn& txn, const CommitContext& context,
                                  rocksdb::WriteBatch* batch) {
  const std::string& key = txn.idempotency_key();
  if (key.empty()) return absl::OkStatus();
  rocksdb::Status s;
  if (context.expired_key_committed_ms.has_value()) {
    s = batch->Delete(
        context.idempotency,
        keys::IdempotencyExpiryKey(*context.expired_key_committed_ms, key));
  }
  storage::IdempotencyRecord record;
  for (const Txn::EmittedEvent& e : txn.events()) record.add_event_ids(e.id);
  record.set_response(txn.response());
  record.set_committed_unix_ms(ToStoredMillis(context.now));
  record.set_committed_store_clock_ms(context.store_clock_ms);
  if (s.ok()) {
    s = batch->Put(context.idempotency, keys::IdempotencyRecordKey(key),
                   Encode(record));
  }
  if (s.ok()) {
    // Keyed by the wall clock's time, as builds before the store clock key
    // it: one rolled back to purges these as it always did.
    s = batch->Put(context.idempotency,
                   keys::IdempotencyExpiryKey(ToStoredMillis(context.now), key),
                   "");
  }
  return FromRocks(s, "building the commit");
}

storage::OutboxEntry NewEntry(const Txn& txn, const Txn::EmittedEvent& e,
                              const CommitContext& context) {
  const absl::Time now = context.now;
  storage::OutboxEntry entry;
  entry.set_event_id(e.id);
  entry.set_type(e.event.type);
  entry.set_ordering_key(e.event.ordering_key);
  entry.set_payload(e.event.payload);
  entry.set_content_type(e.event.content_type);
  entry.set_destination(e.event.destination);
  entry.set_created_unix_ms(ToStoredMillis(now));
  // Behind by more than a minute: not two commits racing past each other's
  // mark in the writer queue, but a clock set back (a stale RTC at boot).
  constexpr int64_t kBehindMs = 60 * 1000;
  if (ToStoredMillis(now) < context.clock_mark_ms - kBehindMs) {
    entry.set_created_clock_behind(true);
  }
  entry.set_created_store_clock_ms(context.store_clock_ms);
  entry.set_scheduled_unix_ms(ToStoredMillis(now));
  entry.set_next_attempt_unix_ms(
      ToStoredMillis(std::max(now, e.event.deliver_after)));
  entry.set_state(storage::ENTRY_STATE_PENDING);
  entry.set_idempotency_key(txn.idempotency_key());
  return entry;
}

}  // namespace

absl::Status ValidateTxn(const Txn& txn) {
  if (txn.empty()) {
    return absl::InvalidArgumentError("nothing to commit: the Txn is empty");
  }
  if (txn.idempotency_key().size() > kMaxIdempotencyKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("idempotency key is ", txn.idempotency_key().size(),
                     " bytes; the limit is ", kMaxIdempotencyKeyBytes));
  }
  for (const Txn::CancelOp& c : txn.cancels()) {
    if (c.by_key) {
      if (c.idempotency_key.empty() ||
          c.idempotency_key.size() > kMaxIdempotencyKeyBytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("Txn::CancelByIdempotencyKey: the key is ",
                         c.idempotency_key.size(), " bytes; it must be 1..",
                         kMaxIdempotencyKeyBytes));
      }
    } else if (c.event_id.empty() || c.event_id.size() > kMaxCancelIdBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("Txn::Cancel: the event id is ", c.event_id.size(),
                       " bytes; it must be 1..", kMaxCancelIdBytes));
    }
    if (c.reason.size() > kMaxCancelReasonBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("Txn::Cancel: the reason is ", c.reason.size(),
                       " bytes; the limit is ", kMaxCancelReasonBytes));
    }
  }
  for (size_t i = 0; i < txn.events().size(); ++i) {
    const Txn::EmittedEvent& e = txn.events()[i];
    if (e.event.type.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("event #", i, " (id ", e.id, ") has no type"));
    }
    if (e.id.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("event #", i, " has no id (use Txn::Emit)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CommitBatch> BuildCommitBatch(const Txn& txn,
                                             const CommitContext& context) {
  CommitBatch out;
  OUTBOX_RETURN_IF_ERROR(AddRecords(
      txn, context, context.records_apart ? &out.records : &out.batch));
  OUTBOX_RETURN_IF_ERROR(AddIdempotencyRecord(txn, context, &out.batch));
  out.after = context.before;
  for (const Txn::EmittedEvent& e : txn.events()) {
    storage::OutboxEntry entry = NewEntry(txn, e, context);
    entry.set_seq(out.after.next_seq());
    const std::string value = Encode(entry);
    queue_state::Append(value.size(), &out.after);
    rocksdb::Status s =
        out.batch.Put(context.pending, keys::Seq(entry.seq()), value);
    if (!s.ok()) return FromRocks(s, "building the commit");
    out.events.push_back({entry.seq(), e.event.ordering_key, e.event.type,
                          e.event.destination, entry.next_attempt_unix_ms(),
                          static_cast<uint32_t>(value.size())});
    out.event_ids.push_back(e.id);
  }
  OUTBOX_RETURN_IF_ERROR(queue_state::CheckCapacity(
      out.after, *context.options,
      absl::StrCat("a commit of ", txn.events().size(), " event(s)")));
  return out;
}

}  // namespace outbox
