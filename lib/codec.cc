// Copyright (c) edge-outbox authors.

#include "lib/codec.h"

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/keys.h"

namespace outbox {

int64_t ToStoredMillis(absl::Time t) {
  if (t == absl::InfinitePast()) return std::numeric_limits<int64_t>::min();
  if (t == absl::InfiniteFuture()) return std::numeric_limits<int64_t>::max();
  return absl::ToUnixMillis(t);
}

absl::Time FromStoredMillis(int64_t ms) {
  if (ms == std::numeric_limits<int64_t>::min()) return absl::InfinitePast();
  if (ms == std::numeric_limits<int64_t>::max()) return absl::InfiniteFuture();
  return absl::FromUnixMillis(ms);
}

PendingEvent ToPendingEvent(const storage::OutboxEntry& entry) {
  PendingEvent e;
  e.seq = entry.seq();
  e.id = entry.event_id();
  e.type = entry.type();
  e.payload = entry.payload();
  e.content_type = entry.content_type();
  e.ordering_key = entry.ordering_key();
  e.destination = entry.destination();
  e.idempotency_key = entry.idempotency_key();
  e.created = FromStoredMillis(entry.created_unix_ms());
  e.next_attempt = FromStoredMillis(entry.next_attempt_unix_ms());
  e.attempts = entry.attempts();
  e.first_attempt = entry.first_attempt_unix_ms() == 0
                        ? absl::InfinitePast()
                        : FromStoredMillis(entry.first_attempt_unix_ms());
  e.last_attempt = entry.last_attempt_unix_ms() == 0
                       ? absl::InfinitePast()
                       : FromStoredMillis(entry.last_attempt_unix_ms());
  e.retry_age = absl::Milliseconds(entry.retry_age_ms());
  e.last_error = entry.last_error();
  e.last_http_status = entry.last_http_status();
  return e;
}

storage::OutboxEntry ToEntry(const PendingEvent& e) {
  storage::OutboxEntry entry;
  entry.set_seq(e.seq);
  entry.set_event_id(e.id);
  entry.set_type(e.type);
  entry.set_payload(e.payload);
  entry.set_content_type(e.content_type);
  entry.set_ordering_key(e.ordering_key);
  entry.set_destination(e.destination);
  entry.set_idempotency_key(e.idempotency_key);
  entry.set_created_unix_ms(ToStoredMillis(e.created));
  entry.set_next_attempt_unix_ms(ToStoredMillis(e.next_attempt));
  entry.set_attempts(e.attempts);
  entry.set_first_attempt_unix_ms(e.first_attempt == absl::InfinitePast()
                                      ? 0
                                      : ToStoredMillis(e.first_attempt));
  entry.set_last_attempt_unix_ms(e.last_attempt == absl::InfinitePast()
                                     ? 0
                                     : ToStoredMillis(e.last_attempt));
  entry.set_retry_age_ms(absl::ToInt64Milliseconds(e.retry_age));
  entry.set_last_error(e.last_error);
  entry.set_last_http_status(e.last_http_status);
  entry.set_state(storage::ENTRY_STATE_PENDING);
  return entry;
}

absl::Status DecodeStored(absl::string_view family,
                          absl::string_view key_for_humans,
                          absl::string_view value,
                          google::protobuf::MessageLite* message) {
  if (!message->ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    return absl::DataLossError(absl::StrCat(
        "stored value in ", family, " at key ", key_for_humans, " (",
        value.size(), " bytes) does not decode as ", message->GetTypeName()));
  }
  return absl::OkStatus();
}

absl::StatusOr<storage::OutboxEntry> DecodePendingEntry(
    uint64_t seq, absl::string_view value) {
  storage::OutboxEntry entry;
  // The key is formatted only for an error: every read of the queue decodes.
  if (!entry.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    return DecodeStored(keys::kPendingFamily, keys::SeqForHumans(seq), value,
                        &entry);
  }
  if (entry.seq() != seq || entry.event_id().empty() ||
      entry.state() != storage::ENTRY_STATE_PENDING) {
    return absl::DataLossError(absl::StrCat(
        "stored value in ", keys::kPendingFamily, " at key ",
        keys::SeqForHumans(seq), " is not a pending entry for that key (seq ",
        entry.seq(), ", state ", entry.state(), ")"));
  }
  return entry;
}

std::string Encode(const google::protobuf::MessageLite& message) {
  return message.SerializeAsString();
}

bool IsUndecodable(const storage::DeadLetter& dead) {
  // Stores written before the flag existed say so only by keeping the bytes.
  return dead.undecodable() || !dead.undecodable_value().empty();
}

}  // namespace outbox
