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
// And where a 3-step sale's bytes go, by row kind: the log parsed back into
// its write batches.

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/config/workflow_rows.h"
#include "gtest/gtest.h"
#include "lib/keys.h"
#include "lib/store_impl.h"
#include "outbox/agent.h"
#include "rocksdb/file_system.h"
#include "rocksdb/write_batch.h"
#include "tests/crash/power_cut_soak.h"
#include "tests/fault_fs/crash_test_env.h"
#include "tests/fault_fs/fault_injection_fs.h"
#include "tests/testing/events.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/raw_store.h"
#include "tests/testing/recording_transport.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {
namespace {

constexpr char kType[] = "order.created";
constexpr int kWorkflows = 6;

// Keeps what is appended to a write-ahead log file ("*.log") in `*log`
// (the agent runs on one thread, and RocksDB appends to a log from the
// writing thread only; the test reads the logs while nothing writes).
class WalBytesFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  WalBytesFile(std::unique_ptr<rocksdb::FSWritableFile> file, std::string* log)
      : FSWritableFileOwnerWrapper(std::move(file)), log_(log) {}
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    log_->append(data.data(), data.size());
    return target()->Append(data, options, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    log_->append(data.data(), data.size());
    return target()->Append(data, options, info, dbg);
  }

 private:
  std::string* const log_;
};

class WalBytesFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  WalBytesFileSystem() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "WalBytesFileSystem"; }
  // Bytes appended to every log so far.
  uint64_t bytes() const {
    uint64_t total = 0;
    for (const auto& [name, log] : logs_) total += log.size();
    return total;
  }
  // What was appended to each log file, by file name.
  const std::map<std::string, std::string>& logs() const { return logs_; }

  rocksdb::IOStatus NewWritableFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s =
        target()->NewWritableFile(fname, options, result, dbg);
    if (s.ok() && absl::EndsWith(fname, ".log")) {
      *result =
          std::make_unique<WalBytesFile>(std::move(*result), &logs_[fname]);
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
      *result =
          std::make_unique<WalBytesFile>(std::move(*result), &logs_[fname]);
    }
    return s;
  }

 private:
  std::map<std::string, std::string> logs_;
};

// Puts and deletes of the write batches in a write-ahead log, by kind: a
// column family's name and, in outbox.workflows, the row the key's first
// byte names. Bytes are the keys' and values'.
struct KindCount {
  int puts = 0;
  int deletes = 0;
  uint64_t bytes = 0;
};
using Kinds = std::map<std::string, KindCount>;

class KindCounter final : public rocksdb::WriteBatch::Handler {
 public:
  KindCounter(const std::map<uint32_t, std::string>& families, Kinds* kinds)
      : families_(families), kinds_(kinds) {}
  rocksdb::Status PutCF(uint32_t family, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    KindCount& k = (*kinds_)[KindOf(family, key)];
    ++k.puts;
    k.bytes += key.size() + value.size();
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t family,
                           const rocksdb::Slice& key) override {
    KindCount& k = (*kinds_)[KindOf(family, key)];
    ++k.deletes;
    k.bytes += key.size();
    return rocksdb::Status::OK();
  }
  rocksdb::Status SingleDeleteCF(uint32_t family,
                                 const rocksdb::Slice& key) override {
    return DeleteCF(family, key);
  }

 private:
  std::string KindOf(uint32_t family, const rocksdb::Slice& key) const {
    auto it = families_.find(family);
    const std::string name =
        it == families_.end() ? absl::StrCat("family ", family) : it->second;
    if (name != keys::kWorkflowFamily || key.empty()) return name;
    auto row = WorkflowRowKinds().find(key[0]);
    return row == WorkflowRowKinds().end() ? name : row->second;
  }

  // outbox.workflows' row kinds by their keys' first byte, as lib/keys.h
  // makes them.
  static const std::map<char, std::string>& WorkflowRowKinds() {
    static const auto* kinds = new std::map<char, std::string>{
        {keys::WorkflowStateKey("")[0], "workflow state"},
        {keys::kWorkflowHeadPrefix[0], "workflow head"},
        {keys::kWorkflowStepPrefix[0], "workflow step row"},
        {keys::kWorkflowAnswerPrefix[0], "workflow answer row"},
        {keys::WorkflowResultPrefix("")[0], "workflow result row"},
        {keys::WorkflowCancelKey("")[0], "workflow cancel"},
        {keys::kWorkflowFinishedPrefix[0], "finished-workflow index"},
        {keys::kWorkflowDefinitionPrefix[0], "workflow definition"},
    };
    return *kinds;
  }

  const std::map<uint32_t, std::string>& families_;
  Kinds* const kinds_;
};

// RocksDB's log format (db/log_format.h): 32 KiB blocks of records, each a
// 7-byte header (checksum, 2-byte length, type) and its data; a block's
// last 1-6 bytes are padding. A batch fits one record (FULL, type 1) or is
// split across blocks (FIRST 2, MIDDLE 3, LAST 4). Counts every batch from
// byte `from` of `log` on; false if the log does not parse.
bool CountBatches(const std::string& log, size_t from,
                  const std::map<uint32_t, std::string>& families, Kinds* kinds,
                  int* batches) {
  constexpr size_t kBlock = 32768, kHeader = 7;
  std::string batch;
  size_t at = 0;
  while (at + kHeader <= log.size()) {
    const size_t left = kBlock - at % kBlock;
    if (left < kHeader) {
      at += left;
      continue;
    }
    const auto* h = reinterpret_cast<const unsigned char*>(log.data() + at);
    const size_t length = h[4] | (size_t{h[5]} << 8);
    const int type = h[6];
    if (type < 1 || type > 4 || at + kHeader + length > log.size()) {
      return false;
    }
    batch.append(log, at + kHeader, length);
    const bool counted = at >= from;
    at += kHeader + length;
    if (type != 1 && type != 4) continue;
    if (counted) {
      rocksdb::WriteBatch parsed(std::move(batch));
      KindCounter counter(families, kinds);
      if (!parsed.Iterate(&counter).ok()) return false;
      ++*batches;
    }
    batch.clear();
  }
  return at == log.size();
}

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

// What kWorkflows workflows of `steps` steps wrote to the log, run to
// their end by one agent, written as rows or as states (`rows`): bytes per
// step request, and each kind's puts, deletes and bytes.
struct Written {
  double per_step = 0;
  Kinds kinds;
  int batches = 0;
};

// Column family ids to names, read from the closed store at `path`.
std::map<uint32_t, std::string> FamilyNames(const std::string& path) {
  std::map<uint32_t, std::string> names;
  RawEdit(path, [&](rocksdb::DB*, const RawFamilies& families) {
    for (const auto& [name, handle] : families) names[handle->GetID()] = name;
  });
  return names;
}

Written RunWorkflows(int steps, bool rows) {
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
  if (!store.ok()) return Written();
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
  if (!agent.ok()) return Written();
  const uint64_t before = counting->bytes();
  std::map<std::string, size_t> log_before;
  for (const auto& [name, log] : counting->logs())
    log_before[name] = log.size();
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
  Written w;
  w.per_step =
      static_cast<double>(counting->bytes() - before) / (kWorkflows * steps);
  agent->reset();
  EXPECT_OUTBOX_OK((*store)->Close());
  workflow::TEST_SetWriteRows(std::nullopt);
  const std::map<uint32_t, std::string> families = FamilyNames(dir.Sub("db"));
  for (const auto& [name, log] : counting->logs()) {
    EXPECT_TRUE(
        CountBatches(log, log_before[name], families, &w.kinds, &w.batches))
        << name << " does not parse as a write-ahead log";
  }
  return w;
}

double BytesPerStep(int steps, bool rows) {
  return RunWorkflows(steps, rows).per_step;
}

void Print(const char* title, const Written& w) {
  std::printf("%s: %d write batches, per sale:\n", title, w.batches);
  uint64_t total = 0;
  for (const auto& [kind, k] : w.kinds) {
    std::printf("  %-26s %5.2f puts %5.2f deletes %7.1f B\n", kind.c_str(),
                static_cast<double>(k.puts) / kWorkflows,
                static_cast<double>(k.deletes) / kWorkflows,
                static_cast<double>(k.bytes) / kWorkflows);
    total += k.bytes;
  }
  std::printf("  %-26s %7.1f B (keys and values)\n", "total",
              static_cast<double>(total) / kWorkflows);
}

// Where a 3-step sale's bytes go (docs/measured.md), and what a step's
// write may hold as rows: one result row per step, a head per step and one
// at the end, no state stored whole, no answer row when nothing reads one.
TEST(WorkflowBytesTest, AThreeStepSaleWritesEachRowKindAsOftenAsItChanges) {
  const Written rows = RunWorkflows(3, /*rows=*/true);
  const Written states = RunWorkflows(3, /*rows=*/false);
  Print("3 steps, rows", rows);
  Print("3 steps, states", states);
  auto kind = [](const Written& w, const std::string& name) {
    auto it = w.kinds.find(name);
    return it == w.kinds.end() ? KindCount() : it->second;
  };
  EXPECT_EQ(kind(rows, "workflow result row").puts, 3 * kWorkflows);
  EXPECT_LE(kind(rows, "workflow head").puts, 4 * kWorkflows);
  EXPECT_LE(kind(rows, "workflow step row").puts, 2 * 3 * kWorkflows);
  EXPECT_EQ(kind(rows, "workflow state").puts, 0);
  EXPECT_EQ(kind(rows, "workflow answer row").puts, 0);
  // The pending entry is not rewritten per step (issue 26).
  EXPECT_LE(kind(rows, keys::kPendingFamily).puts, kWorkflows);
  // The control: stored whole, the state is rewritten by every step.
  EXPECT_GE(kind(states, "workflow state").puts, 3 * kWorkflows);
  EXPECT_EQ(kind(states, "workflow result row").puts, 3 * kWorkflows);
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
