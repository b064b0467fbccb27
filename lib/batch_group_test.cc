// Copyright (c) edge-outbox authors.
//
// BatchGroup: joined batches hold every record of each, in order, and a DB
// applies them as one write.

#include "lib/batch_group.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

class Keys : public rocksdb::WriteBatch::Handler {
 public:
  rocksdb::Status PutCF(uint32_t, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    seen.push_back("put " + key.ToString() + "=" + value.ToString());
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t, const rocksdb::Slice& key) override {
    seen.push_back("delete " + key.ToString());
    return rocksdb::Status::OK();
  }
  std::vector<std::string> seen;
};

TEST(BatchGroupTest, JoinsRecordsInOrder) {
  rocksdb::WriteBatch a, b, empty;
  ASSERT_TRUE(a.Put("k1", "v1").ok());
  ASSERT_TRUE(a.Delete("k0").ok());
  ASSERT_TRUE(b.Put("k2", "v2").ok());
  BatchGroup group;
  group.Add(a);
  group.Add(empty);
  group.Add(b);
  EXPECT_EQ(group.count(), 3u);
  rocksdb::WriteBatch joined = group.Take();
  EXPECT_EQ(joined.Count(), 3u);
  Keys keys;
  ASSERT_TRUE(joined.Iterate(&keys).ok());
  EXPECT_EQ(keys.seen,
            (std::vector<std::string>{"put k1=v1", "delete k0", "put k2=v2"}));
  EXPECT_EQ(group.count(), 0u);
  EXPECT_EQ(group.Take().Count(), 0u);
}

TEST(BatchGroupTest, DatabaseAppliesTheJoinedBatch) {
  testing::TempDir dir;
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, dir.Sub("db"), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteBatch a, b;
  ASSERT_TRUE(a.Put("x", "1").ok());
  ASSERT_TRUE(b.Put("y", "2").ok());
  ASSERT_TRUE(b.Delete("x").ok());
  BatchGroup group;
  group.Add(a);
  group.Add(b);
  rocksdb::WriteBatch joined = group.Take();
  ASSERT_TRUE(db->Write(rocksdb::WriteOptions(), &joined).ok());
  std::string value;
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), "x", &value).IsNotFound());
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "y", &value).ok());
  EXPECT_EQ(value, "2");
}

}  // namespace
}  // namespace outbox
