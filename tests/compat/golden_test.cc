// Copyright (c) edge-outbox authors.
//
// Golden stores written by earlier commits of this project
// (tests/compat/golden/, made by make_golden.sh), in the manner of RocksDB's
// check_format_compatible.sh. Invariant: the current library opens each one
// (a copy) for writing, finds exactly what the writing commit recorded in
// the golden's .txt (pending events, dead letters, the quarantined entry,
// idempotency keys, the delivered count), verifies it sound, and the real
// agent drains it to a real outbox-sink: every event arrives under its id,
// and every half-way workflow resumes at the step it had reached.

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "agent/config/workflow_rows.h"
#include "agent/expr/step_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/storage.pb.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using ::testing::UnorderedElementsAreArray;

// What the writing commit recorded (golden_writer.cc's lines).
struct Facts {
  std::string header;
  std::set<std::string> pending, dead, quarantined;
  std::vector<std::pair<std::string, std::string>> idempotency;  // key, id
  std::vector<std::pair<std::string, std::string>> workflows;    // id, next
  uint64_t delivered_total = 0;
};

Facts ReadFacts(const std::string& path) {
  Facts f;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> w = absl::StrSplit(line, ' ');
    if (line.rfind("#", 0) == 0) {
      if (f.header.empty()) f.header = line;
    } else if (w[0] == "pending" && w.size() == 2) {
      f.pending.insert(w[1]);
    } else if (w[0] == "dead" && w.size() == 2) {
      f.dead.insert(w[1]);
    } else if (w[0] == "quarantined" && w.size() == 2) {
      f.quarantined.insert(w[1]);
    } else if (w[0] == "idempotency" && w.size() == 3) {
      f.idempotency.emplace_back(w[1], w[2]);
    } else if (w[0] == "workflow" && w.size() == 4) {
      f.workflows.emplace_back(w[1], w[3]);
    } else if (w[0] == "delivered_total" && w.size() == 2) {
      f.delivered_total = std::stoull(w[1]);
    } else {
      ADD_FAILURE() << "unknown line in " << path << ": " << line;
    }
  }
  return f;
}

class GoldenStoreTest : public testing::AgentSinkTest,
                        public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    testing::AgentSinkTest::SetUp();
    store_.reset();  // the fixture's own empty store is not used
    const std::string golden = absl::StrCat(OUTBOX_GOLDEN_DIR, "/", GetParam());
    facts_ = ReadFacts(golden + ".txt");
    const std::string into = dir_.Sub("golden");
    const std::string untar =
        absl::StrCat("mkdir -p '", into, "' && tar -xzf '", golden,
                     ".tar.gz' -C '", into, "'");
    ASSERT_EQ(std::system(untar.c_str()), 0) << untar;
    path_ = into + "/store";
    // Commits before the store's directory was made private (0700) wrote
    // it 0755; an open now refuses that, saying to chmod 700, which is
    // what an operator does once on such a device.
    ASSERT_EQ(chmod(path_.c_str(), 0700), 0);
    Options options;
    options.tables = {"sales"};
    // The golden stores were written on fixed days; their idempotency keys
    // must still answer however long after that the test runs, so the
    // window covers every day since (the default 24 hours would expire them
    // a day after each store was made).
    options.idempotency_window = absl::Hours(24 * 365 * 30);
    auto store = Store::Open(options, path_);
    ASSERT_OUTBOX_OK(store);
    store_ = std::move(*store);
  }

  std::string WorkflowConfig() const {
    auto destination = [&](const char* name, const char* path) {
      return absl::StrCat("destinations { name: \"", name,
                          "\" url: \"http://127.0.0.1:", port_, path,
                          "\" secrets_file: \"", secret_path_, "\" }\n");
    };
    return Config("/", absl::StrCat(destination("inventory", "/api/reserve"),
                                    destination("shipping", "/api/ship"), R"(
      workflows {
        event_type: "order.created"
        steps { name: "reserve" destination: "inventory" }
        steps { name: "ship" destination: "shipping" }
      })"));
  }

  std::set<std::string> SinkIds(const std::string& path) const {
    std::set<std::string> ids;
    for (const testing::SinkLine& l : SinkLog()) {
      if (l.path == path && l.status / 100 == 2) ids.insert(l.id);
    }
    return ids;
  }

  void DrainAndCheck(bool rows);

  Facts facts_;
  std::string path_;
};

TEST_P(GoldenStoreTest, OpensWithWhatItsCommitWrote) {
  SCOPED_TRACE(facts_.header);
  std::set<std::string> pending = facts_.pending;
  for (const auto& [id, next] : facts_.workflows) pending.insert(id);
  auto listed = store_->ListPending(1000);
  ASSERT_OUTBOX_OK(listed);
  std::vector<std::string> ids;
  for (const PendingEvent& e : *listed) ids.push_back(e.id);
  EXPECT_THAT(ids, UnorderedElementsAreArray(pending));
  auto dead = store_->ListDeadLetters(1000);
  ASSERT_OUTBOX_OK(dead);
  std::vector<std::string> dead_ids, undecodable;
  for (const DeadLetter& d : *dead) {
    (d.undecodable ? undecodable : dead_ids).push_back(d.event.id);
  }
  EXPECT_THAT(dead_ids, UnorderedElementsAreArray(facts_.dead));
  EXPECT_THAT(undecodable, UnorderedElementsAreArray(facts_.quarantined));
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, pending.size());
  EXPECT_EQ(stats->dead_letters,
            facts_.dead.size() + facts_.quarantined.size());
  EXPECT_EQ(stats->delivered_total, facts_.delivered_total);
  auto report = store_->Verify();
  ASSERT_OUTBOX_OK(report);
  EXPECT_THAT(report->problems, ::testing::IsEmpty());
}

TEST_P(GoldenStoreTest, IdempotencyKeysStillAnswerRepeats) {
  SCOPED_TRACE(facts_.header);
  ASSERT_FALSE(facts_.idempotency.empty());
  for (const auto& [key, id] : facts_.idempotency) {
    Txn txn;
    txn.Put("sales", "repeat", "x");
    Event e;
    e.type = "sale.created";
    e.payload = "{}";
    txn.Emit(e);
    txn.SetIdempotencyKey(key);
    auto result = store_->Commit(txn);
    ASSERT_OUTBOX_OK(result);
    EXPECT_TRUE(result->duplicate) << key;
    EXPECT_THAT(result->event_ids, ::testing::ElementsAre(id));
  }
}

// Drains the store (dead letters replayed first) and checks that every
// event went out under its id and every workflow resumed where it was.
// `rows`: the agent writes workflows as rows (agent/config/workflow_rows.h),
// converting each state stored whole at its first settlement.
void GoldenStoreTest::DrainAndCheck(bool rows) {
  workflow::TEST_SetWriteRows(rows);
  for (const std::string& id : facts_.dead) {
    ASSERT_OUTBOX_OK(store_->Replay(id));
  }
  StartSink();
  std::unique_ptr<Agent> agent = MakeAgent(WorkflowConfig());
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  std::set<std::string> plain = facts_.pending;
  plain.insert(facts_.dead.begin(), facts_.dead.end());
  EXPECT_EQ(SinkIds("/"), plain);
  std::set<std::string> reserved, shipped;
  for (const auto& [id, next] : facts_.workflows) {
    if (next == "reserve") {
      reserved.insert(workflow::StepRequestId(id, "reserve", false));
    }
    shipped.insert(workflow::StepRequestId(id, "ship", false));
    auto record = store_->GetWorkflow(id);
    ASSERT_OUTBOX_OK(record);
    storage::WorkflowState state;
    ASSERT_TRUE(state.ParseFromString(record->state));
    EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPLETED) << id;
    ASSERT_EQ(state.steps_size(), 2) << id;
    EXPECT_EQ(state.steps(1).status(), storage::STEP_STATUS_DONE) << id;
    EXPECT_EQ(state.rows(), rows) << id;
  }
  // A half-way workflow is not sent its done step again.
  EXPECT_EQ(SinkIds("/api/reserve"), reserved);
  EXPECT_EQ(SinkIds("/api/ship"), shipped);
  auto stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->delivered_total,
            facts_.delivered_total + plain.size() + facts_.workflows.size());
  auto report = store_->Verify();
  ASSERT_OUTBOX_OK(report);
  EXPECT_THAT(report->problems, ::testing::IsEmpty());
  const bool recorded =
      std::find_if(report->features.begin(), report->features.end(),
                   [](const std::string& f) {
                     return f.rfind("incompat:workflow_rows (", 0) == 0;
                   }) != report->features.end();
  EXPECT_EQ(recorded, rows && !facts_.workflows.empty());
  workflow::TEST_SetWriteRows(std::nullopt);
}

TEST_P(GoldenStoreTest, DrainsEveryEventUnderItsIdAndResumesWorkflows) {
  SCOPED_TRACE(facts_.header);
  DrainAndCheck(/*rows=*/false);
}

// The next release's writer (agent/config/workflow_rows.h) on the same stores.
TEST_P(GoldenStoreTest, DrainsAsRowsConvertingTheStatesItTouches) {
  SCOPED_TRACE(facts_.header);
  DrainAndCheck(/*rows=*/true);
}

// golden/<name>.tar.gz and golden/<name>.txt, one per earlier commit.
INSTANTIATE_TEST_SUITE_P(Commits, GoldenStoreTest,
                         ::testing::Values("before_workflows_979cc4d",
                                           "workflow_halfway_abb4d57",
                                           "workflow_halfway_65668e3"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param);
                         });

}  // namespace
}  // namespace outbox
