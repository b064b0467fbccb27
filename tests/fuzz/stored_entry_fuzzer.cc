// Copyright (c) edge-outbox authors.
//
// Fuzzes the decoders of stored values (lib/codec.h): whatever bytes a
// damaged or foreign store holds, decoding gives a message or kDataLoss,
// never a crash.
//
// Input: one byte choosing the message (see kKinds), eight bytes of sequence
// number (big-endian; the key DecodePendingEntry checks the entry against),
// then the stored value. Shorter inputs are padded with zeros.
//
// Properties checked besides "no crash, no sanitizer report":
//   - a failure is always kDataLoss;
//   - what decodes re-encodes to bytes that decode to the same message;
//   - a decoded pending entry is pending, has an id and matches its key, and
//     ToEntry(ToPendingEvent(entry)) gives it back field for field;
//   - what ScanPendingEntry (the open's reader) accepts, DecodePendingEntry
//     accepts with the same index fields; the scan accepts every entry the
//     library encodes; ReadIndexFields fails exactly when decoding does.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "google/protobuf/stubs/logging.h"
#include "lib/codec.h"
#include "lib/entry_scan.h"
#include "lib/keys.h"
#include "proto/storage.pb.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using outbox::storage::DeadLetter;
using outbox::storage::IdempotencyRecord;
using outbox::storage::OutboxEntry;
using outbox::storage::QueueState;
using outbox::storage::StoreManifest;

// The first input byte, modulo 5: which stored message the value claims to be.
enum Kind : uint8_t {
  kPendingEntry = 0,  // DecodePendingEntry
  kDeadLetter = 1,
  kIdempotencyRecord = 2,
  kQueueState = 3,
  kStoreManifest = 4,
  kKinds = 5,
};

// Decodes `value` into a fresh `Message`; checks the failure code, and that
// what decodes survives a re-encode. Returns whether it decoded.
template <typename Message>
bool DecodeAndReencode(absl::string_view family, absl::string_view value,
                       Message* message) {
  const absl::Status s = outbox::DecodeStored(family, "fuzz", value, message);
  if (!s.ok()) {
    FUZZ_CHECK(s.code() == absl::StatusCode::kDataLoss,
               "DecodeStored failed with a code other than kDataLoss");
    return false;
  }
  const std::string encoded = outbox::Encode(*message);
  Message again;
  FUZZ_CHECK(outbox::DecodeStored(family, "fuzz", encoded, &again).ok(),
             "a re-encoded message does not decode");
  FUZZ_CHECK(outbox::Encode(again) == encoded,
             "a re-encoded message decodes to a different message");
  return true;
}

// ToEntry(ToPendingEvent(entry)) must keep every field. Unknown fields (a
// newer library's) are not carried by PendingEvent, nor are
// scheduled_unix_ms, created_clock_behind and created_store_clock_ms (the
// store's own scheduling and expiry records); a first or last
// attempt at the int64 minimum reads as "never attempted" (InfinitePast),
// which is stored as 0: all expected differences, not findings.
void CheckRoundTrip(const OutboxEntry& entry) {
  OutboxEntry expected = entry;
  expected.DiscardUnknownFields();
  expected.clear_scheduled_unix_ms();
  expected.clear_created_clock_behind();
  expected.clear_created_store_clock_ms();
  if (expected.first_attempt_unix_ms() == std::numeric_limits<int64_t>::min()) {
    expected.set_first_attempt_unix_ms(0);
  }
  if (expected.last_attempt_unix_ms() == std::numeric_limits<int64_t>::min()) {
    expected.set_last_attempt_unix_ms(0);
  }
  const OutboxEntry back = outbox::ToEntry(outbox::ToPendingEvent(entry));
  FUZZ_CHECK(back.SerializeAsString() == expected.SerializeAsString(),
             "ToEntry(ToPendingEvent(entry)) differs from entry");
}

// The open indexes what ScanPendingEntry reads, and delivery sends what
// DecodePendingEntry reads: they must agree on every entry.
void CheckScanAgrees(const OutboxEntry& entry,
                     const outbox::EntryIndexFields& scanned) {
  FUZZ_CHECK(scanned.seq == entry.seq(), "scan: seq differs");
  FUZZ_CHECK(scanned.event_id == entry.event_id(), "scan: event id differs");
  FUZZ_CHECK(scanned.type == entry.type(), "scan: type differs");
  FUZZ_CHECK(scanned.ordering_key == entry.ordering_key(),
             "scan: ordering key differs");
  FUZZ_CHECK(scanned.destination == entry.destination(),
             "scan: destination differs");
  FUZZ_CHECK(scanned.created_unix_ms == entry.created_unix_ms(),
             "scan: created_unix_ms differs");
  FUZZ_CHECK(scanned.next_attempt_unix_ms == entry.next_attempt_unix_ms(),
             "scan: next_attempt_unix_ms differs");
  FUZZ_CHECK(scanned.last_attempt_unix_ms == entry.last_attempt_unix_ms(),
             "scan: last_attempt_unix_ms differs");
  FUZZ_CHECK(scanned.scheduled_unix_ms == entry.scheduled_unix_ms(),
             "scan: scheduled_unix_ms differs");
  FUZZ_CHECK(scanned.attempts == entry.attempts(), "scan: attempts differ");
  FUZZ_CHECK(scanned.state == entry.state(), "scan: state differs");
}

void CheckPendingEntry(uint64_t seq, absl::string_view value) {
  const absl::StatusOr<OutboxEntry> entry =
      outbox::DecodePendingEntry(seq, value);
  const absl::StatusOr<outbox::EntryIndexFields> scanned =
      outbox::ScanPendingEntry(seq, value);
  FUZZ_CHECK(!scanned.ok() || entry.ok(),
             "ScanPendingEntry accepts an entry DecodePendingEntry rejects");
  OutboxEntry decoded;
  const absl::StatusOr<outbox::EntryIndexFields> read =
      outbox::ReadIndexFields(seq, value, &decoded);
  FUZZ_CHECK(read.ok() == entry.ok(),
             "ReadIndexFields and DecodePendingEntry disagree on an entry");
  if (!entry.ok()) {
    FUZZ_CHECK(entry.status().code() == absl::StatusCode::kDataLoss,
               "DecodePendingEntry failed with a code other than kDataLoss");
    FUZZ_CHECK(read.status().code() == absl::StatusCode::kDataLoss,
               "ReadIndexFields failed with a code other than kDataLoss");
    return;
  }
  CheckScanAgrees(*entry, *read);
  if (scanned.ok()) CheckScanAgrees(*entry, *scanned);
  // As this library writes it: proto3, so without groups (an unknown field
  // may be one).
  OutboxEntry plain = *entry;
  plain.DiscardUnknownFields();
  const std::string encoded = outbox::Encode(plain);
  const absl::StatusOr<outbox::EntryIndexFields> rescanned =
      outbox::ScanPendingEntry(seq, encoded);
  FUZZ_CHECK(rescanned.ok(), "ScanPendingEntry rejects an encoded entry");
  CheckScanAgrees(*entry, *rescanned);
  FUZZ_CHECK(entry->seq() == seq, "pending entry does not match its key");
  FUZZ_CHECK(!entry->event_id().empty(), "pending entry without an event id");
  FUZZ_CHECK(entry->state() == outbox::storage::ENTRY_STATE_PENDING,
             "pending entry in another state");
  CheckRoundTrip(*entry);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Junk strings make protobuf log ("invalid UTF-8") on every parse; that
  // would only slow the fuzzer down.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint8_t header[9] = {};
  const size_t header_size = size < sizeof(header) ? size : sizeof(header);
  for (size_t i = 0; i < header_size; ++i) header[i] = data[i];
  uint64_t seq = 0;
  for (size_t i = 1; i < sizeof(header); ++i) seq = (seq << 8) | header[i];
  const absl::string_view value(
      reinterpret_cast<const char*>(data) + header_size, size - header_size);

  switch (header[0] % kKinds) {
    case kPendingEntry:
      CheckPendingEntry(seq, value);
      break;
    case kDeadLetter: {
      DeadLetter dead;
      if (DecodeAndReencode(outbox::keys::kDeadFamily, value, &dead)) {
        // The store turns a dead letter's entry into a PendingEvent without
        // DecodePendingEntry's checks: any decoded entry must convert.
        outbox::ToPendingEvent(dead.entry());
      }
      break;
    }
    case kIdempotencyRecord: {
      IdempotencyRecord record;
      DecodeAndReencode(outbox::keys::kIdempotencyFamily, value, &record);
      break;
    }
    case kQueueState: {
      QueueState state;
      DecodeAndReencode(outbox::keys::kMetaFamily, value, &state);
      break;
    }
    case kStoreManifest: {
      StoreManifest manifest;
      DecodeAndReencode(outbox::keys::kMetaFamily, value, &manifest);
      break;
    }
  }
  return 0;
}
