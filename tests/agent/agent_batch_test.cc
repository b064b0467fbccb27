// Copyright (c) edge-outbox authors.
//
// Batched HTTP (Destination::batch) against the real outbox-sink: a key's
// events go in batches, in order, each settled by the one answer; unkeyed
// events share batches; a batch in flight is not sent again by the rounds
// before its answer; failures retry and rejections dead-letter every event
// of the batch; max_wait holds a batch that is not full; a workflow
// event or one with deliver_after ends a key's run. Waits are bounded only
// to catch hangs; nothing asserts on how fast anything was.

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/forwarding_store.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tools/json_fields.h"

namespace outbox {
namespace {

using testing::PayloadN;

class AgentBatchTest : public testing::AgentSinkTest {
 protected:
  // The fixture's configuration, with `batch` for the destination.
  std::string BatchConfig(const std::string& batch,
                          const std::string& path = "/") const {
    return Config(path, "", absl::StrCat("batch { ", batch, " }"));
  }

  // The sink's lines: each batch's id, per line.
  std::vector<std::string> BatchIds() const {
    std::vector<std::string> out;
    for (const std::string& line : sink::ReadLines(log_path_)) {
      out.push_back(JsonString(line, "batch_id"));
    }
    return out;
  }

  // The sink logged `ids` in order, each answered 200 with a valid
  // signature and its payload ({"n": i}).
  void ExpectLoggedInOrder(const std::vector<std::string>& ids) {
    const std::vector<testing::SinkLine> log = SinkLog();
    ASSERT_EQ(log.size(), ids.size());
    for (size_t i = 0; i < log.size(); ++i) {
      EXPECT_EQ(log[i].id, ids[i]);
      EXPECT_EQ(log[i].status, 200);
      EXPECT_TRUE(log[i].signature_valid);
      EXPECT_EQ(PayloadN(log[i].body), static_cast<int>(i));
    }
  }

  // batch.compression `coding`: the real outbox-sink decodes each body, and
  // the signature, over the uncompressed body, holds.
  void ExpectCompressedBatchesArriveWhole(const std::string& coding) {
    ASSERT_NO_FATAL_FAILURE(StartSink());
    const std::vector<std::string> ids = CommitEvents(120, /*keys=*/1);
    auto agent = MakeAgent(BatchConfig(
        absl::StrCat("max_events: 50 compression: \"", coding, "\"")));
    ASSERT_NE(agent, nullptr);
    EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
    ExpectLoggedInOrder(ids);
    EXPECT_EQ(agent->stats().requests, 3u);
  }
};

TEST_F(AgentBatchTest, GzipBatchesArriveWhole) {
  ExpectCompressedBatchesArriveWhole("gzip");
}

TEST_F(AgentBatchTest, ZstdBatchesArriveWhole) {
  ExpectCompressedBatchesArriveWhole("zstd");
}

TEST_F(AgentBatchTest, OneKeysEventsGoInFullBatchesInCommitOrder) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(250, /*keys=*/1);
  auto agent = MakeAgent(BatchConfig("max_events: 100"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  ExpectLoggedInOrder(ids);
  const std::vector<std::string> batches = BatchIds();
  EXPECT_EQ(std::set<std::string>(batches.begin(), batches.end()).size(), 3u);
  EXPECT_EQ(agent->stats().requests, 3u);
  EXPECT_EQ(agent->stats().delivered, 250u);
}

TEST_F(AgentBatchTest, UnkeyedEventsShareBatchesWithinMaxEvents) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::vector<std::string> ids = CommitEvents(40);
  auto agent = MakeAgent(BatchConfig("max_events: 16"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  std::map<std::string, int> per_batch;
  for (const std::string& b : BatchIds()) ++per_batch[b];
  int largest = 0;
  for (const auto& [id, n] : per_batch) largest = std::max(largest, n);
  // Full batches although only max_in_flight (8) requests may be out.
  EXPECT_EQ(largest, 16);
  std::set<std::string> delivered;
  for (const testing::SinkLine& l : SinkLog()) delivered.insert(l.id);
  EXPECT_EQ(delivered, std::set<std::string>(ids.begin(), ids.end()));
}

// Every event of a batch in flight is in flight: a round while its answer
// is awaited (here the sink answers after a second) takes none of them
// again, so none goes out twice and the batch's one request is all there
// is.
TEST_F(AgentBatchTest, ARoundWhileABatchIsInFlightResendsNoneOfItsEvents) {
  ASSERT_NO_FATAL_FAILURE(StartSink({"--delay-ms", "1000"}));
  const std::vector<std::string> ids = CommitEvents(3);
  auto agent = MakeAgent(BatchConfig("max_events: 10"));
  ASSERT_NE(agent, nullptr);
  ASSERT_OUTBOX_OK(agent->RunOnce());  // sends the batch of three
  ASSERT_EQ(agent->stats().requests, 1u);
  ASSERT_OUTBOX_OK(agent->RunOnce());  // its answer is still a second away
  EXPECT_EQ(agent->stats().requests, 1u) << "a second request for them";
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  std::multiset<std::string> received;
  for (const testing::SinkLine& l : SinkLog()) received.insert(l.id);
  EXPECT_EQ(received, std::multiset<std::string>(ids.begin(), ids.end()));
}

TEST_F(AgentBatchTest, ABodyLimitSplitsBatchesAndABigEventGoesAlone) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  CommitEvents(30, /*keys=*/1);
  auto agent = MakeAgent(BatchConfig("max_events: 100 max_bytes: 1024"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  std::map<std::string, int> per_batch;
  for (const std::string& b : BatchIds()) ++per_batch[b];
  EXPECT_GT(per_batch.size(), 1u);
  EXPECT_EQ(SinkLog().size(), 30u);
}

TEST_F(AgentBatchTest, FailedBatchesAreRetriedAndKeyOrderHolds) {
  ASSERT_NO_FATAL_FAILURE(
      StartSink({"--fail-rate", "0.3", "--drop-rate", "0.2", "--seed", "7"}));
  const std::vector<std::string> ids = CommitEvents(300, /*keys=*/3);
  auto agent = MakeAgent(BatchConfig("max_events: 20"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_GT(agent->stats().retries_scheduled, 0u);
  // Every event answered 2xx, each key's first 2xx in commit order, and
  // every copy of an id with the same body.
  std::map<std::string, std::string> body;
  std::map<std::string, int> last;
  for (const testing::SinkLine& l : SinkLog()) {
    auto [it, first] = body.emplace(l.id, l.body);
    EXPECT_EQ(it->second, l.body);
    if (l.status != 200 || l.dropped || l.duplicate) continue;
    const int n = PayloadN(l.body);
    const std::string key = absl::StrCat("k", n % 3);
    EXPECT_GT(n, last.count(key) ? last[key] : -1) << key;
    last[key] = n;
  }
  std::set<std::string> ok;
  for (const testing::SinkLine& l : SinkLog()) {
    if (l.status == 200 && !l.dropped) ok.insert(l.id);
  }
  EXPECT_EQ(ok, std::set<std::string>(ids.begin(), ids.end()));
}

TEST_F(AgentBatchTest, ARejectedBatchDeadLettersEachOfItsEvents) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  CommitEvents(5, /*keys=*/1);
  auto agent = MakeAgent(BatchConfig("max_events: 10", "/status/400"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(agent->stats().requests, 1u);
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  ASSERT_EQ(dead->size(), 5u);
  for (const DeadLetter& d : *dead) {
    EXPECT_NE(d.reason.find("HTTP 400"), std::string::npos) << d.reason;
  }
}

TEST_F(AgentBatchTest, MaxWaitHoldsABatchThatIsNotFull) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  CommitEvents(4, /*keys=*/1);
  auto agent = MakeAgent(BatchConfig("max_events: 5 max_wait: \"1h\""));
  ASSERT_NE(agent, nullptr);
  auto held = agent->Drain();
  ASSERT_OUTBOX_OK(held);
  EXPECT_EQ(*held, 4u);
  EXPECT_TRUE(SinkLog().empty());
  CommitEvents(1, /*keys=*/1);  // now full: it goes
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  EXPECT_EQ(SinkLog().size(), 5u);
  EXPECT_EQ(agent->stats().requests, 1u);
}

// ... and once its first event is max_wait old, the partial batch leaves,
// all four in one request. The 20 s bound (40 times max_wait) only ends a
// hang.
TEST_F(AgentBatchTest, APartialBatchLeavesOnceMaxWaitHasPassed) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  CommitEvents(4, /*keys=*/1);
  auto agent = MakeAgent(BatchConfig("max_events: 5 max_wait: \"500ms\""));
  ASSERT_NE(agent, nullptr);
  const absl::Time guard = absl::Now() + absl::Seconds(20);
  while (agent->stats().delivered < 4 && absl::Now() < guard) {
    ASSERT_OUTBOX_OK(agent->RunOnce(absl::Now() + absl::Milliseconds(100)));
  }
  EXPECT_EQ(agent->stats().delivered, 4u) << "the partial batch never left";
  EXPECT_EQ(SinkLog().size(), 4u);
  EXPECT_EQ(agent->stats().requests, 1u);
}

// A workflow event behind a batched event of its key is no batch line: the
// batch ends before it, its step runs (a request of its own, at the step's
// destination), and the key's next event waits for the workflow.
TEST_F(AgentBatchTest, AWorkflowEventBehindABatchedOneRunsItsSteps) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::string before = CommitEvents(1, /*keys=*/1).at(0);
  const std::string order = CommitEvents(1, /*keys=*/1, "order.created").at(0);
  const std::string after = CommitEvents(1, /*keys=*/1).at(0);
  const std::string workflow = absl::StrCat(
      "destinations { name: \"inventory\" url: \"http://127.0.0.1:", port_,
      "/api/inventory/reserve\" secrets_file: \"", secret_path_, "\" }\n",
      "workflows { event_type: \"order.created\"",
      " steps { name: \"reserve\" destination: \"inventory\" } }\n");
  auto agent =
      MakeAgent(Config("/batch", workflow, "batch { max_events: 10 }"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  const std::vector<testing::SinkLine> log = SinkLog();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0].path, "/batch");
  EXPECT_EQ(log[0].id, before);
  EXPECT_EQ(log[1].path, "/api/inventory/reserve");
  EXPECT_NE(log[1].id, order);  // a step's own id (expr/step_id.h)
  EXPECT_EQ(PayloadN(log[1].body), 0);
  EXPECT_EQ(log[1].status, 200);
  EXPECT_EQ(log[2].path, "/batch");
  EXPECT_EQ(log[2].id, after);
  const std::vector<std::string> batches = BatchIds();
  EXPECT_NE(batches[0], batches[2]);
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  EXPECT_TRUE(dead->empty());
}

// Fails the first workflow read with a full disk, as a store whose disk
// filled would.
class FullOnceStore final : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<WorkflowRecord> GetWorkflow(absl::string_view id) override {
    if (!failed_) {
      failed_ = true;
      return absl::ResourceExhaustedError("no space left on device (test)");
    }
    return base_->GetWorkflow(id);
  }

 private:
  bool failed_ = false;
};

// A round that stops on a full disk (here reading the workflow behind a
// batched event) pauses deliveries and keeps nothing for the next round:
// the batched event it had taken is read again from the store after the
// pause and goes once, in a batch of its own lines.
TEST_F(AgentBatchTest, ARoundStoppedByAFullDiskSendsItsBatchedEventOnce) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  const std::string plain = CommitEvents(1).at(0);
  CommitEvents(1, /*keys=*/0, "order.created");
  const std::string workflow = absl::StrCat(
      "destinations { name: \"inventory\" url: \"http://127.0.0.1:", port_,
      "/api/inventory/reserve\" secrets_file: \"", secret_path_, "\" }\n",
      "workflows { event_type: \"order.created\"",
      " steps { name: \"reserve\" destination: \"inventory\" } }\n");
  FullOnceStore full(store_.get());
  AgentOptions options;
  options.config_text = Config("/batch", workflow, "batch { max_events: 10 }");
  absl::StatusOr<std::unique_ptr<Agent>> agent =
      Agent::Create(&full, std::move(options));
  ASSERT_OUTBOX_OK(agent);
  EXPECT_EQ(DrainUntilEmpty(agent->get()), 0u);
  const std::vector<testing::SinkLine> log = SinkLog();
  const auto sent =
      std::count_if(log.begin(), log.end(),
                    [&](const testing::SinkLine& l) { return l.id == plain; });
  EXPECT_EQ(sent, 1);
  auto dead = store_->ListDeadLetters(10);
  ASSERT_OUTBOX_OK(dead);
  EXPECT_TRUE(dead->empty());
}

// Batched events with deliver_after (here behind a due event of their key,
// where a batch takes its followers) are not sent before their time, and
// then go together in a batch. The sink stamps each request as it arrives,
// on the clock deliver_after is read on.
TEST_F(AgentBatchTest, EventsWithDeliverAfterGoInABatchAtTheirTimeNotBefore) {
  ASSERT_NO_FATAL_FAILURE(StartSink());
  std::vector<std::string> ids = CommitEvents(1, /*keys=*/1);
  const absl::Time later = absl::Now() + absl::Seconds(1);
  for (int i = 1; i <= 3; ++i) {
    Txn txn;
    Event e;
    e.type = "sale";
    e.ordering_key = "k0";
    e.payload = absl::StrCat(R"({"key":"k0","n":)", i, "}");
    e.deliver_after = later;
    ids.push_back(txn.Emit(e));
    ASSERT_OUTBOX_OK(store_->Commit(txn).status());
  }
  auto agent = MakeAgent(BatchConfig("max_events: 10"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(DrainUntilEmpty(agent.get()), 0u);
  const std::vector<testing::SinkLine> log = SinkLog();
  ASSERT_EQ(log.size(), 4u);
  const std::vector<std::string> batches = BatchIds();
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(log[i].id, ids[i]);
    EXPECT_EQ(log[i].status, 200);
    if (i == 0) continue;
    EXPECT_GE(log[i].ts_ms, absl::ToUnixMillis(later)) << "event " << i;
    EXPECT_EQ(batches[i], batches[1]) << "event " << i;
  }
  EXPECT_NE(batches[0], batches[1]);
  EXPECT_EQ(agent->stats().requests, 2u);
}

}  // namespace
}  // namespace outbox
