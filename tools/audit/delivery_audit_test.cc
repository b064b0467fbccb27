// Copyright (c) edge-outbox authors.
//
// The kill soak's audit must catch each broken invariant it claims to check;
// these tests break one at a time on a hand-made store and sink log, and
// each asserts that exactly the check meant for it fired, by name.

#include "tools/audit/delivery_audit.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "tools/audit/sink_log_tail.h"

namespace outbox::audit {
namespace {

class DeliveryAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Options options;
    options.tables = {"sales"};
    auto store = Store::Open(options, dir_.Sub("db"));
    ASSERT_OUTBOX_OK(store);
    store_ = std::move(*store);
    input_.till = "till-1";
  }

  // Commits sale n as outbox-pos-sim does (the counter then says `next`,
  // n + 1 unless given); returns its event id.
  std::string CommitSale(int64_t n, int64_t next = -1) {
    const std::string sale = absl::StrCat("till-1-", n);
    Txn txn;
    Event event;
    event.type = "sale.created";
    event.ordering_key = "till-1";
    event.payload = Body(n);
    const std::string id = txn.Emit(event);
    txn.Put("sales", sale,
            absl::StrCat(R"({"n":)", n, R"(,"event_id":")", id, R"("})"));
    txn.Put("sales", "!next-sale", absl::StrCat(next < 0 ? n + 1 : next));
    EXPECT_OUTBOX_OK(store_->Commit(txn));
    input_.sales = next < 0 ? n + 1 : next;
    return id;
  }

  static std::string Body(int64_t n) {
    return absl::StrCat(R"({"sale":"till-1-)", n, R"(","n":)", n,
                        R"(,"total_cents":)", 100 + n, "}");
  }

  void MarkAllDelivered() {
    for (;;) {
      auto due = store_->NextDue(100);
      ASSERT_OUTBOX_OK(due);
      if (due->events.empty()) return;
      for (const PendingEvent& e : due->events) {
        ASSERT_OUTBOX_OK(store_->MarkDelivered(e));
      }
    }
  }

  // Dead-letters the pending events in commit order, the i-th with
  // reasons[i].
  void GiveUpEachPending(const std::vector<std::string>& reasons) {
    for (const std::string& reason : reasons) {
      auto due = store_->NextDue(1);
      ASSERT_OUTBOX_OK(due);
      ASSERT_EQ(due->events.size(), 1u);
      ASSERT_OUTBOX_OK(store_->MoveToDeadLetters(due->events[0], reason));
    }
  }

  // Appends a request as the sink would log it; `batch` holds the line's
  // "batch_id" and "batch_size" members, if any.
  void Sent(int64_t n, const std::string& id, int status,
            const std::string& body = "", bool signature_valid = true,
            const std::string& batch = "") {
    const std::string payload = body.empty() ? Body(n) : body;
    std::string escaped;
    for (char c : payload) {
      if (c == '"') escaped += '\\';
      escaped += c;
    }
    const int64_t seq = static_cast<int64_t>(input_.requests.size()) + 1;
    input_.requests.push_back(ParseSinkLine(absl::StrCat(
        R"({"seq":)", seq, R"(,"id":")", id,
        R"(","webhook_timestamp":1,"ts_ms":1,"method":"POST","path":"/",)",
        R"("signature_valid":)", signature_valid ? "true" : "false",
        R"(,"signature_error":null,"duplicate":false,)", R"("action":")",
        status == 0 ? "drop" : "answer", R"(","status":)", status,
        R"(,"idempotency_key":null,"content_type":null,)", batch, R"("body":")",
        escaped, R"("})")));
  }

  // Sales `ns` in one batch request (as the sink logs it: a line each, in
  // the batch's order) answered `status`.
  void SentBatch(const std::vector<int64_t>& ns, int status,
                 const std::string& batch_id) {
    const std::string batch = absl::StrCat(
        R"("batch_id":")", batch_id, R"(","batch_size":)", ns.size(), ",");
    for (int64_t n : ns) Sent(n, ids_[n], status, "", true, batch);
  }

  // Three sales, all acknowledged and delivered; sale 1's first answer lost.
  void CleanSoak() {
    for (int64_t n = 0; n < 3; ++n) ids_.push_back(CommitSale(n));
    for (int64_t n = 0; n < 3; ++n)
      input_.acknowledged.push_back({n, ids_[n], 1});
    MarkAllDelivered();
    Sent(0, ids_[0], 200);
    Sent(1, ids_[1], 0);
    Sent(1, ids_[1], 200);
    Sent(2, ids_[2], 503);
    Sent(2, ids_[2], 200);
  }

  // The names of the checks that fired.
  std::vector<std::string> Fired() {
    const AuditReport report = AuditDeliveries(input_, store_.get());
    std::cout << absl::StrJoin(report.violations, "\n") << "\n";
    std::vector<std::string> names;
    int64_t total = 0;
    for (const auto& [name, count] : report.fired) {
      names.push_back(name);
      total += count;
    }
    EXPECT_EQ(total, report.violation_count);
    return names;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  AuditInput input_;
  std::vector<std::string> ids_;
};

using Names = std::vector<std::string>;

TEST_F(DeliveryAuditTest, ResendsOfOneIdInOrderPass) {
  CleanSoak();
  const AuditReport report = AuditDeliveries(input_, store_.get());
  EXPECT_EQ(report.violation_count, 0)
      << absl::StrJoin(report.violations, "\n");
  EXPECT_EQ(report.requests, 5);
  EXPECT_EQ(report.deliveries, 3);
  EXPECT_EQ(report.resends, 2);
  EXPECT_EQ(report.drops, 1);
  EXPECT_EQ(report.failures, 1);
}

TEST_F(DeliveryAuditTest, AcknowledgedSaleNeverAnswered2xxIsFlagged) {
  CleanSoak();
  input_.requests.pop_back();  // sale 2 only got its 503
  EXPECT_EQ(Fired(), Names{"acknowledged_not_delivered"});
}

TEST_F(DeliveryAuditTest, AcknowledgedIdDifferentFromTheSentOneIsFlagged) {
  CleanSoak();
  input_.acknowledged[1].event_id = "some-other-id";
  EXPECT_EQ(Fired(), Names{"acknowledged_id_not_sent"});
}

TEST_F(DeliveryAuditTest, SaleSentUnderTwoIdsIsFlagged) {
  CleanSoak();
  Sent(2, "another-id-for-sale-2", 200);
  EXPECT_EQ(Fired(), Names{"sale_with_two_ids"});
}

TEST_F(DeliveryAuditTest, OneIdWithTwoBodiesIsFlagged) {
  CleanSoak();
  Sent(2, ids_[2], 200, R"({"sale":"till-1-2","n":2,"total_cents":1})");
  EXPECT_EQ(Fired(), Names{"id_with_two_bodies"});
}

TEST_F(DeliveryAuditTest, SaleThatWasNeverCommittedIsFlagged) {
  CleanSoak();
  Sent(3, "uncommitted-id", 200);
  EXPECT_EQ(Fired(), Names{"not_committed"});
}

TEST_F(DeliveryAuditTest, SaleSentUnderAnotherIdThanItsRecordIsFlagged) {
  CleanSoak();
  CommitSale(3);  // never acknowledged: only the record names its id
  MarkAllDelivered();
  Sent(3, "another-id-for-sale-3", 200);
  EXPECT_EQ(Fired(), Names{"committed_id_differs"});
}

TEST_F(DeliveryAuditTest, SaleWithARecordBeyondTheCounterIsFlagged) {
  CleanSoak();
  const std::string id = CommitSale(3, /*next=*/3);  // the counter stayed
  MarkAllDelivered();
  Sent(3, id, 200);
  EXPECT_EQ(Fired(), Names{"beyond_counter"});
}

TEST_F(DeliveryAuditTest, CounterShortOfTheLastRunsSalesIsFlagged) {
  CleanSoak();
  input_.sales = 4;  // the last run was told to make sale 3 too
  EXPECT_EQ(Fired(), Names{"counter_wrong"});
}

TEST_F(DeliveryAuditTest, SaleSentBeforeItsPredecessorWasAnsweredIsFlagged) {
  CleanSoak();
  std::swap(input_.requests[1], input_.requests[3]);  // 2's 503 before 1's
  EXPECT_EQ(Fired(), Names{"order_broken"});
}

TEST_F(DeliveryAuditTest, BatchCarryingSalesInOrderPassesThoughItFailedFirst) {
  CleanSoak();
  input_.requests.clear();
  SentBatch({0, 1, 2}, 503, "b1");  // 1 and 2 sent before 0's 2xx, behind it
  SentBatch({0, 1, 2}, 200,
            "b1");  // the same batch again: a request of its own
  const AuditReport report = AuditDeliveries(input_, store_.get());
  EXPECT_EQ(report.violation_count, 0)
      << absl::StrJoin(report.violations, "\n");
  EXPECT_EQ(report.requests, 6);
  EXPECT_EQ(report.batch_requests, 2);
  EXPECT_EQ(report.batched_requests, 6);
}

TEST_F(DeliveryAuditTest, SaleAheadOfItsPredecessorInOneBatchIsFlagged) {
  CleanSoak();
  input_.requests.clear();
  SentBatch({1, 0}, 503, "b1");
  SentBatch({0, 1, 2}, 200, "b2");
  EXPECT_EQ(Fired(), Names{"order_broken"});
}

TEST_F(DeliveryAuditTest, SaleBehindItsPredecessorInAnotherBatchIsFlagged) {
  CleanSoak();
  input_.requests.clear();
  SentBatch({0, 1}, 503, "b1");
  SentBatch({2}, 200, "b2");  // before 1 was answered 2xx
  SentBatch({0, 1}, 200, "b1");
  EXPECT_EQ(Fired(), Names{"order_broken"});
}

TEST_F(DeliveryAuditTest, SummaryGivesTheFiguresAndTheChecksThatFired) {
  CleanSoak();
  input_.acknowledged.push_back({2, ids_[2], 2});
  const std::string summary =
      AuditSummary(AuditDeliveries(input_, store_.get()), "[soak]");
  EXPECT_EQ(summary,
            "[soak] sales committed 3, acknowledged 4, committed but never "
            "acknowledged 0\n[soak] receiver: 5 requests, 3 answered 2xx, 0 "
            "duplicates, 2 resends, 1 drops, 1 failed\n[soak] violations: 1 "
            "(acknowledged_twice 1)");
}

TEST_F(DeliveryAuditTest, SaleAcknowledgedTwiceIsFlagged) {
  CleanSoak();
  input_.acknowledged.push_back({2, ids_[2], 2});
  EXPECT_EQ(Fired(), Names{"acknowledged_twice"});
}

TEST_F(DeliveryAuditTest, AcknowledgedNumberBeyondTheSalesIsFlagged) {
  CleanSoak();
  input_.acknowledged.push_back({7, "id-of-sale-7", 2});
  EXPECT_EQ(Fired(), Names{"acknowledged_out_of_range"});
}

TEST_F(DeliveryAuditTest, CommittedSaleNeverDeliveredIsFlagged) {
  CleanSoak();
  CommitSale(3);  // committed, never acknowledged, never sent
  MarkAllDelivered();
  EXPECT_EQ(Fired(), Names{"committed_not_delivered"});
}

// An evicted or expired sale is told apart from a lost one: its own check,
// not committed_not_delivered, and its dead letter is not not_drained's.
TEST_F(DeliveryAuditTest, SaleGivenUpByItsClassIsToldFromALostOne) {
  CleanSoak();
  CommitSale(3);  // committed, never acknowledged, never sent: evicted
  input_.acknowledged.push_back({4, CommitSale(4), 1});  // expired
  GiveUpEachPending({"evicted: class sales was full",
                     "expired: pending longer than expire_after"});
  const AuditReport report = AuditDeliveries(input_, store_.get());
  EXPECT_EQ(report.given_up, 2);
  EXPECT_EQ(Fired(), Names{"given_up_by_class"});
  // A dead letter for any other reason is still lost and not drained.
  CommitSale(5);
  GiveUpEachPending({"HTTP 400"});
  EXPECT_EQ(Fired(), (Names{"committed_not_delivered", "given_up_by_class",
                            "not_drained"}));
}

TEST_F(DeliveryAuditTest, EventLeftPendingIsFlagged) {
  CleanSoak();
  const std::string id = CommitSale(3);
  Sent(3, id, 200);  // answered, but the store never marked it delivered
  EXPECT_EQ(Fired(), Names{"not_drained"});
}

TEST_F(DeliveryAuditTest, RequestWithABadSignatureIsFlagged) {
  CleanSoak();
  Sent(2, ids_[2], 200, "", /*signature_valid=*/false);
  EXPECT_EQ(Fired(), Names{"bad_signature"});
}

// MQTT deliveries carry no signature (tools/recorder/mqtt_recorder.h logs
// them signature_valid false).
TEST_F(DeliveryAuditTest, UnsignedRequestsPassWhenSignaturesAreNotRequired) {
  CleanSoak();
  Sent(2, ids_[2], 200, "", /*signature_valid=*/false);
  input_.require_signatures = false;
  EXPECT_EQ(Fired(), Names{});
}

TEST_F(DeliveryAuditTest, OtherChecksStillJudgeWhenSignaturesAreNotRequired) {
  CleanSoak();
  input_.requests.pop_back();  // sale 2 only got its 503
  Sent(3, "never-committed", 200, "", /*signature_valid=*/false);
  input_.require_signatures = false;
  EXPECT_EQ(Fired(), (Names{"acknowledged_not_delivered", "not_committed"}));
}

TEST_F(DeliveryAuditTest, RequestThatIsNoSaleOfTheTillIsFlagged) {
  CleanSoak();
  Sent(-1, "some-id", 200, R"({"sale":"till-9-0","n":0})");
  EXPECT_EQ(Fired(), Names{"not_a_sale_event"});
}

}  // namespace
}  // namespace outbox::audit
