// Copyright (c) edge-outbox authors.
//
// outbox-lossy-disk driven by qemu's own NBD client, qemu-io (Debian's
// qemu-utils): the same negotiation and requests qemu-system-* sends. Each
// client runs with the cache mode "writeback" (writes without FUA, flushes
// only when asked) and ends with `sigraise 9`, so that it dies like a board
// whose power was cut: without the flush qemu sends when it closes a disk.
// Then the disk is cut and read back by a fresh client.
//
// Invariant: what was flushed, or written with FUA, survives every cut
// mode; unflushed writes are all lost under drop, partly under subset, none
// on an honest disk; a FLUSH held by --flush-ms protects nothing until it
// runs; and the cut's counts match what reads back.

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/child_process.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "tests/vm/lossy_disk_process.h"

namespace outbox::vm {
namespace {

constexpr uint64_t kDiskBytes = 4 << 20;
constexpr char kPatternFailed[] = "Pattern verification failed at offset ";

class LossyDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(Platter()).close();
    std::filesystem::resize_file(Platter(), kDiskBytes);
  }

  void TearDown() override {
    if (disk_ != nullptr) {
      EXPECT_OUTBOX_OK(disk_->Stop());
    }
  }

  std::string Platter() const { return dir_.Sub("platter.img"); }

  void StartDisk(const std::vector<std::string>& args) {
    absl::StatusOr<std::unique_ptr<LossyDiskProcess>> disk =
        LossyDiskProcess::Start(OUTBOX_LOSSY_DISK_BINARY, Platter(), args,
                                dir_.Sub("disk.err"));
    ASSERT_OUTBOX_OK(disk);
    disk_ = *std::move(disk);
  }

  // Runs qemu-io on the disk with `commands`; if `die`, it then SIGKILLs
  // itself. Returns its stdout. REQUIRES: no command but `read -P` fails.
  std::string QemuIo(const std::vector<std::string>& commands,
                     bool die = true) {
    std::vector<std::string> args = {"-f", "raw", "-t", "writeback"};
    for (const std::string& command : commands) {
      args.push_back("-c");
      args.push_back(command);
    }
    if (die) args.insert(args.end(), {"-c", "sigraise 9"});
    args.push_back(disk_->Url());
    absl::StatusOr<sink::ExitResult> run =
        sink::RunToExit(OUTBOX_QEMU_IO_BINARY, dir_.path(), args);
    EXPECT_OUTBOX_OK(run);
    if (!run.ok()) return "";
    // qemu-io exits with 1 when a `read -P` finds other data.
    const int want = die                               ? 128 + SIGKILL
                     : FailedOffsets(run->out).empty() ? 0
                                                       : 1;
    EXPECT_EQ(run->exit_code, want) << run->out << run->err;
    EXPECT_EQ(run->err, "");
    return run->out;
  }

  DiskLine Cut() {
    absl::StatusOr<DiskLine> cut = disk_->Cut();
    EXPECT_OUTBOX_OK(cut);
    return cut.ok() ? *cut : DiskLine();
  }

  DiskLine Counts() {
    absl::StatusOr<DiskLine> counts = disk_->Counts();
    EXPECT_OUTBOX_OK(counts);
    return counts.ok() ? *counts : DiskLine();
  }

  // The offsets whose `read -P` failed in qemu-io's output.
  static std::vector<uint64_t> FailedOffsets(const std::string& out) {
    std::vector<uint64_t> offsets;
    for (absl::string_view line : absl::StrSplit(out, '\n')) {
      if (!absl::ConsumePrefix(&line, kPatternFailed)) continue;
      uint64_t offset = 0;
      EXPECT_TRUE(absl::SimpleAtoi(line.substr(0, line.find(',')), &offset))
          << line;
      offsets.push_back(offset);
    }
    return offsets;
  }

  outbox::testing::TempDir dir_;
  std::unique_ptr<LossyDiskProcess> disk_;
};

TEST_F(LossyDiskTest, FlushedDataSurvivesEveryCutMode) {
  // keep=0: subset and reorder lose every unflushed write too, so only the
  // flush can have kept the data.
  for (const char* mode : {"drop", "subset", "reorder"}) {
    SCOPED_TRACE(mode);
    StartDisk({absl::StrCat("--mode=", mode), "--keep=0", "--seed=1"});
    QemuIo({"write -P 0xab 0 64k", "flush", "write -P 0xac 64k 4k"});
    const DiskLine cut = Cut();
    EXPECT_EQ(cut.at("unflushed"), 1u);
    EXPECT_EQ(cut.at("dropped"), 1u);
    const std::string out =
        QemuIo({"read -P 0xab 0 64k", "read -P 0 64k 4k"}, /*die=*/false);
    EXPECT_EQ(FailedOffsets(out), std::vector<uint64_t>()) << out;
    ASSERT_OUTBOX_OK(disk_->Stop());
    disk_.reset();
  }
}

TEST_F(LossyDiskTest, UnflushedDataIsReadBackThenLostUnderDrop) {
  StartDisk({"--mode=drop"});
  const std::string before =
      QemuIo({"write -P 0xcd 0 64k", "read -P 0xcd 0 64k"});
  EXPECT_EQ(FailedOffsets(before), std::vector<uint64_t>()) << before;
  const DiskLine counts = Counts();
  EXPECT_GE(counts.at("writes"), 1u);
  EXPECT_EQ(counts.at("fua_writes"), 0u);
  EXPECT_EQ(counts.at("flushes"), 0u) << "qemu-io flushed on its way out";
  EXPECT_EQ(counts.at("unflushed"), 16u);  // 64 KiB in 4 KiB blocks
  const DiskLine cut = Cut();
  EXPECT_EQ(cut.at("unflushed"), 16u);
  EXPECT_EQ(cut.at("dropped"), 16u);
  EXPECT_EQ(cut.at("kept"), 0u);
  const std::string after = QemuIo({"read -P 0 0 64k"}, /*die=*/false);
  EXPECT_EQ(FailedOffsets(after), std::vector<uint64_t>()) << after;
}

TEST_F(LossyDiskTest, SubsetKeepsSomeBlocksAndLosesTheOthers) {
  constexpr int kBlocks = 64;
  StartDisk({"--mode=subset", "--seed=7"});
  std::vector<std::string> writes, reads;
  for (int i = 0; i < kBlocks; ++i) {
    writes.push_back(absl::StrCat("write -P ", i + 1, " ", i * 4096, " 4k"));
    reads.push_back(absl::StrCat("read -P ", i + 1, " ", i * 4096, " 4k"));
  }
  QemuIo(writes);
  const DiskLine cut = Cut();
  EXPECT_EQ(cut.at("unflushed"), static_cast<uint64_t>(kBlocks));
  EXPECT_GT(cut.at("kept"), 0u);
  EXPECT_GT(cut.at("dropped"), 0u);
  const std::vector<uint64_t> lost =
      FailedOffsets(QemuIo(reads, /*die=*/false));
  EXPECT_EQ(lost.size(), cut.at("dropped"));
  // A lost block holds what the platter had: zeros, not a stale pattern.
  std::vector<std::string> zeros;
  for (uint64_t offset : lost) {
    zeros.push_back(absl::StrCat("read -P 0 ", offset, " 4k"));
  }
  const std::string out = QemuIo(zeros, /*die=*/false);
  EXPECT_EQ(FailedOffsets(out), std::vector<uint64_t>()) << out;
}

TEST_F(LossyDiskTest, FuaWritesSurviveDrop) {
  StartDisk({"--mode=drop"});
  QemuIo({"write -f -P 0xee 0 8k", "write -P 0xdd 8k 4k"});
  const DiskLine counts = Counts();
  // qemu sent the FUA flag itself rather than a flush after the write.
  EXPECT_EQ(counts.at("fua_writes"), 1u);
  EXPECT_EQ(counts.at("flushes"), 0u);
  const DiskLine cut = Cut();
  EXPECT_EQ(cut.at("dropped"), 1u);
  const std::string out =
      QemuIo({"read -P 0xee 0 8k", "read -P 0 8k 4k"}, /*die=*/false);
  EXPECT_EQ(FailedOffsets(out), std::vector<uint64_t>()) << out;
}

TEST_F(LossyDiskTest, HonestDiskKeepsEveryWrite) {
  StartDisk({"--honest", "--mode=drop"});
  QemuIo({"write -P 0x5a 0 64k"});
  const DiskLine cut = Cut();
  EXPECT_EQ(cut.at("unflushed"), 0u);
  const std::string out = QemuIo({"read -P 0x5a 0 64k"}, /*die=*/false);
  EXPECT_EQ(FailedOffsets(out), std::vector<uint64_t>()) << out;
}

// --flush-ms holds a FLUSH before it runs: a cut meanwhile finds the writes
// before it unflushed; once due, it runs and is answered.
TEST_F(LossyDiskTest, AHeldFlushLeavesTheWritesToTheCut) {
  StartDisk({"--mode=drop", "--flush-ms=60000"});
  absl::StatusOr<std::unique_ptr<ChildProcess>> client =
      ChildProcess::StartToFiles(
          {OUTBOX_QEMU_IO_BINARY, "-f", "raw", "-t", "writeback", "-c",
           "write -P 0x42 0 64k", "-c", "flush", disk_->Url()},
          dir_.Sub("held.out"), dir_.Sub("held.err"));
  ASSERT_OUTBOX_OK(client);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (Counts()["writes"] == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  // qemu-io sends the flush as soon as its write is answered.
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_EQ(Counts()["flushes"], 0u) << "the flush was not held";
  EXPECT_EQ((*client)->Wait(absl::Now()), -1) << "qemu-io did not wait for it";
  (*client)->Kill();
  const DiskLine cut = Cut();
  EXPECT_EQ(cut.at("unflushed"), 16u);
  EXPECT_EQ(cut.at("dropped"), 16u);
  ASSERT_OUTBOX_OK(disk_->Stop());

  StartDisk({"--mode=drop", "--flush-ms=50"});
  QemuIo({"write -P 0x43 0 64k", "flush"});
  EXPECT_EQ(Cut().at("unflushed"), 0u);
  const std::string out = QemuIo({"read -P 0x43 0 64k"}, /*die=*/false);
  EXPECT_EQ(FailedOffsets(out), std::vector<uint64_t>()) << out;
}

TEST_F(LossyDiskTest, StoppingTheDiskIsALastCut) {
  StartDisk({"--mode=drop"});
  QemuIo({"write -P 0x77 0 4k", "flush", "write -P 0x78 4k 4k"});
  absl::StatusOr<DiskLine> counts = disk_->Stop();
  disk_.reset();
  ASSERT_OUTBOX_OK(counts);
  EXPECT_EQ(counts->at("cuts"), 1u);
  EXPECT_EQ(counts->at("dropped"), 1u);
  // The platter is a plain image: what the next boot gets.
  std::ifstream in(Platter(), std::ios::binary);
  std::string head(8192, '\0');
  in.read(head.data(), head.size());
  EXPECT_EQ(head, std::string(4096, '\x77') + std::string(4096, '\0'));
}

}  // namespace
}  // namespace outbox::vm
