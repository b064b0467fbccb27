// Copyright (c) edge-outbox authors.
//
// Resident memory of outbox-pos-sim on the virtual board (issue 28; on the
// ARM board with OUTBOX_VM_ARCH=aarch64, tests/vm/arm_board.cmake): VmRSS
// and VmHWM, read from the guest's own /proc, after pos-sim ran on a store
// holding 0, 10,000 or 100,000 pending sales, with no receiver (so the
// backlog stays pending: the agent probes, the sales keep coming), under
// the default memory profile and `memory_profile: "small"`. The backlog is
// committed on the host (outbox-pos-sim's own sales, CommitSale) and the
// disk made from that folder (mkfs.ext4 -d), so that 100,000 sales need no
// emulated fsyncs. Prints the table; asserts the budget: VmHWM at most
// 24 MiB with 100,000 pending under the small profile.
//
// A measurement (label bench), not a soak: nothing is cut, the disk is
// honest. Environment: the board as power_cut_test.cc takes it
// (OUTBOX_VM_ARCH, OUTBOX_VM_QEMU_BINARY, OUTBOX_VM_KERNEL_FILE,
// OUTBOX_VM_INITRD_FILE, OUTBOX_VM_MEMORY_MB); OUTBOX_MEMORY_SECONDS, how
// long pos-sim runs before the reading (default 20).

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "examples/pos_sim/pos_sim_sale.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "tests/kill/pos_sim_kill_fixture.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "tests/vm/board.h"
#include "tests/vm/board_under_test.h"
#include "tests/vm/lossy_disk_process.h"

namespace outbox::vm {
namespace {

using ::outbox::testing::EnvNumber;

constexpr int64_t kBudgetKb = 24 * 1024;  // small profile, 100,000 pending
constexpr int64_t kNewSales = 20;         // pos-sim adds these meanwhile

struct Reading {
  int64_t pending = 0;
  std::string profile;
  int64_t rss_kb = 0, hwm_kb = 0, sales = 0;
  absl::Duration boot_to_reading;
};

class BoardMemoryTest : public ::testing::Test {
 protected:
  BoardConfig Board() const {
    BoardConfig c = BoardUnderTest();
    c.serial1_path = dir_.Sub("log");
    c.stderr_path = dir_.Sub("qemu.err");
    return c;
  }

  // A folder holding a store with `pending` of pos-sim's sales, none sent.
  std::string MakeStoreFolder(int64_t pending) {
    const std::string root = dir_.Sub(absl::StrCat("root-", pending));
    std::filesystem::create_directories(root);
    Options options;
    options.tables = {pos_sim::kTable};
    options.sync = false;  // one synced close below covers them
    auto store = Store::Open(options, root + "/store");
    EXPECT_OUTBOX_OK(store);
    if (!store.ok()) return root;
    for (int64_t n = 0; n < pending; ++n) {
      auto committed =
          pos_sim::CommitSale(store->get(), pos_sim::SaleMix(), "till-1", n);
      EXPECT_OUTBOX_OK(committed);
      if (!committed.ok()) break;
    }
    EXPECT_OUTBOX_OK((*store)->Close());
    return root;
  }

  // The ext4 platter made from `root`, as the board's disk.
  std::string MakePlatter(const std::string& root) {
    const std::string platter = root + ".img";
    std::ofstream(platter).close();
    std::filesystem::resize_file(platter, uint64_t{512} << 20);
    auto mkfs = sink::RunToExit(OUTBOX_MKFS_EXT4_BINARY, dir_.path(),
                                {"-F", "-q", "-b", "4096", "-d", root, platter},
                                absl::Seconds(120));
    EXPECT_OUTBOX_OK(mkfs);
    if (mkfs.ok()) {
      EXPECT_EQ(mkfs->exit_code, 0) << mkfs->err;
    }
    return platter;
  }

  // Boots the board on `platter` and returns its "memory" line's figures.
  Reading Measure(const std::string& platter, int64_t pending,
                  const std::string& profile) {
    Reading r;
    r.pending = pending;
    r.profile = profile;
    auto disk = LossyDiskProcess::Start(OUTBOX_LOSSY_DISK_BINARY, platter,
                                        {"--honest"}, dir_.Sub("disk.err"));
    EXPECT_OUTBOX_OK(disk);
    if (!disk.ok()) return r;
    BoardConfig config = Board();
    config.disk_url = (*disk)->Url();
    const int64_t seconds = EnvNumber("OUTBOX_MEMORY_SECONDS", 20);
    config.kernel_args = {
        absl::StrCat("outbox_memory=", seconds),
        "outbox_profile=" + profile,
        absl::StrCat("outbox_sales=", pending + kNewSales),
        absl::StrCat("outbox_rate=",
                     kNewSales / std::max<int64_t>(seconds / 2, 1)),
    };
    const absl::Time start = absl::Now();
    auto board = Board::Boot(config);
    EXPECT_OUTBOX_OK(board);
    if (!board.ok()) return r;
    std::string line, last;
    const absl::Time deadline =
        start + absl::Seconds(seconds) + absl::Minutes(10);
    while ((*board)->ReadConsole(deadline, &line) ==
           ChildProcess::Read::kLine) {
      if (absl::StartsWith(line, "outbox-vm: ")) last = line;
      absl::string_view words = line;
      if (!absl::ConsumePrefix(&words, "outbox-vm: memory ")) continue;
      r.boot_to_reading = absl::Now() - start;
      std::map<std::string, std::string> fields;
      for (absl::string_view word : absl::StrSplit(words, ' ')) {
        std::pair<std::string, std::string> kv = absl::StrSplit(word, '=');
        fields[kv.first] = kv.second;
      }
      EXPECT_TRUE(absl::SimpleAtoi(fields["rss_kb"], &r.rss_kb)) << line;
      EXPECT_TRUE(absl::SimpleAtoi(fields["hwm_kb"], &r.hwm_kb)) << line;
      EXPECT_TRUE(absl::SimpleAtoi(fields["sales"], &r.sales)) << line;
    }
    EXPECT_GT(r.hwm_kb, 0) << "no memory line; the guest's last: " << last;
    EXPECT_EQ((*board)->Wait(absl::Now() + absl::Minutes(2)), 0) << last;
    EXPECT_OUTBOX_OK((*disk)->Stop());
    return r;
  }

  ::outbox::testing::TempDir dir_;
};

TEST_F(BoardMemoryTest, PosSimResidentMemoryWithPendingBacklogs) {
  std::vector<Reading> readings;
  for (int64_t pending : {int64_t{0}, int64_t{10000}, int64_t{100000}}) {
    const std::string root = MakeStoreFolder(pending);
    for (const char* profile : {"default", "small"}) {
      // A disk of its own each time: the same backlog, and pos-sim's sales
      // still to make.
      readings.push_back(Measure(MakePlatter(root), pending, profile));
    }
  }
  std::cout << absl::StrFormat("%-8s %-8s %10s %10s %6s %8s\n", "pending",
                               "profile", "VmRSS KiB", "VmHWM KiB", "sales",
                               "boot s");
  for (const Reading& r : readings) {
    std::cout << absl::StrFormat("%-8d %-8s %10d %10d %6d %8.1f\n", r.pending,
                                 r.profile, r.rss_kb, r.hwm_kb, r.sales,
                                 absl::ToDoubleSeconds(r.boot_to_reading));
    // The sales pos-sim made meanwhile: the store was in use, not idle.
    EXPECT_GT(r.sales, 0) << r.pending << " " << r.profile;
  }
  const Reading& small_full = readings.back();
  EXPECT_LE(small_full.hwm_kb, kBudgetKb)
      << "VmHWM with 100,000 pending under the small profile";
}

}  // namespace
}  // namespace outbox::vm
