// Copyright (c) edge-outbox authors.
//
// Txn: the writes of one business transaction (records and events),
// buffered in memory until Store::Commit writes them all at once.

#ifndef OUTBOX_LIB_INCLUDE_OUTBOX_TXN_H_
#define OUTBOX_LIB_INCLUDE_OUTBOX_TXN_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "outbox/event.h"

namespace outbox {

// A buffer of record writes and events that Store::Commit applies atomically:
// after a power cut either all of them are in the store or none is.
// Destroying a Txn that was not committed writes nothing.
//
// Example:
//   outbox::Txn txn;
//   txn.Put("sales", sale_id, sale_bytes);
//   outbox::Event event;
//   event.type = "sale.created";
//   event.payload = json;
//   std::string event_id = txn.Emit(event);
//   auto result = store->Commit(txn);
//
// Nothing is validated until Commit, which rejects the whole Txn if any part
// is invalid (unknown table, empty key, event without a type, ...).
//
// A Txn is a plain value. REQUIRES: External synchronization.
class Txn {
 public:
  enum class OpKind { kPut, kDelete };
  struct RecordOp {
    OpKind kind;
    std::string table;
    std::string key;
    std::string value;  // empty for kDelete
  };
  struct EmittedEvent {
    std::string id;
    Event event;
  };
  struct CancelOp {
    std::string event_id;         // Cancel
    std::string idempotency_key;  // CancelByIdempotencyKey
    std::string reason;
    bool by_key = false;  // CancelByIdempotencyKey
  };

  Txn() = default;
  Txn(const Txn&) = default;
  Txn& operator=(const Txn&) = default;
  Txn(Txn&&) = default;
  Txn& operator=(Txn&&) = default;

  // Writes `value` under `key` in the record table `table`.
  void Put(absl::string_view table, absl::string_view key,
           absl::string_view value);

  // Removes `key` from the record table `table` (no error if absent).
  void Delete(absl::string_view table, absl::string_view key);

  // Adds an outgoing event and returns its id: a time-ordered UUIDv7 assigned
  // here, once. The commit stores it and it never changes afterwards (retries,
  // reopen, replay), so the caller may put it in its own records. If Commit
  // turns out to repeat an earlier idempotent commit, the earlier commit's ids
  // are returned instead and this one is never used.
  std::string Emit(Event event);

  // Makes the commit idempotent: a later Commit with the same key (within
  // Options::idempotency_window) writes nothing and returns this commit's
  // event ids and `response` (an answer the caller wants to replay, such as
  // the HTTP response body it sent its own client). Key: 1..512 bytes.
  void SetIdempotencyKey(absl::string_view key,
                         absl::string_view response = {});

  // Cancels the workflow of event `event_id` (an event whose type the
  // agent's configuration maps to workflow steps), in the same batch as the
  // rest of this Txn: typically the business change, e.g. a sale's status
  // set to "cancelled". The agent then starts no further step of it and
  // reverts the steps that completed, last first, as it does when a step
  // fails for good; a workflow that already completed is queued again (at
  // the end of its ordering key's events) for that. The first cancel of an
  // event wins: cancelling it again is a no-op, and so is cancelling a
  // workflow already compensated. An id the store knows nothing of is
  // recorded and never acted on (outboxctl cancel checks first).
  // `event_id`: 1..64 bytes. `reason`: for operators (outboxctl show), at
  // most 1024 bytes.
  void Cancel(absl::string_view event_id, absl::string_view reason);

  // Cancels, as Cancel does, the workflows of the events committed with the
  // idempotency key `key` (Txn::SetIdempotencyKey): the application need
  // not keep the event ids, only its own business key. The store remembers
  // a key for Options::idempotency_window (24 hours by default) until it is
  // purged; a key it does not remember fails the whole Commit with
  // kNotFound and writes nothing (cancel by the event id then). Every event
  // of that commit is cancelled: those that are not workflows are recorded
  // and never acted on. `key`: 1..512 bytes.
  void CancelByIdempotencyKey(absl::string_view key, absl::string_view reason);

  const std::vector<RecordOp>& records() const { return records_; }
  const std::vector<EmittedEvent>& events() const { return events_; }
  const std::string& idempotency_key() const { return idempotency_key_; }
  const std::string& response() const { return response_; }
  const std::vector<CancelOp>& cancels() const { return cancels_; }
  bool empty() const {
    return records_.empty() && events_.empty() && cancels_.empty();
  }

 private:
  std::vector<RecordOp> records_;
  std::vector<EmittedEvent> events_;
  std::vector<CancelOp> cancels_;
  std::string idempotency_key_;
  std::string response_;
};

}  // namespace outbox

#endif  // OUTBOX_LIB_INCLUDE_OUTBOX_TXN_H_
