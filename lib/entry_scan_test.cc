// Copyright (c) edge-outbox authors.
//
// ScanPendingEntry reads the index fields of what this library writes;
// encodings it leaves to the full decoder (groups, over-long varints) still
// index through ReadIndexFields; damage fails both. The stored-entry fuzzer
// checks the same properties on arbitrary bytes.

#include "lib/entry_scan.h"

#include <string>

#include "gtest/gtest.h"
#include "lib/codec.h"
#include "proto/storage.pb.h"

namespace outbox {
namespace {

storage::OutboxEntry Entry() {
  storage::OutboxEntry e;
  e.set_seq(42);
  e.set_event_id("01a2-event");
  e.set_type("sale.created");
  e.set_ordering_key("till-7");
  e.set_destination("erp");
  e.set_payload(std::string(300, 'p'));
  e.set_created_unix_ms(1'700'000'000'000);
  e.set_next_attempt_unix_ms(-5);  // negative: a ten-byte varint
  e.set_last_attempt_unix_ms(1'700'000'000'100);
  e.set_scheduled_unix_ms(1'700'000'000'200);
  e.set_attempts(3);
  e.set_state(storage::ENTRY_STATE_PENDING);
  return e;
}

void ExpectFields(const EntryIndexFields& f, const storage::OutboxEntry& e) {
  EXPECT_EQ(f.seq, e.seq());
  EXPECT_EQ(f.event_id, e.event_id());
  EXPECT_EQ(f.type, e.type());
  EXPECT_EQ(f.ordering_key, e.ordering_key());
  EXPECT_EQ(f.destination, e.destination());
  EXPECT_EQ(f.created_unix_ms, e.created_unix_ms());
  EXPECT_EQ(f.next_attempt_unix_ms, e.next_attempt_unix_ms());
  EXPECT_EQ(f.last_attempt_unix_ms, e.last_attempt_unix_ms());
  EXPECT_EQ(f.scheduled_unix_ms, e.scheduled_unix_ms());
  EXPECT_EQ(f.attempts, e.attempts());
  EXPECT_EQ(f.state, e.state());
}

TEST(EntryScanTest, ReadsWhatTheLibraryWrites) {
  const storage::OutboxEntry e = Entry();
  const std::string value = Encode(e);
  absl::StatusOr<EntryIndexFields> f = ScanPendingEntry(42, value);
  ASSERT_TRUE(f.ok()) << f.status();
  ExpectFields(*f, e);
}

TEST(EntryScanTest, LeavesAGroupToTheDecoderWhichIndexesIt) {
  const storage::OutboxEntry e = Entry();
  // An unknown group, field 100: start tag (wire type 3), a varint field
  // inside, end tag (wire type 4). Protobuf keeps it as an unknown field.
  const std::string value = Encode(e) + "\xa3\x06\x08\x01\xa4\x06";
  ASSERT_TRUE(DecodePendingEntry(42, value).ok());
  EXPECT_FALSE(ScanPendingEntry(42, value).ok());
  storage::OutboxEntry decoded;
  absl::StatusOr<EntryIndexFields> f = ReadIndexFields(42, value, &decoded);
  ASSERT_TRUE(f.ok()) << f.status();
  ExpectFields(*f, e);
}

TEST(EntryScanTest, DamageAndWrongKeysFailWithDataLoss) {
  const std::string value = Encode(Entry());
  storage::OutboxEntry decoded;
  for (const std::string& bad :
       {value.substr(0, value.size() - 1), value + "\x80",
        value + std::string(1, '\0')}) {
    absl::StatusOr<EntryIndexFields> f = ReadIndexFields(42, bad, &decoded);
    EXPECT_EQ(f.status().code(), absl::StatusCode::kDataLoss);
  }
  EXPECT_EQ(ReadIndexFields(43, value, &decoded).status().code(),
            absl::StatusCode::kDataLoss);  // stored under another key
  storage::OutboxEntry dead = Entry();
  dead.set_state(storage::ENTRY_STATE_DEAD);
  EXPECT_EQ(ScanPendingEntry(42, Encode(dead)).status().code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace outbox
