// Copyright (c) edge-outbox authors.

#include "outbox/txn.h"

#include <utility>

#include "absl/time/clock.h"
#include "lib/event_id.h"

namespace outbox {

void Txn::Put(absl::string_view table, absl::string_view key,
              absl::string_view value) {
  records_.push_back(RecordOp{OpKind::kPut, std::string(table),
                              std::string(key), std::string(value)});
}

void Txn::Delete(absl::string_view table, absl::string_view key) {
  records_.push_back(
      RecordOp{OpKind::kDelete, std::string(table), std::string(key), ""});
}

std::string Txn::Emit(Event event) {
  // The id is fixed here, before the commit, so the caller can store it in
  // its own records in the same transaction. The system clock is used even
  // when the store has a fake one: ids only need to be unique and ordered.
  std::string id = NewEventId(absl::Now());
  events_.push_back(EmittedEvent{id, std::move(event)});
  return id;
}

void Txn::Cancel(absl::string_view event_id, absl::string_view reason) {
  cancels_.push_back(CancelOp{std::string(event_id), std::string(),
                              std::string(reason), /*by_key=*/false});
}

void Txn::CancelByIdempotencyKey(absl::string_view key,
                                 absl::string_view reason) {
  cancels_.push_back(CancelOp{std::string(), std::string(key),
                              std::string(reason), /*by_key=*/true});
}

void Txn::SetIdempotencyKey(absl::string_view key, absl::string_view response) {
  idempotency_key_ = std::string(key);
  response_ = std::string(response);
}

}  // namespace outbox
