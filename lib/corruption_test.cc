// Copyright (c) edge-outbox authors.
//
// Damaged stored values: reported as kDataLoss naming the key, never a
// crash, and the rest of the queue keeps flowing.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/keys.h"
#include "proto/storage.pb.h"
#include "rocksdb/db.h"
#include "tests/testing/raw_store.h"
#include "tests/testing/store_fixture.h"

namespace outbox {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeEvent;

class CorruptionTest : public testing::StoreTest {
 protected:
  using Families = std::map<std::string, rocksdb::ColumnFamilyHandle*>;

  // Closes the store, opens its RocksDB directly and lets `edit` damage it,
  // as a bit flip or a buggy writer would.
  void RawEdit(const std::function<void(rocksdb::DB*, const Families&)>& edit) {
    ASSERT_OUTBOX_OK(store_->Close());
    store_.reset();
    std::vector<std::string> names;
    ASSERT_TRUE(
        rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path(), &names)
            .ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const std::string& n : names) {
      descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions());
    }
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), path(), descriptors,
                                  &handles, &raw)
                    .ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    Families families;
    for (rocksdb::ColumnFamilyHandle* h : handles) families[h->GetName()] = h;
    edit(db.get(), families);
    for (rocksdb::ColumnFamilyHandle* h : handles) {
      ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    }
    ASSERT_TRUE(db->Close().ok());
  }

  void WriteRaw(const std::string& family, const std::string& key,
                const std::string& value) {
    RawEdit([&](rocksdb::DB* db, const Families& families) {
      rocksdb::WriteOptions wo;
      wo.sync = true;
      ASSERT_TRUE(db->Put(wo, families.at(family), key, value).ok());
    });
  }

  // Both kinds of undecodable dead letter: a quarantined pending value, and
  // a dead letter whose own value is damaged ("damaged-id").
  void MakeTwoUndecodableDeadLetters() {
    CommitEvent(MakeEvent("t"));
    WriteRaw(keys::kPendingFamily, keys::Seq(0), "\xff\xff damaged");
    Reopen();
    WriteRaw(keys::kDeadFamily, "damaged-id", "\xff\xfe");
    Reopen();
    ASSERT_OUTBOX_OK(store_->Quarantine(0));
  }
};

TEST_F(CorruptionTest, UndecodableEntryIsDataLossAndOthersStillFlow) {
  std::string a = CommitEvent(MakeEvent("t", "k"));
  CommitEvent(MakeEvent("t"));  // seq 1: about to be damaged
  std::string c = CommitEvent(MakeEvent("t", "k2"));
  WriteRaw(keys::kPendingFamily, keys::Seq(1), "\xff\xff garbage");
  Reopen();

  auto due = store_->NextDue(10);
  ASSERT_OUTBOX_OK(due);
  std::vector<std::string> ids;
  for (const PendingEvent& e : due->events) ids.push_back(e.id);
  EXPECT_THAT(ids, ElementsAre(a, c));
  ASSERT_EQ(due->unreadable.size(), 1u);
  EXPECT_EQ(due->unreadable[0].seq, 1u);
  EXPECT_EQ(due->unreadable[0].why.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(due->unreadable[0].why.message()),
              HasSubstr("0000000000000001"));
}

TEST_F(CorruptionTest, QuarantineKeepsRawBytesAsDeadLetter) {
  CommitEvent(MakeEvent("t"));
  const std::string damaged("not a proto \x01\x02\x00 tail", 20);
  WriteRaw(keys::kPendingFamily, keys::Seq(0), damaged);
  Reopen();
  ASSERT_OUTBOX_OK(store_->Quarantine(0));
  Reopen();
  auto due = store_->NextDue(10);
  ASSERT_OUTBOX_OK(due);
  EXPECT_TRUE(due->events.empty());
  EXPECT_TRUE(due->unreadable.empty());
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 1u);
  EXPECT_TRUE((*dead)[0].undecodable);
  EXPECT_EQ((*dead)[0].event.seq, 0u);
  EXPECT_EQ((*dead)[0].undecodable_value, damaged);
  auto found = store_->FindDeadLetter((*dead)[0].event.id);
  ASSERT_OUTBOX_OK(found);
  EXPECT_EQ(found->undecodable_value, damaged);
  EXPECT_STATUS_CODE(store_->Replay((*dead)[0].event.id),
                     absl::StatusCode::kFailedPrecondition);
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 0u);
  EXPECT_EQ(stats->pending_bytes, 0u);
  EXPECT_EQ(stats->dead_letters, 1u);
}

// An empty value is as undecodable as any other (no event id), and must not
// come back from the dead letters as an event under its made-up id.
TEST_F(CorruptionTest, QuarantinedEmptyValueIsUndecodableAndNotReplayable) {
  CommitEvent(MakeEvent("t"));
  WriteRaw(keys::kPendingFamily, keys::Seq(0), "");
  Reopen();
  ASSERT_OUTBOX_OK(store_->Quarantine(0));
  Reopen();
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 1u);
  EXPECT_TRUE((*dead)[0].undecodable);
  EXPECT_EQ((*dead)[0].undecodable_value, "");
  EXPECT_STATUS_CODE(store_->Replay((*dead)[0].event.id),
                     absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->GetStats()->pending_events, 0u);
}

// What quarantine wrote before DeadLetter.undecodable existed: the bytes and
// an entry with only a seq and a made-up id. It still reads as undecodable.
TEST_F(CorruptionTest, QuarantineOfAnOlderStoreIsStillUndecodable) {
  storage::DeadLetter legacy;
  legacy.mutable_entry()->set_seq(3);
  legacy.mutable_entry()->set_event_id("undecodable-0000000000000003");
  legacy.mutable_entry()->set_state(storage::ENTRY_STATE_DEAD);
  legacy.set_reason("stored value does not decode");
  legacy.set_undecodable_value("\xff\xfe");
  WriteRaw(keys::kDeadFamily, "undecodable-0000000000000003",
           legacy.SerializeAsString());
  Reopen();
  auto dead = store_->FindDeadLetter("undecodable-0000000000000003");
  ASSERT_OUTBOX_OK(dead);
  EXPECT_TRUE(dead->undecodable);
  EXPECT_EQ(dead->undecodable_value, "\xff\xfe");
  EXPECT_STATUS_CODE(store_->Replay("undecodable-0000000000000003"),
                     absl::StatusCode::kFailedPrecondition);
}

// An older store's quarantine of an empty value kept no bytes, so nothing
// marks it undecodable; it is still no event (no type) and is not replayed.
TEST_F(CorruptionTest, EmptyQuarantineOfAnOlderStoreIsNotReplayed) {
  storage::DeadLetter legacy;
  legacy.mutable_entry()->set_seq(4);
  legacy.mutable_entry()->set_event_id("undecodable-0000000000000004");
  legacy.mutable_entry()->set_state(storage::ENTRY_STATE_DEAD);
  WriteRaw(keys::kDeadFamily, "undecodable-0000000000000004",
           legacy.SerializeAsString());
  Reopen();
  EXPECT_STATUS_CODE(store_->Replay("undecodable-0000000000000004"),
                     absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->GetStats()->pending_events, 0u);
}

// Age never deletes the only copy of damaged bytes: an operator must.
TEST_F(CorruptionTest, PurgeByAgeKeepsUndecodableDeadLetters) {
  ASSERT_NO_FATAL_FAILURE(MakeTwoUndecodableDeadLetters());
  clock_.Advance(absl::Hours(10000));
  auto purged = store_->PurgeDeadLetters(absl::ZeroDuration());
  ASSERT_OUTBOX_OK(purged);
  EXPECT_EQ(*purged, 0u);
  Reopen();
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 2u);
  for (const DeadLetter& d : *dead) EXPECT_TRUE(d.undecodable) << d.event.id;
  EXPECT_EQ(store_->GetStats()->dead_letters_purged, 0u);
}

TEST_F(CorruptionTest, PurgeDeadLetterByIdDeletesUndecodableOnes) {
  ASSERT_NO_FATAL_FAILURE(MakeTwoUndecodableDeadLetters());
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 2u);
  for (const DeadLetter& d : *dead) {
    ASSERT_OUTBOX_OK(store_->PurgeDeadLetter(d.event.id)) << d.event.id;
  }
  Reopen();
  dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  EXPECT_TRUE(dead->empty());
  EXPECT_EQ(store_->GetStats()->dead_letters_purged, 2u);
}

TEST_F(CorruptionTest, QuarantineRefusesAGoodEntry) {
  CommitEvent(MakeEvent("t"));
  EXPECT_STATUS_CODE(store_->Quarantine(0),
                     absl::StatusCode::kFailedPrecondition);
  EXPECT_STATUS_CODE(store_->Quarantine(7), absl::StatusCode::kNotFound);
}

TEST_F(CorruptionTest, EntryStoredUnderWrongKeyIsDataLoss) {
  CommitEvent(MakeEvent("t"));
  CommitEvent(MakeEvent("t"));
  // Copy of entry 0's bytes under key 1: it decodes, but claims seq 0.
  RawEdit([](rocksdb::DB* db, const Families& families) {
    rocksdb::ColumnFamilyHandle* pending = families.at(keys::kPendingFamily);
    std::string value;
    ASSERT_TRUE(
        db->Get(rocksdb::ReadOptions(), pending, keys::Seq(0), &value).ok());
    ASSERT_TRUE(
        db->Put(rocksdb::WriteOptions(), pending, keys::Seq(1), value).ok());
  });
  Reopen();
  auto due = store_->NextDue(10);
  ASSERT_OUTBOX_OK(due);
  EXPECT_EQ(due->events.size(), 1u);
  ASSERT_EQ(due->unreadable.size(), 1u);
  EXPECT_EQ(due->unreadable[0].seq, 1u);
  EXPECT_EQ(due->unreadable[0].why.code(), absl::StatusCode::kDataLoss);
}

TEST_F(CorruptionTest, CorruptQueueStateRefusesOpenWithDataLoss) {
  CommitEvent(MakeEvent("t"));
  WriteRaw(keys::kMetaFamily, keys::kQueueStateKey, "\xff\xff\xff");
  auto store = Store::Open(options_, path());
  EXPECT_STATUS_CODE(store, absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("queue"));
}

// A store refused at open is left exactly as it was found: the refused
// open writes nothing on its way out (its close once wrote an empty queue
// state, and every later open was refused for that instead).
TEST_F(CorruptionTest, ARefusedOpenWritesNothing) {
  CommitEvent(MakeEvent("t"));
  CommitEvent(MakeEvent("t"));
  clock_.Advance(absl::Hours(2));  // the store clock moved: worth a write
  std::string behind;
  RawEdit([&](rocksdb::DB* db, const Families& families) {
    rocksdb::ColumnFamilyHandle* meta = families.at(keys::kMetaFamily);
    std::string value;
    ASSERT_TRUE(
        db->Get(rocksdb::ReadOptions(), meta, keys::kQueueStateKey, &value)
            .ok());
    storage::QueueState state;
    ASSERT_TRUE(state.ParseFromString(value));
    state.set_next_seq(1);  // behind the entry at seq 1
    behind = state.SerializeAsString();
    rocksdb::WriteOptions wo;
    wo.sync = true;
    ASSERT_TRUE(db->Put(wo, meta, keys::kQueueStateKey, behind).ok());
  });
  clock_.Advance(absl::Hours(2));
  for (int i = 0; i < 2; ++i) {
    auto store = Store::Open(options_, path());
    EXPECT_STATUS_CODE(store, absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(store.status().message()),
                HasSubstr("behind its entries"));
  }
  testing::RawEdit(path(), [&](rocksdb::DB* db,
                               const testing::RawFamilies& families) {
    std::string value;
    ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), families.at(keys::kMetaFamily),
                        keys::kQueueStateKey, &value)
                    .ok());
    EXPECT_EQ(value, behind);
  });
}

TEST_F(CorruptionTest, CorruptDeadLetterIsDataLossNamingKey) {
  WriteRaw(keys::kDeadFamily, "some-id", "\xff\xfe");
  Reopen();
  auto dead = store_->FindDeadLetter("some-id");
  EXPECT_STATUS_CODE(dead, absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(dead.status().message()), HasSubstr("some-id"));
}

TEST_F(CorruptionTest, CorruptDeadLetterDoesNotHideTheOthers) {
  CommitEvent(MakeEvent("t"));
  WriteRaw(keys::kDeadFamily, "damaged-id", "\xff\xfe");
  Reopen();
  ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(OnlyDue(), "rejected"));
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 2u);
  int damaged = 0;
  for (const DeadLetter& d : *dead) {
    if (d.undecodable) {
      ++damaged;
      EXPECT_EQ(d.event.id, "damaged-id");
      EXPECT_THAT(d.reason, HasSubstr("damaged-id"));
    } else {
      EXPECT_EQ(d.reason, "rejected");
    }
  }
  EXPECT_EQ(damaged, 1);
}

}  // namespace
}  // namespace outbox
