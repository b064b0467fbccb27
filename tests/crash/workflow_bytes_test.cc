// Copyright (c) edge-outbox authors.
//
// What a workflow costs the flash, per step (issue 26, item 1): counted as
// the bytes appended to RocksDB's write-ahead log (every store write goes
// through it once) while an agent runs workflows of 4 and of 32 steps to
// their end, against an in-process receiver that answers 2xx.
// Invariant: written as rows (feature workflow_rows), the bytes per step
// of a 32-step workflow are at most 1.5x those of a 4-step one. A state
// rewritten whole by every settlement grows with the steps instead; the
// control test shows the meter sees that growth. Bytes, never time.

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/workflow/rows.h"
#include "gtest/gtest.h"
#include "lib/store_impl.h"
#include "outbox/agent.h"
#include "rocksdb/file_system.h"
#include "tests/crash/power_cut_soak.h"
#include "tests/fault_fs/crash_test_env.h"
#include "tests/fault_fs/fault_injection_fs.h"
#include "tests/testing/events.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/recording_transport.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {
namespace {

constexpr char kType[] = "order.created";
constexpr int kWorkflows = 6;

// Counts the bytes appended to write-ahead log files ("*.log").
class WalBytesFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  WalBytesFile(std::unique_ptr<rocksdb::FSWritableFile> file,
               std::atomic<uint64_t>* bytes)
      : FSWritableFileOwnerWrapper(std::move(file)), bytes_(bytes) {}
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    *bytes_ += data.size();
    return target()->Append(data, options, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    *bytes_ += data.size();
    return target()->Append(data, options, info, dbg);
  }

 private:
  std::atomic<uint64_t>* const bytes_;
};

class WalBytesFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  WalBytesFileSystem() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "WalBytesFileSystem"; }
  uint64_t bytes() const { return bytes_.load(); }

  rocksdb::IOStatus NewWritableFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s =
        target()->NewWritableFile(fname, options, result, dbg);
    if (s.ok() && absl::EndsWith(fname, ".log")) {
      *result = std::make_unique<WalBytesFile>(std::move(*result), &bytes_);
    }
    return s;
  }
  rocksdb::IOStatus ReuseWritableFile(
      const std::string& fname, const std::string& old_fname,
      const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s =
        target()->ReuseWritableFile(fname, old_fname, options, result, dbg);
    if (s.ok() && absl::EndsWith(fname, ".log")) {
      *result = std::make_unique<WalBytesFile>(std::move(*result), &bytes_);
    }
    return s;
  }

 private:
  std::atomic<uint64_t> bytes_{0};
};

// `steps` steps, each to its own destination, no reverts: no answer is
// read, so none is kept.
std::string Config(int steps) {
  std::string config = R"(
    retry { base_delay: "100ms" max_delay: "1s" max_attempts: 4 }
    agent { probe_interval_min: "100ms" probe_interval_max: "1s" }
  )";
  std::string flow = absl::StrCat("workflows { event_type: \"", kType, "\"\n");
  for (int i = 0; i < steps; ++i) {
    absl::StrAppend(&config, "destinations { name: \"d", i,
                    "\" url: \"http://receiver.test/d", i, "\" }\n");
    absl::StrAppend(&flow, "  steps { name: \"s", i, "\" destination: \"d", i,
                    "\" }\n");
  }
  return absl::StrCat(config, flow, "}\n");
}

// WAL bytes per step request of kWorkflows workflows of `steps` steps, run
// to their end by one agent, written as rows or as states (`rows`).
double BytesPerStep(int steps, bool rows) {
  workflow::TEST_SetWriteRows(rows);
  TempDir dir;
  auto counting = std::make_shared<WalBytesFileSystem>();
  auto fs = std::make_shared<FaultInjectionFileSystem>(counting);
  std::unique_ptr<rocksdb::Env> env = NewCrashTestEnv(fs);
  FakeClock clock;
  Options options;
  options.tables = {"sales"};
  options.clock = &clock;
  Receiver receiver(/*seed=*/1, AnswerWeights{100, 0, 0, 0, 0, 0});
  auto store = OpenStoreWithEnv(options, dir.Sub("db"), env.get());
  EXPECT_OUTBOX_OK(store);
  if (!store.ok()) return 0;
  for (int i = 0; i < kWorkflows; ++i) {
    Txn txn;
    Event e = MakeEvent(kType, absl::StrCat("till-", i));
    // A sale's size in the benchmark (tests/bench/bench_ops.h): 300 B.
    e.payload = absl::StrCat("{\"sale\":", i, ",\"lines\":\"",
                             std::string(280, 'x'), "\"}");
    txn.Emit(std::move(e));
    txn.Put("sales", absl::StrCat("sale-", i), "placed");
    EXPECT_OUTBOX_OK((*store)->Commit(txn));
  }
  auto agent = Agent::Create(
      store->get(),
      PoweredAgentOptions(Config(steps), &receiver, fs.get(), &clock));
  EXPECT_OUTBOX_OK(agent);
  if (!agent.ok()) return 0;
  const uint64_t before = counting->bytes();
  bool done = false;
  for (int round = 0; round < 40 * steps && !done; ++round) {
    clock.Advance(absl::Milliseconds(1200));
    EXPECT_OUTBOX_OK((*agent)->RunOnce());
    absl::StatusOr<Stats> stats = (*store)->GetStats();
    EXPECT_OUTBOX_OK(stats);
    done = stats.ok() && stats->pending_events == 0;
  }
  EXPECT_TRUE(done) << "the workflows did not finish";
  EXPECT_EQ(receiver.log().size(), static_cast<size_t>(kWorkflows * steps));
  EXPECT_OUTBOX_OK((*store)->Sync());
  const uint64_t written = counting->bytes() - before;
  agent->reset();
  EXPECT_OUTBOX_OK((*store)->Close());
  workflow::TEST_SetWriteRows(std::nullopt);
  return static_cast<double>(written) / (kWorkflows * steps);
}

TEST(WorkflowBytesTest, BytesPerStepStayFlatFromFourToThirtyTwoSteps) {
  const double four = BytesPerStep(4, /*rows=*/true);
  const double thirty_two = BytesPerStep(32, /*rows=*/true);
  RecordProperty("bytes_per_step_4", absl::StrCat(four));
  RecordProperty("bytes_per_step_32", absl::StrCat(thirty_two));
  ASSERT_GT(four, 0);
  EXPECT_LE(thirty_two, 1.5 * four)
      << "rows: " << four << " B/step at 4 steps, " << thirty_two
      << " B/step at 32";
}

// The control: the meter sees a state rewritten whole by every settlement
// grow with the steps (the rule above would fail for it).
TEST(WorkflowBytesTest, AStateWrittenWholeGrowsWithTheSteps) {
  const double four = BytesPerStep(4, /*rows=*/false);
  const double thirty_two = BytesPerStep(32, /*rows=*/false);
  RecordProperty("bytes_per_step_4", absl::StrCat(four));
  RecordProperty("bytes_per_step_32", absl::StrCat(thirty_two));
  EXPECT_GT(thirty_two, 1.5 * four)
      << "states: " << four << " B/step at 4 steps, " << thirty_two
      << " B/step at 32";
}

}  // namespace
}  // namespace outbox::testing
