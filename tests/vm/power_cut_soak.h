// Copyright (c) edge-outbox authors.
//
// The driver of the virtual board's power-cut soak (power_cut_test.cc says
// what it proves): boots the board on the lossy disk again and again, reads
// the simulator's acknowledgements on the console, cuts the power (SIGKILL
// of qemu, then the disk's cache loss) at a moment drawn from a seeded plan,
// checks the disk after every cut, and ends with a boot that drains and
// powers off.

#ifndef OUTBOX_TESTS_VM_POWER_CUT_SOAK_H_
#define OUTBOX_TESTS_VM_POWER_CUT_SOAK_H_

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tests/vm/board.h"
#include "tests/vm/image_check.h"
#include "tests/vm/lossy_disk_process.h"
#include "tools/audit/delivery_audit.h"
#include "tools/audit/sink_log_tail.h"

namespace outbox::vm {

// When a boot's power is cut.
enum class CutPlan {
  kAnyTime,       // 0..(boot time + 3 s) after qemu starts: booting,
                  // recovering, committing or delivering
  kAfterSale,     // 0..(2 / rate) s after the k-th "sale" line: in the
                  // sleep before the next commit, or in that commit's fsync
  kMidDelivery,   // 0..300 ms after the boot's last "sale" line
  kAfterDrained,  // 0..500 ms after "drained": agent stop, store close,
                  // unmount
  kMidAcknowledgement,  // 0..100 ms after the sink logs the boot's k-th
                        // 2xx (it logs before it answers): the answer on
                        // its way, the agent recording the acknowledgement
                        // (a write synced with the next commit or within
                        // a second)
  kInFlush,  // the disk holds each FLUSH kInFlushHold (not flush_ms):
             // 100..300 ms after the k-th "sale" line (k short of the
             // last, at most 5), the next commit's fsync waits on its FLUSH;
             // the cut then waits (up to kInFlushWait) for the disk to say
             // it holds unflushed writes, so it meets them however slowly
             // a busy host runs the board
  kNone,     // the final boot, left to drain and power off
};
const char* CutPlanName(CutPlan plan);
// "after_sale,in_flush" (CutPlanName's names, none of them "none") as plans.
// Errors: kInvalidArgument naming an unknown name, or an empty list.
absl::StatusOr<std::vector<CutPlan>> ParseCutPlans(absl::string_view names);

// How long the disk holds a FLUSH in a kInFlush boot.
constexpr absl::Duration kInFlushHold = absl::Milliseconds(400);
// How long a kInFlush cut waits past its moment for unflushed writes; then
// it cuts anyway, and the soak's coverage check names the boot.
constexpr absl::Duration kInFlushWait = absl::Seconds(10);

struct PowerCutOptions {
  // The board: its machine, qemu-system-*, guest (build-guest.sh) and
  // memory. Each boot adds its disk, log files and kernel words.
  BoardConfig board;
  std::string disk_binary;  // outbox-lossy-disk
  ImageTools tools;
  std::string dir;  // platter, logs, copies
  int cuts = 4;
  uint64_t seed = 1;
  // The disk's cache mode at each cut, in turn ("drop", "subset",
  // "reorder").
  std::vector<std::string> modes = {"reorder", "subset"};
  // The plans, in turn.
  std::vector<CutPlan> plans = {
      CutPlan::kAfterSale,    CutPlan::kMidDelivery,        CutPlan::kAnyTime,
      CutPlan::kAfterDrained, CutPlan::kMidAcknowledgement, CutPlan::kInFlush};
  bool fsync = true;  // false: pos-sim --fsync off, the broken store
  // The disk's --flush-ms: a FLUSH takes this long, and a cut meanwhile
  // finds the writes before it unflushed (without it the window between
  // an fsync's writes and its flush is one loopback round trip).
  int flush_ms = 5;
  double rate = 100;       // --rate
  int max_new_sales = 30;  // each boot adds 3..this to --sales
  // A boot that prints nothing for this long is stuck.
  absl::Duration stall_timeout = absl::Seconds(120);
};

// One boot of the board.
struct Boot {
  int index = 0;
  std::string mode;
  CutPlan plan = CutPlan::kNone;
  int64_t plan_arg = 0;  // ms, or k for kAfterSale
  int64_t delay_ms =
      0;  // kAfterSale, kMidAcknowledgement, kInFlush: after the k-th
  int64_t sales_flag = 0;
  int lines = 0;             // "sale" lines read
  bool cut = false;          // the power was cut (else it powered off)
  std::string last_console;  // the last "outbox-vm:" line or "drained"
  absl::Duration boot_time;  // qemu start to "sink-ready"
  absl::Duration life;       // qemu start to the cut or power-off
  DiskLine disk;             // the disk's "cut" line
  int torn_log_lines = 0;    // a partial last line of ttyS1, left out
  ImageCheck image;
  int64_t counter = 0;  // the store's next-sale counter after the boot
};

// REQUIRES: External synchronization.
class PowerCutSoak {
 public:
  explicit PowerCutSoak(PowerCutOptions options);

  // Makes the disk (mkfs.ext4 on a fresh platter) and runs `cuts` cut boots
  // (up to twice as many boots while some ended without a cut), then the
  // final one. Errors: a boot that stalled, or whose simulator failed; a
  // disk whose store does not open after a cut; the message names the boot.
  absl::Status Run();

  // For the audit: acknowledgements and the sink's requests over all boots.
  audit::AuditInput Input() const;
  // The store's copy after the final boot (Boot::image.store).
  std::string FinalStore() const;
  const std::vector<Boot>& boots() const { return boots_; }

 private:
  absl::Status MakeDisk();
  // The next boot's draws: mode, plan, its argument, --sales.
  Boot PlanBoot(CutPlan plan);
  absl::Status RunBoot(CutPlan plan, bool final_boot);
  // Watches the boot, cuts the power unless it powered off, and reads the
  // console lines qemu had sent. Errors: Watch's and OnLine's.
  absl::Status CutAndCollect(Board* board, LossyDiskProcess* disk, Boot* boot);
  // Reads the console until the plan's moment, a power-off or a stall.
  absl::Status Watch(Board* board, LossyDiskProcess* disk, Boot* boot);
  // Whether to cut now that *cut_at, first passed at `moment`, has passed:
  // yes, but a kInFlush boot waits until `disk` holds unflushed writes or
  // kInFlushWait has gone since `moment`, moving *cut_at on by kPoll.
  // Errors: the disk's Counts().
  absl::StatusOr<bool> MomentCame(LossyDiskProcess* disk, const Boot& boot,
                                  absl::Time moment, absl::Time* cut_at);
  // kMidAcknowledgement: sets *cut_at once the boot's ttyS1 holds its
  // plan_arg-th 2xx line.
  void WatchAnswers(audit::SinkLogTail* answers, const Boot& boot,
                    absl::Time* cut_at);
  // Parses one console line (and keeps it in the boot's .console file);
  // sets *cut_at when it triggers the plan.
  absl::Status OnLine(const std::string& line, absl::Time at, Boot* boot,
                      absl::Time* cut_at);
  // After the boot: the disk's cut, the sink's lines, the image.
  absl::Status Settle(LossyDiskProcess* disk, const std::string& serial1,
                      Boot* boot);
  // Appends the complete lines of the boot's ttyS1 file to sink_log_.
  void CollectSinkLog(const std::string& serial1, Boot* boot);
  int64_t DrawPlanArg(CutPlan plan, int64_t to_make);
  std::vector<std::string> KernelArgs() const;
  // The boot's own files in dir: BootFile(3, ".ttyS1") is dir/boot-3.ttyS1.
  std::string BootFile(int index, const char* suffix) const;

  const PowerCutOptions options_;
  std::mt19937_64 rng_;
  std::string platter_;
  std::string sink_log_;  // every boot's complete ttyS1 lines
  int64_t sales_flag_ = 0;
  int64_t counter_ = 0;
  absl::Duration mean_boot_ = absl::Seconds(15);
  absl::Time started_;     // the running boot's qemu start
  std::ofstream console_;  // the running boot's console lines
  std::vector<audit::AcknowledgedSale> acknowledged_;
  std::vector<Boot> boots_;
};

}  // namespace outbox::vm

#endif  // OUTBOX_TESTS_VM_POWER_CUT_SOAK_H_
