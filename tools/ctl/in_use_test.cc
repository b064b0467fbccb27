// Copyright (c) edge-outbox authors.
//
// With the store held by a writer (here this test process, in production a
// running outbox-agent), outboxctl reads beside it and refuses to write with
// a message that says what to do.

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/ctl_fixture.h"
#include "tests/testing/events.h"
#include "tests/testing/status.h"

namespace outbox::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class CtlInUseTest : public CtlTest {
 protected:
  void SetUp() override {
    CtlTest::SetUp();
    writer_ = OpenStore();
    ASSERT_NE(writer_, nullptr);
    // Committed through the open writer: in its log, not yet in a table file,
    // which is what a reader next to a live agent usually faces.
    Txn txn;
    id_ = txn.Emit(testing::MakeEvent("sale.created", "till-1", "{\"a\":1}"));
    txn.Put("sales", "s-1", "live");
    ASSERT_OUTBOX_OK(writer_->Commit(txn));
  }

  void TearDown() override {
    if (writer_ != nullptr) {
      EXPECT_OUTBOX_OK(writer_->Close());
    }
  }

  void ExpectInUse(const std::vector<std::string>& args) {
    sink::ExitResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_THAT(r.err, StartsWith("outboxctl: UNAVAILABLE: the store at '"));
    EXPECT_THAT(r.err, HasSubstr("is in use by another process (e.g. a running "
                                 "outbox-agent); stop it first, then retry"));
  }

  std::unique_ptr<Store> writer_;
  std::string id_;
};

TEST_F(CtlInUseTest, StatsListShowAndGetReadBesideTheWriter) {
  sink::ExitResult stats = Ctl({"stats", "--json"});
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(Field(Json(stats), "pending_events"), "1");

  sink::ExitResult list = Ctl({"list", "pending"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, StartsWith(id_));

  sink::ExitResult show = Ctl({"show", id_});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("{\"a\":1}"));

  sink::ExitResult get = Ctl({"get", "--table", "sales", "--key", "s-1"});
  EXPECT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, "live");
}

TEST_F(CtlInUseTest, EmitFailsWithTheInUseMessage) {
  ExpectInUse({"emit", "--table", "sales", "--key", "k", "--value", "v",
               "--type", "t", "--payload", "{}"});
  absl::StatusOr<Stats> stats = writer_->GetStats();
  ASSERT_OUTBOX_OK(stats);
  EXPECT_EQ(stats->pending_events, 1u);
}

TEST_F(CtlInUseTest, ReplayAndPurgeFailWithTheInUseMessage) {
  ExpectInUse({"replay", "--all"});
  ExpectInUse({"purge-dead", "--older-than", "1h"});
}

TEST_F(CtlInUseTest, RetryStepAndCancelFailWithTheInUseMessage) {
  ExpectInUse({"retry-step", id_, "reserve"});
  ExpectInUse({"cancel", id_});
  absl::StatusOr<WorkflowRecord> workflow = writer_->GetWorkflow(id_);
  EXPECT_STATUS_CODE(workflow, absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace outbox::ctl
