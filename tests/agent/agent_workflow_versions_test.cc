// Copyright (c) edge-outbox authors.
//
// A workflow runs to its end under the definition it started with (issue
// 25, item 4): the configuration changes between two runs of the real agent
// against the real outbox-sink, and the running workflow goes on as it
// would have. The hazards these tests pin down, as they were before the
// store kept definitions:
//   - dropping the workflow's event type sent its running workflow's event
//     as a plain event to a "*" route, with its remaining steps skipped;
//   - renaming the destination a taken step used made that step "no
//     revert": the workflow ended compensated with its reservation held;
//   - dropping the type, then cancelling a completed workflow, delivered
//     the requeued event as a plain one instead of reverting its steps.

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "agent/config/config.h"
#include "agent/config/workflow_rows.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/storage.pb.h"
#include "tests/testing/raw_store.h"
#include "tests/testing/status.h"
#include "tests/testing/workflow_sink.h"

namespace outbox {
namespace {

using testing::Concat;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::kHappyPath;
using testing::kReverts;
using ::testing::Not;

// Nothing listens on port 1: a destination there is unreachable (held,
// not attempted), so a workflow waits at its step for the next run.
constexpr char kNowhere[] = "http://127.0.0.1:1";

class AgentWorkflowVersionsTest : public testing::WorkflowSinkTest {
 protected:
  // The sink's base URL.
  std::string Base() const { return absl::StrCat("http://127.0.0.1:", port_); }

  // WorkflowConfig() with the destination at `path` unreachable.
  std::string Unreachable(const std::string& config,
                          const std::string& path) const {
    return absl::StrReplaceAll(config,
                               {{Base() + path, absl::StrCat(kNowhere, path)}});
  }

  // `config` without its workflows, every event type routed to a
  // "catchall" destination at /api/catchall instead.
  std::string WithoutWorkflows(const std::string& config) const {
    const size_t at = config.find("workflows {");
    EXPECT_NE(at, std::string::npos);
    return absl::StrCat(
        config.substr(0, at), Destination("catchall", "/api/catchall"),
        "routes { event_type: \"*\" destination: \"catchall\" }\n");
  }

  // Runs an agent with `config` until the order's first step is done and
  // the next one waits for an unreachable destination.
  void RunUntilHeld(const std::string& config, size_t calls) {
    RunUntilHeld(MakeAgent(config), calls);
  }
  void RunUntilHeld(std::unique_ptr<Agent> agent, size_t calls) {
    ASSERT_NE(agent, nullptr);
    for (int i = 0; i < 200 && Calls().size() < calls; ++i) {
      ASSERT_OUTBOX_OK(agent->RunOnce(absl::Now() + absl::Milliseconds(20)));
    }
    ASSERT_OUTBOX_OK(agent->Drain());
    ASSERT_EQ(Calls().size(), calls);
  }

  // A new agent with `config`, drained once; what is still pending.
  uint64_t DrainOnceWith(const std::string& config) {
    std::unique_ptr<Agent> agent = MakeAgent(config);
    EXPECT_NE(agent, nullptr);
    if (agent == nullptr) return ~uint64_t{0};
    absl::StatusOr<uint64_t> pending = agent->Drain();
    EXPECT_TRUE(pending.ok()) << pending.status();
    return pending.ok() ? *pending : ~uint64_t{0};
  }

  // An agent reading `config` from a file in the test's directory, as
  // outbox-agent does: relative paths in it are relative to that directory.
  std::unique_ptr<Agent> MakeAgentFromFile(const std::string& config) {
    const std::string path = dir_.Sub("agent.textproto");
    std::ofstream(path) << config;
    AgentOptions options;
    options.config_path = path;
    options.log = [this](const LogRecord& r) { agent_log_.push_back(r); };
    absl::StatusOr<std::unique_ptr<Agent>> agent =
        Agent::Create(store_.get(), std::move(options));
    EXPECT_TRUE(agent.ok()) << agent.status();
    return agent.ok() ? *std::move(agent) : nullptr;
  }

  std::string DefinitionOf(const std::string& config) {
    absl::StatusOr<AgentConfig> parsed =
        ParseAgentConfig(config, dir_.Sub("agent.textproto"));
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    return parsed.ok() ? parsed->workflows.at(0).definition_id : "";
  }
};

TEST_F(AgentWorkflowVersionsTest,
       AWorkflowWhoseTypeWasDroppedFinishesUnderItsDefinition) {
  const std::string v1 = Unreachable(WorkflowConfig(), "/api/fraud/check");
  const std::string id =
      CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  RunUntilHeld(v1, 1);  // reserved; fraud unreachable

  // The next configuration has no workflow at all, and its "fraud" is
  // reachable again: the workflow takes its definition from the store and
  // its destinations from the configuration where it still has them.
  DrainOnceWith(WithoutWorkflows(WorkflowConfig()));
  ASSERT_GE(Calls().size(), 2u) << "fraud taken from the stored copy";
  EXPECT_EQ(Calls()[1].path, "/api/fraud/check");
  RunToEnd(WithoutWorkflows(WorkflowConfig()));
  EXPECT_THAT(Paths(), ElementsAreArray(kHappyPath));
  const storage::WorkflowState state = State(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPLETED);
  EXPECT_EQ(state.definition(), DefinitionOf(v1));
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 0u);
  EXPECT_EQ(stats->dead_letters, 0u);

  // A new order of the type, committed now, is a plain event.
  CommitOrder(R"({"riskScore": 10})", "sale-2");
  RunToEnd(WithoutWorkflows(WorkflowConfig()));
  EXPECT_EQ(Paths().back(), "POST /api/catchall");
}

TEST_F(AgentWorkflowVersionsTest, ARenamedTargetOfATakenStepIsStillReverted) {
  // Billing declines (422) once it is reachable: compensation follows.
  const std::string v1 = Unreachable(WorkflowConfig(), "/api/billing");
  const std::string id = CommitOrder(
      R"({"riskScore": 10, "shippingType": "domestic", "simulate": "decline"})");
  RunUntilHeld(v1, 3);  // reserved, checked, shipped; billing unreachable

  // "inventory" is "stock" now, in the destinations and in the workflow.
  const std::string v2 = absl::StrReplaceAll(
      WorkflowConfig(),
      {{"name: \"inventory\"", "name: \"stock\""},
       {"destination: \"inventory\"", "destination: \"stock\""}});
  ASSERT_NE(DefinitionOf(v2), DefinitionOf(v1));
  RunToEnd(v2);
  EXPECT_THAT(Paths(), ElementsAreArray(Concat(kHappyPath, kReverts)));
  const storage::WorkflowState state = State(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
  EXPECT_EQ(state.steps(0).status(), storage::STEP_STATUS_REVERTED)
      << "the reservation must be released, not left as 'no revert'";
  EXPECT_EQ(state.definition(), DefinitionOf(v1));
}

TEST_F(AgentWorkflowVersionsTest,
       ACancelAfterTheTypeWasDroppedRevertsTheSteps) {
  const std::string id =
      CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  RunToEnd(WorkflowConfig());
  ASSERT_EQ(State(id).phase(), storage::WORKFLOW_PHASE_COMPLETED);

  CancelOrder(id);  // queued again, to be compensated
  RunToEnd(WithoutWorkflows(WorkflowConfig()));
  EXPECT_THAT(Paths(), ElementsAreArray(Concat(kHappyPath, kReverts)));
  EXPECT_EQ(State(id).phase(), storage::WORKFLOW_PHASE_COMPENSATED);
}

// A destination the configuration dropped comes from the stored copy, with
// the retry schedule the definition was stored with: the workflow's step
// there is given up after the stored max_attempts (2), not today's (6),
// and the workflow is compensated.
TEST_F(AgentWorkflowVersionsTest,
       ADroppedDestinationRetriesUnderTheScheduleOfItsDefinition) {
  const std::string v1 =
      absl::StrReplaceAll(Unreachable(WorkflowConfig(), "/api/fraud/check"),
                          {{"max_attempts: 3", "max_attempts: 2"}});
  const std::string id = CommitOrder(
      R"({"riskScore": 10, "shippingType": "domestic", "simulate": "ship-down"})");
  RunUntilHeld(v1, 1);  // reserved; fraud unreachable

  // "domestic" is gone (its workflow target is "domestic2" now), and every
  // destination of the new configuration retries six times.
  const std::string v2 = absl::StrReplaceAll(
      WorkflowConfig(),
      {{"name: \"domestic\"", "name: \"domestic2\""},
       {"destination: \"domestic\"", "destination: \"domestic2\""},
       {"max_attempts: 3", "max_attempts: 6"}});
  RunToEnd(v2);
  EXPECT_THAT(Paths(),
              ElementsAreArray(std::vector<std::string>{
                  "POST /api/inventory/reserve", "POST /api/fraud/check",
                  "POST /api/domestic-shipping", "POST /api/domestic-shipping",
                  "DELETE /api/inventory/RES-1/release"}));
  const storage::WorkflowState state = State(id);
  EXPECT_EQ(state.phase(), storage::WORKFLOW_PHASE_COMPENSATED);
  EXPECT_EQ(state.definition(), DefinitionOf(v1));
}

// A definition keeps its destinations' files as absolute paths: a
// configuration file naming its secrets file relative to its own directory
// still runs a workflow whose destination it later dropped, from the
// stored copy, whatever the agent's working directory.
TEST_F(AgentWorkflowVersionsTest,
       AStoredCopyFindsTheFilesItsConfigurationNamedRelatively) {
  const std::string relative = secret_path_.substr(dir_.path().size() + 1);
  const std::string v1 =
      absl::StrReplaceAll(Unreachable(WorkflowConfig(), "/api/fraud/check"),
                          {{absl::StrCat("\"", secret_path_, "\""),
                            absl::StrCat("\"", relative, "\"")}});
  ASSERT_EQ(v1.find(secret_path_), std::string::npos);
  const std::string id =
      CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  RunUntilHeld(MakeAgentFromFile(v1), 1);  // reserved; fraud unreachable

  const std::string v2 = absl::StrReplaceAll(
      WorkflowConfig(),
      {{"name: \"domestic\"", "name: \"domestic2\""},
       {"destination: \"domestic\"", "destination: \"domestic2\""}});
  DrainOnceWith(v2);
  ASSERT_EQ(Logged(LogEvent::kWorkflowHeld), 0)
      << "the stored copy names a file the agent cannot find";
  RunToEnd(v2);
  EXPECT_THAT(Paths(), ElementsAreArray(kHappyPath));
  EXPECT_EQ(State(id).phase(), storage::WORKFLOW_PHASE_COMPLETED);
}

TEST_F(AgentWorkflowVersionsTest, EqualDefinitionsAreKeptOnce) {
  CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})", "sale-2");
  RunToEnd(WorkflowConfig());
  // The same text in a new run (a restart) is the same definition.
  CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})", "sale-3");
  RunToEnd(WorkflowConfig());
  auto definitions = store_->ListWorkflowDefinitions();
  ASSERT_OUTBOX_OK(definitions);
  ASSERT_EQ(definitions->size(), 1u);
  EXPECT_EQ(definitions->front().first, DefinitionOf(WorkflowConfig()));
  // Paths, never secrets: the secrets file is named, its secret is not.
  EXPECT_THAT(definitions->front().second, HasSubstr(secret_path_));
  EXPECT_THAT(definitions->front().second, Not(HasSubstr(kSecret)));
  // A changed workflow is a second definition.
  CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})", "sale-4");
  RunToEnd(
      absl::StrReplaceAll(WorkflowConfig(), {{"event_type: \"order.created\"",
                                              "event_type: \"order.created\" "
                                              "payloads: \"whole\""}}));
  definitions = store_->ListWorkflowDefinitions();
  ASSERT_OUTBOX_OK(definitions);
  EXPECT_EQ(definitions->size(), 2u);
}

// A stored definition whose destination the configuration dropped, and
// whose file is gone too, cannot run: its type is held, nothing is sent or
// dead-lettered, until a new agent finds the file back.
TEST_F(AgentWorkflowVersionsTest,
       ADefinitionThatCannotLoadHoldsItsTypeUntilReload) {
  const std::string inventory_secret = SecretFile(kSecret);
  const std::string v1 = absl::StrReplaceAll(
      Unreachable(WorkflowConfig(), "/api/billing"),
      {{absl::StrCat("/api/inventory/reserve\" secrets_file: \"", secret_path_),
        absl::StrCat("/api/inventory/reserve\" secrets_file: \"",
                     inventory_secret)}});
  ASSERT_NE(v1.find(inventory_secret), std::string::npos);
  const std::string id = CommitOrder(
      R"({"riskScore": 10, "shippingType": "domestic", "simulate": "decline"})");
  RunUntilHeld(v1, 3);

  // The next configuration renames inventory (its revert then needs the
  // stored copy), and that copy's secrets file is gone.
  const std::string v2 = absl::StrReplaceAll(
      WorkflowConfig(),
      {{"name: \"inventory\"", "name: \"stock\""},
       {"destination: \"inventory\"", "destination: \"stock\""}});
  const std::string saved = inventory_secret + ".saved";
  ASSERT_EQ(std::rename(inventory_secret.c_str(), saved.c_str()), 0);
  EXPECT_EQ(DrainOnceWith(v2), 1u);
  EXPECT_EQ(Calls().size(), 3u) << "nothing sent while held";
  int held = 0;
  for (const LogRecord& r : agent_log_) {
    if (r.event == LogEvent::kWorkflowHeld) {
      ++held;
      EXPECT_EQ(r.event_id, id);
      EXPECT_THAT(r.message, HasSubstr("secrets_file"));
    }
  }
  EXPECT_EQ(held, 1);
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->dead_letters, 0u);

  ASSERT_EQ(std::rename(saved.c_str(), inventory_secret.c_str()), 0);
  RunToEnd(v2);
  EXPECT_THAT(Paths(), ElementsAreArray(Concat(kHappyPath, kReverts)));
  EXPECT_EQ(State(id).phase(), storage::WORKFLOW_PHASE_COMPENSATED);
}

// The type of a stored definition that the new configuration neither runs
// as a workflow nor routes: its new events are plain (never started) and
// unrouted, so they are held, said once, and their lane stays closed. Open,
// it would hand out the held events every round, more of them than a round
// takes (max_in_flight, here 2): the agent would never go idle, and the
// refund committed after them would never be sent. Drain runs on a thread;
// the 60 s bound only ends a hang.
TEST_F(AgentWorkflowVersionsTest, AnUnroutedTypeOfAStoredDefinitionIsHeld) {
  CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  RunToEnd(WorkflowConfig());
  const size_t calls = Calls().size();
  const std::string config = absl::StrReplaceAll(
      WorkflowConfig(), {{"agent {", "agent { max_in_flight: 2"}});
  const std::string unrouted = absl::StrCat(
      config.substr(0, config.find("workflows {")),
      Destination("catchall", "/api/catchall"),
      "routes { event_type: \"refund.created\" destination: \"catchall\" }\n");
  for (int i = 2; i < 8; ++i) {
    CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})",
                absl::StrCat("sale-", i));
  }
  CommitPlainEvent("refund.created");
  std::unique_ptr<Agent> agent = MakeAgent(unrouted);
  ASSERT_NE(agent, nullptr);
  std::atomic<bool> idle{false};
  absl::StatusOr<uint64_t> pending = 0;
  std::thread drain([&] {
    pending = agent->Drain();
    idle = true;
  });
  for (int i = 0; i < 600 && !idle; ++i) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  const bool went_idle = idle;
  if (!went_idle) agent->Stop();
  drain.join();
  EXPECT_TRUE(went_idle) << "the held type's lane kept handing out its events";
  ASSERT_OUTBOX_OK(pending);
  EXPECT_EQ(*pending, 6u);
  ASSERT_EQ(Calls().size(), calls + 1) << "the refund, and only it";
  EXPECT_EQ(Calls().back().path, "/api/catchall");
  EXPECT_EQ(Logged(LogEvent::kNoRoute), 1);
  absl::StatusOr<Stats> stats = store_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->dead_letters, 0u);
}

// `agent { workflow_storage }` chooses the form of the workflows that
// start under it; one already stored keeps its form when it changes.
TEST_F(AgentWorkflowVersionsTest, WorkflowStorageChoosesTheFormOfNewWorkflows) {
  const std::string states = WorkflowConfig();  // the default
  const std::string rows = absl::StrReplaceAll(
      WorkflowConfig(), {{"agent {", "agent { workflow_storage: \"rows\""}});
  const std::string low = R"({"riskScore": 10, "shippingType": "domestic"})";
  const std::string a = CommitOrder(low, "sale-1");
  RunUntilHeld(Unreachable(states, "/api/fraud/check"), 1);  // a reserved
  const std::string b = CommitOrder(low, "sale-2");
  RunUntilHeld(Unreachable(rows, "/api/fraud/check"), 2);  // b reserved
  RunToEnd(states);  // both finish with the setting back at "states"
  EXPECT_EQ(State(a).phase(), storage::WORKFLOW_PHASE_COMPLETED);
  EXPECT_EQ(State(b).phase(), storage::WORKFLOW_PHASE_COMPLETED);
  store_.reset();
  testing::RawEdit(dir_.Sub("db"), [&](rocksdb::DB* db,
                                       const testing::RawFamilies& families) {
    rocksdb::ColumnFamilyHandle* workflows = families.at("outbox.workflows");
    auto has = [&](const std::string& key) {
      std::string value;
      return db->Get(rocksdb::ReadOptions(), workflows, key, &value).ok();
    };
    EXPECT_TRUE(has("s" + a)) << "started as a state";
    EXPECT_FALSE(has("w" + a));
    EXPECT_TRUE(has("w" + b)) << "started as rows, and kept them";
    EXPECT_FALSE(has("s" + b));
  });
}

// A half-way workflow written by a build that did not keep definitions:
// the first agent of this build finds the configuration without its type.
// Sending its event as a plain one (to the "*" route) would skip its
// remaining steps: it is held until the workflow is configured again.
TEST_F(AgentWorkflowVersionsTest,
       AStateFromBeforeDefinitionsIsHeldNotSentPlain) {
  const std::string id =
      CommitOrder(R"({"riskScore": 10, "shippingType": "domestic"})");
  // Builds before definitions stored states whole ("s"), whatever this
  // release's writer does (agent/config/workflow_rows.h).
  workflow::TEST_SetWriteRows(false);
  RunUntilHeld(Unreachable(WorkflowConfig(), "/api/fraud/check"), 1);
  workflow::TEST_SetWriteRows(std::nullopt);
  store_.reset();
  testing::RawEdit(dir_.Sub("db"), [&](rocksdb::DB* db,
                                       const testing::RawFamilies& families) {
    rocksdb::ColumnFamilyHandle* workflows = families.at("outbox.workflows");
    std::string value;
    ASSERT_TRUE(
        db->Get(rocksdb::ReadOptions(), workflows, "s" + id, &value).ok());
    storage::WorkflowState state;
    ASSERT_TRUE(state.ParseFromString(value));
    ASSERT_FALSE(state.definition().empty());
    state.clear_definition();
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), workflows, "s" + id,
                        state.SerializeAsString())
                    .ok());
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), workflows));
    for (it->Seek("d"); it->Valid() && it->key().starts_with("d"); it->Next()) {
      ASSERT_TRUE(
          db->Delete(rocksdb::WriteOptions(), workflows, it->key()).ok());
    }
  });
  ReopenStore();

  EXPECT_EQ(DrainOnceWith(WithoutWorkflows(WorkflowConfig())), 1u);
  EXPECT_EQ(Calls().size(), 1u) << "sent as a plain event";
  EXPECT_EQ(Logged(LogEvent::kWorkflowHeld), 1);
  // Configured again, it finishes where it was.
  RunToEnd(WorkflowConfig());
  EXPECT_THAT(Paths(), ElementsAreArray(kHappyPath));
  EXPECT_EQ(State(id).phase(), storage::WORKFLOW_PHASE_COMPLETED);
}

}  // namespace
}  // namespace outbox
