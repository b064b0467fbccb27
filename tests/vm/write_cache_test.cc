// Copyright (c) edge-outbox authors.
//
// The write-cache model on its own, over a real platter file (no network):
// what reads see, what FLUSH and FUA make durable, and what each cut mode
// keeps. Every check reads the platter after the cut, through a fresh
// cache, as the next boot would.

#include "tests/vm/write_cache.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::vm {
namespace {

constexpr size_t kBlock = WriteCache::kBlockSize;
constexpr uint64_t kBlocks = 256;

class WriteCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = dir_.Sub("platter.img");
    std::ofstream(path).close();
    std::filesystem::resize_file(path, kBlocks * kBlock);
    absl::StatusOr<std::unique_ptr<PlatterFile>> platter =
        PlatterFile::Open(path);
    ASSERT_OUTBOX_OK(platter);
    platter_ = *std::move(platter);
  }

  std::unique_ptr<WriteCache> Cache(CutMode mode, bool honest = false) {
    WriteCacheOptions options;
    options.mode = mode;
    options.honest = honest;
    options.seed = 42;
    return std::make_unique<WriteCache>(platter_.get(), options);
  }

  // What the platter holds at `offset`: a fresh cache has nothing unflushed.
  std::string Durable(uint64_t offset, size_t length) {
    WriteCache fresh(platter_.get(), WriteCacheOptions());
    std::string out;
    EXPECT_OUTBOX_OK(fresh.Read(offset, length, &out));
    return out;
  }

  static std::string Fill(char c, size_t n = kBlock) {
    return std::string(n, c);
  }

  outbox::testing::TempDir dir_;
  std::unique_ptr<PlatterFile> platter_;
};

TEST_F(WriteCacheTest, ReadsSeeUnflushedWritesAcrossBlocks) {
  std::unique_ptr<WriteCache> cache = Cache(CutMode::kDrop);
  // Unaligned, over three blocks.
  ASSERT_OUTBOX_OK(cache->Write(kBlock - 100, Fill('a', kBlock + 200), false));
  std::string out;
  ASSERT_OUTBOX_OK(cache->Read(0, 3 * kBlock, &out));
  EXPECT_EQ(out, Fill('\0', kBlock - 100) + Fill('a', kBlock + 200) +
                     Fill('\0', kBlock - 100));
  EXPECT_EQ(Durable(0, 3 * kBlock), Fill('\0', 3 * kBlock));
  EXPECT_EQ(cache->unflushed(), 3u);
}

TEST_F(WriteCacheTest, FlushedWritesSurviveEveryCutMode) {
  for (CutMode mode : {CutMode::kDrop, CutMode::kSubset, CutMode::kReorder}) {
    std::unique_ptr<WriteCache> cache = Cache(mode);
    const std::string data =
        Fill(static_cast<char>('b' + static_cast<int>(mode)), 8 * kBlock);
    ASSERT_OUTBOX_OK(cache->Write(0, data, false));
    ASSERT_OUTBOX_OK(cache->Flush());
    absl::StatusOr<CutReport> report = cache->Cut();
    ASSERT_OUTBOX_OK(report);
    EXPECT_EQ(report->unflushed, 0u) << CutModeName(mode);
    EXPECT_EQ(Durable(0, data.size()), data) << CutModeName(mode);
  }
}

TEST_F(WriteCacheTest, DropLosesEveryUnflushedWriteAndKeepsTheFlushedOnes) {
  std::unique_ptr<WriteCache> cache = Cache(CutMode::kDrop);
  ASSERT_OUTBOX_OK(cache->Write(0, Fill('f'), false));
  ASSERT_OUTBOX_OK(cache->Flush());
  ASSERT_OUTBOX_OK(cache->Write(0, Fill('u'), false));  // over a flushed one
  ASSERT_OUTBOX_OK(cache->Write(kBlock, Fill('u', 4 * kBlock), false));
  absl::StatusOr<CutReport> report = cache->Cut();
  ASSERT_OUTBOX_OK(report);
  EXPECT_EQ(report->unflushed, 5u);
  EXPECT_EQ(report->dropped, 5u);
  EXPECT_EQ(report->kept, 0u);
  EXPECT_EQ(Durable(0, 5 * kBlock), Fill('f') + Fill('\0', 4 * kBlock));
}

TEST_F(WriteCacheTest, SubsetTearsAMultiBlockWriteAndIsSeeded) {
  std::string first;
  for (int run = 0; run < 2; ++run) {
    ASSERT_OUTBOX_OK(
        Cache(CutMode::kDrop)->Write(0, Fill('\0', kBlocks * kBlock), true));
    std::unique_ptr<WriteCache> cache = Cache(CutMode::kSubset);
    ASSERT_OUTBOX_OK(cache->Write(0, Fill('s', kBlocks * kBlock), false));
    absl::StatusOr<CutReport> report = cache->Cut();
    ASSERT_OUTBOX_OK(report);
    const std::string after = Durable(0, kBlocks * kBlock);
    uint64_t kept = 0;
    for (uint64_t b = 0; b < kBlocks; ++b) {
      const std::string block = after.substr(b * kBlock, kBlock);
      ASSERT_TRUE(block == Fill('s') || block == Fill('\0')) << "block " << b;
      kept += block == Fill('s');
    }
    // One write of 256 blocks, torn: some blocks kept, some lost.
    EXPECT_GT(kept, 0u);
    EXPECT_LT(kept, kBlocks);
    EXPECT_EQ(report->kept, kept);
    EXPECT_EQ(report->dropped, kBlocks - kept);
    if (run == 0) first = after;
  }
  EXPECT_EQ(Durable(0, kBlocks * kBlock), first) << "same seed, same platter";
}

TEST_F(WriteCacheTest, ReorderCanKeepAnOlderVersionWhileLosingTheNewer) {
  std::unique_ptr<WriteCache> cache = Cache(CutMode::kReorder);
  for (char version : {'1', '2'}) {
    for (uint64_t b = 0; b < kBlocks; ++b) {
      ASSERT_OUTBOX_OK(cache->Write(b * kBlock, Fill(version), false));
    }
  }
  absl::StatusOr<CutReport> report = cache->Cut();
  ASSERT_OUTBOX_OK(report);
  EXPECT_EQ(report->unflushed, 2 * kBlocks);
  const std::string after = Durable(0, kBlocks * kBlock);
  int none = 0, older = 0, newer = 0;
  for (uint64_t b = 0; b < kBlocks; ++b) {
    const std::string block = after.substr(b * kBlock, kBlock);
    none += block == Fill('\0');
    older += block == Fill('1');
    newer += block == Fill('2');
  }
  EXPECT_EQ(none + older + newer, static_cast<int>(kBlocks));
  EXPECT_GT(none, 0);
  EXPECT_GT(older, 0) << "v1 kept while v2 was lost never happened";
  EXPECT_GT(newer, 0);
}

TEST_F(WriteCacheTest, SubsetNeverKeepsAnOlderVersionOfABlock) {
  std::unique_ptr<WriteCache> cache = Cache(CutMode::kSubset);
  for (char version : {'1', '2'}) {
    for (uint64_t b = 0; b < kBlocks; ++b) {
      ASSERT_OUTBOX_OK(cache->Write(b * kBlock, Fill(version), false));
    }
  }
  ASSERT_OUTBOX_OK(cache->Cut());
  const std::string after = Durable(0, kBlocks * kBlock);
  EXPECT_EQ(after.find('1'), std::string::npos);
  EXPECT_NE(after.find('2'), std::string::npos);
}

TEST_F(WriteCacheTest, FuaWriteSurvivesAndOutlivesOlderUnflushedVersions) {
  // keep = 1: every unflushed version survives a reorder cut, so an older
  // one left in the cache would overwrite the FUA write.
  WriteCacheOptions options;
  options.mode = CutMode::kReorder;
  options.keep = 1;
  WriteCache cache(platter_.get(), options);
  ASSERT_OUTBOX_OK(cache.Write(0, Fill('o'), false));
  ASSERT_OUTBOX_OK(cache.Write(100, Fill('F', 10), true));
  EXPECT_EQ(Durable(0, kBlock),
            Fill('o', 100) + Fill('F', 10) + Fill('o', kBlock - 110));
  ASSERT_OUTBOX_OK(cache.Cut());
  EXPECT_EQ(Durable(0, kBlock),
            Fill('o', 100) + Fill('F', 10) + Fill('o', kBlock - 110));
  EXPECT_EQ(cache.counts().fua_writes, 1u);
  EXPECT_EQ(cache.counts().writes, 2u);
}

TEST_F(WriteCacheTest, FuaWriteSurvivesDrop) {
  std::unique_ptr<WriteCache> cache = Cache(CutMode::kDrop);
  ASSERT_OUTBOX_OK(cache->Write(kBlock, Fill('F'), true));
  ASSERT_OUTBOX_OK(cache->Write(0, Fill('u'), false));
  ASSERT_OUTBOX_OK(cache->Cut());
  EXPECT_EQ(Durable(0, 2 * kBlock), Fill('\0') + Fill('F'));
}

TEST_F(WriteCacheTest, HonestDiskMakesEveryWriteDurableAtOnce) {
  std::unique_ptr<WriteCache> cache = Cache(CutMode::kDrop, /*honest=*/true);
  ASSERT_OUTBOX_OK(cache->Write(7, Fill('h', 3 * kBlock), false));
  EXPECT_EQ(cache->unflushed(), 0u);
  absl::StatusOr<CutReport> report = cache->Cut();
  ASSERT_OUTBOX_OK(report);
  EXPECT_EQ(report->unflushed, 0u);
  EXPECT_EQ(Durable(7, 3 * kBlock), Fill('h', 3 * kBlock));
}

TEST_F(WriteCacheTest, RequestsPastTheEndAreRefused) {
  std::unique_ptr<WriteCache> cache = Cache(CutMode::kDrop);
  std::string out;
  EXPECT_STATUS_CODE(cache->Read(kBlocks * kBlock - 1, 2, &out),
                     absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(cache->Write(kBlocks * kBlock, "x", false),
                     absl::StatusCode::kResourceExhausted);
  EXPECT_STATUS_CODE(cache->Trim(~uint64_t{0}, 2),
                     absl::StatusCode::kResourceExhausted);
  EXPECT_OUTBOX_OK(cache->Read(kBlocks * kBlock, 0, &out));
}

TEST_F(WriteCacheTest, TrimLeavesTheDataAsItIs) {
  std::unique_ptr<WriteCache> cache = Cache(CutMode::kDrop);
  ASSERT_OUTBOX_OK(cache->Write(0, Fill('t'), false));
  ASSERT_OUTBOX_OK(cache->Trim(0, kBlock));
  std::string out;
  ASSERT_OUTBOX_OK(cache->Read(0, kBlock, &out));
  EXPECT_EQ(out, Fill('t'));
  EXPECT_EQ(cache->counts().trims, 1u);
}

}  // namespace
}  // namespace outbox::vm
