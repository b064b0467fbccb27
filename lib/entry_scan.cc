// Copyright (c) edge-outbox authors.

#include "lib/entry_scan.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/codec.h"
#include "lib/keys.h"
#include "proto/storage.pb.h"

namespace outbox {
namespace {

// Protobuf's wire types (the low three bits of a tag).
enum WireType : int {
  kVarint = 0,
  kFixed64 = 1,
  kDelimited = 2,
  kFixed32 = 5,
};

// Field numbers of storage::OutboxEntry (proto/storage.proto).
enum Field : int {
  kEventId = 1,
  kType = 2,
  kOrderingKey = 3,
  kDestination = 6,
  kCreated = 7,
  kAttempts = 8,
  kNextAttempt = 9,
  kState = 12,
  kSeq = 14,
  kLastAttempt = 16,
  kScheduled = 18,
};

// Why a scan gave up. The caller decodes the entry in full then, which
// decides whether it is damaged.
absl::Status NotScanned(uint64_t seq, size_t bytes) {
  return absl::DataLossError(absl::StrCat(
      "stored value in ", keys::kPendingFamily, " at key ",
      keys::SeqForHumans(seq), " (", bytes,
      " bytes) is not an entry in the encoding this library writes"));
}

// A base-128 varint of at most `max_bytes` bytes, as protobuf encodes them.
bool ReadVarint(absl::string_view* in, size_t max_bytes, uint64_t* out) {
  uint64_t v = 0;
  for (size_t i = 0; i < max_bytes && i < in->size(); ++i) {
    const uint8_t byte = static_cast<uint8_t>((*in)[i]);
    v |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if (byte < 0x80) {
      in->remove_prefix(i + 1);
      *out = v;
      return true;
    }
  }
  return false;
}

// A length-delimited field's bytes: the length as protobuf reads it (at most
// five bytes, under 2 GiB), then that many bytes.
bool ReadDelimited(absl::string_view* in, absl::string_view* out) {
  uint64_t length = 0;
  if (!ReadVarint(in, 5, &length) || length >= (uint64_t{1} << 31) ||
      length > in->size()) {
    return false;
  }
  *out = in->substr(0, length);
  in->remove_prefix(length);
  return true;
}

// Skips a field the index does not need. Groups (a wire type no field of
// OutboxEntry has, nor this library writes) are left to the full decoder.
bool Skip(absl::string_view* in, int wire_type) {
  uint64_t varint = 0;
  absl::string_view bytes;
  switch (wire_type) {
    case kVarint:
      return ReadVarint(in, 10, &varint);
    case kFixed64:
      if (in->size() < 8) return false;
      in->remove_prefix(8);
      return true;
    case kDelimited:
      return ReadDelimited(in, &bytes);
    case kFixed32:
      if (in->size() < 4) return false;
      in->remove_prefix(4);
      return true;
    default:
      return false;
  }
}

// The index's text fields by number; nullptr for the others.
absl::string_view* TextField(int number, EntryIndexFields* f) {
  switch (number) {
    case kEventId:
      return &f->event_id;
    case kType:
      return &f->type;
    case kOrderingKey:
      return &f->ordering_key;
    case kDestination:
      return &f->destination;
    default:
      return nullptr;
  }
}

// Keeps a varint field the index needs; others are dropped. Narrower fields
// keep the low bits, as protobuf's parser does.
void StoreNumber(int number, uint64_t v, EntryIndexFields* f) {
  switch (number) {
    case kSeq:
      f->seq = v;
      break;
    case kCreated:
      f->created_unix_ms = static_cast<int64_t>(v);
      break;
    case kNextAttempt:
      f->next_attempt_unix_ms = static_cast<int64_t>(v);
      break;
    case kLastAttempt:
      f->last_attempt_unix_ms = static_cast<int64_t>(v);
      break;
    case kScheduled:
      f->scheduled_unix_ms = static_cast<int64_t>(v);
      break;
    case kAttempts:
      f->attempts = static_cast<uint32_t>(v);
      break;
    case kState:
      f->state = static_cast<int>(static_cast<int32_t>(v));
      break;
    default:
      break;
  }
}

// Reads one field into `f`: the fields the index needs, with the wire type
// their declaration gives them. Any other field, or one of them with another
// wire type (which protobuf keeps as an unknown field), is skipped.
bool ReadField(absl::string_view* in, EntryIndexFields* f) {
  uint64_t tag = 0;
  if (!ReadVarint(in, 5, &tag) || tag > 0xffffffffu || (tag >> 3) == 0) {
    return false;
  }
  const int number = static_cast<int>(tag >> 3);
  const int wire_type = static_cast<int>(tag & 7);
  if (wire_type == kVarint) {
    uint64_t v = 0;
    if (!ReadVarint(in, 10, &v)) return false;
    StoreNumber(number, v, f);
    return true;
  }
  absl::string_view* text = TextField(number, f);
  if (wire_type == kDelimited && text != nullptr) {
    return ReadDelimited(in, text);
  }
  return Skip(in, wire_type);
}

}  // namespace

absl::StatusOr<EntryIndexFields> ScanPendingEntry(uint64_t seq,
                                                  absl::string_view value) {
  EntryIndexFields f;
  absl::string_view in = value;
  while (!in.empty()) {
    if (!ReadField(&in, &f)) return NotScanned(seq, value.size());
  }
  if (f.seq != seq || f.event_id.empty() ||
      f.state != storage::ENTRY_STATE_PENDING) {
    return absl::DataLossError(absl::StrCat(
        "stored value in ", keys::kPendingFamily, " at key ",
        keys::SeqForHumans(seq), " is not a pending entry for that key (seq ",
        f.seq, ", state ", f.state, ")"));
  }
  return f;
}

EntryIndexFields IndexFieldsOf(const storage::OutboxEntry& entry) {
  EntryIndexFields f;
  f.seq = entry.seq();
  f.event_id = entry.event_id();
  f.type = entry.type();
  f.ordering_key = entry.ordering_key();
  f.destination = entry.destination();
  f.created_unix_ms = entry.created_unix_ms();
  f.next_attempt_unix_ms = entry.next_attempt_unix_ms();
  f.last_attempt_unix_ms = entry.last_attempt_unix_ms();
  f.scheduled_unix_ms = entry.scheduled_unix_ms();
  f.attempts = entry.attempts();
  f.state = entry.state();
  return f;
}

absl::StatusOr<EntryIndexFields> ReadIndexFields(
    uint64_t seq, absl::string_view value, storage::OutboxEntry* decoded) {
  absl::StatusOr<EntryIndexFields> scanned = ScanPendingEntry(seq, value);
  if (scanned.ok()) return scanned;
  absl::StatusOr<storage::OutboxEntry> entry = DecodePendingEntry(seq, value);
  if (!entry.ok()) return entry.status();
  *decoded = *std::move(entry);
  return IndexFieldsOf(*decoded);
}

}  // namespace outbox
