// Copyright (c) edge-outbox authors.
//
// Power cuts of the virtual board (issue 15; tests/vm/README.md). A real
// Debian kernel and ext4 in qemu run outbox-pos-sim and outbox-sink on a
// disk whose volatile write cache loses, keeps a subset of, or reorders
// what the guest did not flush. Each boot is cut (SIGKILL of qemu, then the
// disk's cut) at a moment of a seeded plan: as a "sale" line arrives (the
// next commit under way), while the backlog is delivered, after "drained"
// (agent stop, store close, unmount), at any time, boot included, or while
// the disk holds a commit's FLUSH (in_flush: its writes are unflushed). The
// board then boots again on what the disk kept and the simulator continues
// from its stored counter. A last boot drains and powers off.
//
// Invariant: the SIGKILL soak's, checked by the same audit
// (tools/audit/delivery_audit.h; listed in tests/kill/pos_sim_kill_test.cc)
// over the console's acknowledgements, the sink's request log (the second
// serial port, a host file the cut cannot reach) and the store read from
// the disk at the end: every acknowledged sale delivered under its id,
// nothing delivered that was not committed, duplicates with the same id and
// body, FIFO per till, contiguous sales. And after every cut: the store
// reopens (read-only, on the host, from a copy of the disk), and e2fsck -fy
// on a copy finds nothing but stale free counts (image_check.h).
// Counted: cuts per plan and per cache mode, unflushed block writes kept
// and dropped, e2fsck verdicts, boot time, sales, requests, duplicates. A
// run of at least one cut per plan and per mode must have cut in each, and
// met unflushed writes (each in_flush cut must).
//
// The broken variant, outbox-pos-sim --fsync off (commits not fsync'ed),
// must fail the same audit on a disk that drops unflushed writes.
//
// Environment: OUTBOX_VM_CUTS (default 6, one per plan; each `soak`
// entry sets 500),
// OUTBOX_VM_MODES (comma-separated; default reorder,subset),
// OUTBOX_VM_PLANS (comma-separated plan names; default all, in turn),
// OUTBOX_VM_SEED (default random, printed; replays the plans, not the
// timing), OUTBOX_VM_DIR (run there and keep the disk, consoles and logs).
// The board: the x86-64 one this build made, unless OUTBOX_VM_ARCH=aarch64
// names the ARM board with its OUTBOX_VM_QEMU_BINARY, OUTBOX_VM_KERNEL_FILE
// and OUTBOX_VM_INITRD_FILE (the aarch64 build's, tests/vm/arm_board.cmake)
// and OUTBOX_VM_MEMORY_MB (default 512).

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "examples/pos_sim/pos_sim_sale.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "tests/kill/pos_sim_kill_fixture.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "tests/vm/board_under_test.h"
#include "tests/vm/power_cut_soak.h"

namespace outbox::vm {
namespace {

using ::outbox::testing::EnvNumber;

std::string BootTable(const std::vector<Boot>& boots) {
  std::string out =
      "boot  mode  plan(arg)  --sales  lines  end  life  unflushed/kept/"
      "dropped  fsck  counter\n";
  for (const Boot& b : boots) {
    const auto field = [&](const char* name) {
      auto it = b.disk.find(name);
      return it == b.disk.end() ? uint64_t{0} : it->second;
    };
    absl::StrAppend(
        &out, b.index, "  ", b.mode, "  ", CutPlanName(b.plan), "(", b.plan_arg,
        b.delay_ms > 0 ? absl::StrCat(" +", b.delay_ms, "ms") : "", ")  ",
        b.sales_flag, "  ", b.lines, "  ", b.cut ? "cut" : "off", "  ",
        absl::FormatDuration(b.life), "  ", field("unflushed"), "/",
        field("kept"), "/", field("dropped"), "  ",
        FsckVerdictName(b.image.verdict), "  ", b.counter, "\n");
  }
  return out;
}

void PrintFigures(uint64_t seed, const std::vector<Boot>& boots,
                  absl::Duration wall) {
  std::map<std::string, int> plans, modes, fsck;
  uint64_t unflushed = 0, kept = 0, dropped = 0;
  int cuts = 0, torn = 0, dirty_cuts = 0;
  absl::Duration boot_sum;
  int booted = 0;
  for (const Boot& b : boots) {
    ++fsck[absl::StrCat(FsckVerdictName(b.image.verdict), " (exit ",
                        b.image.fsck_exit, ")")];
    torn += b.torn_log_lines;
    if (b.boot_time > absl::ZeroDuration()) {
      boot_sum += b.boot_time;
      ++booted;
    }
    if (!b.cut) continue;
    ++cuts;
    ++plans[CutPlanName(b.plan)];
    ++modes[b.mode];
    const uint64_t found =
        b.disk.count("unflushed") ? b.disk.at("unflushed") : 0;
    unflushed += found;
    dirty_cuts += found > 0 ? 1 : 0;
    kept += b.disk.count("kept") ? b.disk.at("kept") : 0;
    dropped += b.disk.count("dropped") ? b.disk.at("dropped") : 0;
  }
  const auto join = [](const std::map<std::string, int>& m) {
    return absl::StrJoin(m, ", ", absl::PairFormatter(" "));
  };
  std::cout << "[vm soak] seed " << seed << ": " << cuts << " power cuts in "
            << boots.size() << " boots, " << absl::FormatDuration(wall) << " ("
            << (wall > absl::ZeroDuration() ? cuts / absl::ToDoubleMinutes(wall)
                                            : 0)
            << " cuts/minute)\n[vm soak] cuts per plan: " << join(plans)
            << "\n[vm soak] cuts per cache mode: " << join(modes)
            << "\n[vm soak] unflushed block writes at the cuts: " << unflushed
            << " (kept " << kept << ", dropped " << dropped << "), in "
            << dirty_cuts << " cuts"
            << "\n[vm soak] e2fsck -fy after each boot: " << join(fsck)
            << "\n[vm soak] mean boot to sink-ready: "
            << absl::FormatDuration(booted > 0 ? boot_sum / booted
                                               : absl::ZeroDuration())
            << "; torn sink-log lines left out: " << torn << "\n";
}

// What a soak of `options` should have covered and did not: a cut that met
// unflushed block writes (else the disk's cache loss was never tested), and
// a cut of every plan and of every cache mode (else a mode such as subset or
// reorder could have become vacuous unnoticed). Empty when all is covered.
// Plans and modes go in turn, so a run of at least as many cuts as each
// list covers every entry unless boots ended uncut. An in_flush cut lands
// while a FLUSH is held after the commit's writes, so it meets unflushed
// writes whatever the draws: each one that did not is a gap of its own (a
// disk whose cache kept nothing, or a plan that missed its moment).
std::vector<std::string> CoverageGaps(const PowerCutOptions& options,
                                      const std::vector<Boot>& boots) {
  std::vector<std::string> gaps;
  std::map<std::string, int> plans, modes;
  bool unflushed = false;
  for (const Boot& b : boots) {
    if (!b.cut) continue;
    ++plans[CutPlanName(b.plan)];
    ++modes[b.mode];
    auto it = b.disk.find("unflushed");
    const bool met = it != b.disk.end() && it->second > 0;
    unflushed = unflushed || met;
    if (b.plan == CutPlan::kInFlush && !met) {
      gaps.push_back(absl::StrCat("the in_flush cut of boot ", b.index,
                                  " met no unflushed writes"));
    }
  }
  if (!unflushed) gaps.push_back("no cut met unflushed writes");
  for (CutPlan plan : options.plans) {
    if (plans.count(CutPlanName(plan)) == 0) {
      gaps.push_back(absl::StrCat("no cut of plan ", CutPlanName(plan)));
    }
  }
  for (const std::string& mode : options.modes) {
    if (modes.count(mode) == 0) {
      gaps.push_back(absl::StrCat("no cut in cache mode ", mode));
    }
  }
  return gaps;
}

class VmPowerCutTest : public ::testing::Test {
 protected:
  VmPowerCutTest()
      : seed_(EnvNumber("OUTBOX_VM_SEED", std::random_device{}())) {
    const char* keep = std::getenv("OUTBOX_VM_DIR");
    dir_ = keep != nullptr ? keep : temp_.path();
    std::filesystem::create_directories(dir_);
  }

  PowerCutOptions Defaults() const {
    PowerCutOptions o;
    o.board = BoardUnderTest();
    o.disk_binary = OUTBOX_LOSSY_DISK_BINARY;
    o.tools = {OUTBOX_MKFS_EXT4_BINARY, OUTBOX_E2FSCK_BINARY,
               OUTBOX_DEBUGFS_BINARY};
    o.dir = dir_;
    o.seed = seed_;
    return o;
  }

  // Runs the soak and audits it; the report, or nullopt after a failure
  // gtest was told of.
  std::optional<audit::AuditReport> SoakAndAudit(
      const PowerCutOptions& options) {
    PowerCutSoak soak(options);
    const absl::Time start = absl::Now();
    const absl::Status ran = soak.Run();
    PrintFigures(seed_, soak.boots(), absl::Now() - start);
    EXPECT_TRUE(ran.ok()) << ran << "\nseed " << seed_ << "\n"
                          << BootTable(soak.boots());
    if (!ran.ok()) return std::nullopt;
    Options store_options;
    store_options.tables = {pos_sim::kTable};
    auto store = Store::OpenReadOnly(store_options, soak.FinalStore());
    EXPECT_OUTBOX_OK(store);
    if (!store.ok()) return std::nullopt;
    const audit::AuditReport report =
        audit::AuditDeliveries(soak.Input(), store->get());
    std::cout << audit::AuditSummary(report, "[vm soak]") << std::endl;
    table_ = BootTable(soak.boots());
    boots_ = soak.boots();
    if (boots_.size() <= 25) std::cout << table_;
    return report;
  }

  ::outbox::testing::TempDir temp_;
  std::string dir_;
  uint64_t seed_ = 0;
  std::string table_;
  std::vector<Boot> boots_;
};

TEST_F(VmPowerCutTest, AcknowledgedSalesSurvivePowerCutsOnALossyDisk) {
  PowerCutOptions options = Defaults();
  options.cuts = static_cast<int>(EnvNumber("OUTBOX_VM_CUTS", 6));
  if (const char* modes = std::getenv("OUTBOX_VM_MODES")) {
    options.modes = absl::StrSplit(modes, ',');
  }
  if (const char* plans = std::getenv("OUTBOX_VM_PLANS")) {
    absl::StatusOr<std::vector<CutPlan>> parsed = ParseCutPlans(plans);
    ASSERT_OUTBOX_OK(parsed);
    options.plans = *std::move(parsed);
  }
  const std::optional<audit::AuditReport> report = SoakAndAudit(options);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->violation_count, 0)
      << "seed " << seed_ << "; keep the files with OUTBOX_VM_DIR\n"
      << absl::StrJoin(report->violations, "\n") << "\n"
      << table_;
  EXPECT_GT(report->committed, 0);
  int cuts = 0;
  for (const Boot& b : boots_) {
    cuts += b.cut ? 1 : 0;
    EXPECT_TRUE(b.image.verdict == FsckVerdict::kClean ||
                b.image.verdict == FsckVerdict::kCountsOnly ||
                b.image.verdict == FsckVerdict::kExtentsShortened)
        << "boot " << b.index << ": e2fsck exit " << b.image.fsck_exit << ":\n"
        << b.image.fsck_output;
  }
  EXPECT_EQ(cuts, options.cuts) << table_;
  if (options.cuts >= static_cast<int>(options.plans.size()) &&
      options.cuts >= static_cast<int>(options.modes.size())) {
    const std::vector<std::string> gaps = CoverageGaps(options, boots_);
    EXPECT_EQ(gaps, std::vector<std::string>()) << table_;
  }
}

// Commits without fsync on a disk that drops what was not flushed: a cut
// as a "sale" line arrives loses that acknowledged sale (or its neighbours)
// while the next boot reuses its number, which the audit must see.
TEST_F(VmPowerCutTest, AStoreWithoutFsyncIsCaught) {
  PowerCutOptions options = Defaults();
  options.cuts = 3;
  options.fsync = false;
  options.modes = {"drop"};
  options.plans = {CutPlan::kAfterSale};
  const std::optional<audit::AuditReport> report = SoakAndAudit(options);
  ASSERT_TRUE(report.has_value());
  EXPECT_GT(report->violation_count, 0)
      << "seed " << seed_ << ": the broken store passed\n"
      << table_;
}

// CoverageGaps on made-up boots: each gap is named, and a covered run has
// none.
TEST(CoverageGapsTest, NamesWhatTheCutsMissed) {
  PowerCutOptions options;
  options.plans = {CutPlan::kAfterSale, CutPlan::kMidDelivery};
  options.modes = {"reorder", "subset"};
  const auto boot = [](CutPlan plan, const char* mode, uint64_t unflushed,
                       bool cut) {
    Boot b;
    b.plan = plan;
    b.mode = mode;
    b.cut = cut;
    b.disk["unflushed"] = unflushed;
    return b;
  };
  const std::vector<Boot> covered = {
      boot(CutPlan::kAfterSale, "reorder", 0, true),
      boot(CutPlan::kMidDelivery, "subset", 3, true),
      boot(CutPlan::kNone, "reorder", 0, false)};
  EXPECT_EQ(CoverageGaps(options, covered), std::vector<std::string>());
  // An in_flush cut must meet unflushed writes itself: others doing so
  // does not cover for it.
  options.plans.push_back(CutPlan::kInFlush);
  std::vector<Boot> in_flush = covered;
  in_flush.push_back(boot(CutPlan::kInFlush, "reorder", 0, true));
  in_flush.back().index = 3;
  EXPECT_EQ(CoverageGaps(options, in_flush),
            std::vector<std::string>{
                "the in_flush cut of boot 3 met no unflushed writes"});
  in_flush.back().disk["unflushed"] = 2;
  EXPECT_EQ(CoverageGaps(options, in_flush), std::vector<std::string>());
  options.plans.pop_back();
  // Unflushed writes met only by a boot that powered off count for nothing;
  // nor do its plan and mode.
  const std::vector<Boot> clean = {
      boot(CutPlan::kAfterSale, "reorder", 0, true),
      boot(CutPlan::kMidDelivery, "subset", 5, false)};
  EXPECT_EQ(
      CoverageGaps(options, clean),
      (std::vector<std::string>{
          "no cut met unflushed writes",
          absl::StrCat("no cut of plan ", CutPlanName(CutPlan::kMidDelivery)),
          "no cut in cache mode subset"}));
  EXPECT_EQ(CoverageGaps(options, {}).size(), 5u);
}

TEST(ParseCutPlansTest, TakesPlanNamesAndRefusesOthers) {
  absl::StatusOr<std::vector<CutPlan>> plans =
      ParseCutPlans("in_flush,after_sale");
  ASSERT_OUTBOX_OK(plans);
  EXPECT_EQ(*plans,
            (std::vector<CutPlan>{CutPlan::kInFlush, CutPlan::kAfterSale}));
  EXPECT_EQ(ParseCutPlans("after_sale,none").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCutPlans("").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// e2fsck's words after a cut, as the 1000-cut soak met them.
TEST(JudgeFsckTest, NamesWhatE2fsckFixed) {
  const std::string counts =
      "Pass 5: Checking group summary information\n"
      "Free blocks count wrong (25312, counted=25302).\nFix? yes\n\n"
      "Free inodes count wrong (32691, counted=32687).\nFix? yes\n";
  const std::string shorter =
      "Pass 1: Checking inodes, blocks, and sizes\n"
      "Inode 13 extent tree (at level 1) could be shorter.  Optimize? yes\n"
      "\nPass 1E: Optimizing extent trees\n";
  const std::string damage =
      "Inode 12 has an invalid extent\n"
      "\t(logical block 0, invalid physical block 99999, len 1)\n"
      "Clear? yes\n";
  EXPECT_EQ(JudgeFsck(0, ""), FsckVerdict::kClean);
  EXPECT_EQ(JudgeFsck(1, counts), FsckVerdict::kCountsOnly);
  EXPECT_EQ(JudgeFsck(1, shorter + counts), FsckVerdict::kExtentsShortened);
  EXPECT_EQ(JudgeFsck(1, shorter + damage + counts), FsckVerdict::kRepaired);
  EXPECT_EQ(JudgeFsck(4, counts), FsckVerdict::kFailed);
}

}  // namespace
}  // namespace outbox::vm
