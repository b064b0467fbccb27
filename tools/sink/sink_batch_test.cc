// Copyright (c) edge-outbox authors.
//
// Batched deliveries end to end: batches the agent's BuildBatchRequest
// builds, POSTed to the real outbox-sink process, read back from its log,
// and audited as the kill soak audits (tools/audit/delivery_audit.h).

#include <httplib.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "agent/send/batch_request.h"
#include "agent/send/webhook_request.h"
#include "gtest/gtest.h"
#include "outbox/store.h"
#include "tests/testing/batch_request.h"
#include "tests/testing/request_headers.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"
#include "tests/testing/temp_dir.h"
#include "tools/audit/delivery_audit.h"
#include "tools/audit/sink_log_tail.h"
#include "tools/json_fields.h"
#include "webhooks/signature.h"

namespace outbox::sink {
namespace {

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr char kTill[] = "till-1";

class SinkBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(secret_path_) << kSecret << "\n";
    ASSERT_EQ(chmod(secret_path_.c_str(), 0600), 0);
    absl::StatusOr<WebhookSecret> secret = ParseWebhookSecret(kSecret);
    ASSERT_TRUE(secret.ok());
    destination_.secrets = {*secret};
  }

  void TearDown() override { StopSink(); }

  void StartSink(const std::string& log_path) {
    absl::StatusOr<std::unique_ptr<SinkProcess>> sink = SinkProcess::Start(
        testing::TargetCommand(
            OUTBOX_SINK_BINARY,
            {"--secret-file", secret_path_, "--log", log_path, "--seed", "1"}),
        dir_.path());
    ASSERT_OUTBOX_OK(sink);
    sink_ = *std::move(sink);
    destination_.url = absl::StrCat("http://127.0.0.1:", sink_->port(), "/");
  }

  void StopSink() {
    if (sink_ == nullptr) return;
    EXPECT_OUTBOX_OK(StopCleanly(sink_.get()));
    sink_.reset();
  }

  // Sends `request` as the agent's transport would; returns the status, or
  // -1 when no answer came.
  int Send(const HttpRequest& request) {
    httplib::Headers headers;
    std::string content_type;
    for (const auto& [name, value] : request.headers) {
      if (absl::EqualsIgnoreCase(name, "Content-Type")) {
        content_type = value;  // httplib sets it from its own argument
      } else {
        headers.emplace(name, value);
      }
    }
    httplib::Client client("127.0.0.1", sink_->port());
    client.set_read_timeout(5, 0);
    httplib::Result res =
        client.Post("/", headers, request.body, content_type.c_str());
    return res ? res->status : -1;
  }

  static std::vector<const PendingEvent*> Pointers(
      const std::vector<PendingEvent>& events) {
    std::vector<const PendingEvent*> p;
    for (const PendingEvent& e : events) p.push_back(&e);
    return p;
  }

  HttpRequest BatchOf(const std::vector<PendingEvent>& events) {
    return testing::BatchRequestOf(Pointers(events), destination_, absl::Now(),
                                   1);
  }

  static std::vector<PendingEvent> Events(int count) {
    std::vector<PendingEvent> events;
    for (int n = 0; n < count; ++n) {
      PendingEvent e;
      e.id = absl::StrCat("event-", n);
      e.type = "sale.created";
      e.content_type = "application/json";
      e.payload = absl::StrCat(R"({"n":)", n, "}");
      events.push_back(e);
    }
    return events;
  }

  testing::TempDir dir_;
  std::string secret_path_ = dir_.Sub("secrets");
  std::string log_path_ = dir_.Sub("sink.jsonl");
  Destination destination_;
  std::unique_ptr<SinkProcess> sink_;
};

TEST_F(SinkBatchTest, BatchOfThreeIsLoggedAsThreeEventsInOrder) {
  ASSERT_NO_FATAL_FAILURE(StartSink(log_path_));
  std::vector<PendingEvent> events = Events(3);
  events[1].payload = std::string("\xff\x00\x01", 3);  // sent as data_base64
  EXPECT_EQ(Send(BatchOf(events)), 200);
  const std::vector<std::string> log = ReadLines(log_path_);
  ASSERT_EQ(log.size(), 3u);
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(JsonString(log[i], "id"), events[i].id) << log[i];
    EXPECT_EQ(JsonField(log[i], "signature_valid"), "true") << log[i];
    EXPECT_EQ(JsonField(log[i], "batch_size"), "3") << log[i];
  }
  EXPECT_EQ(JsonString(log[0], "body"), events[0].payload);
  EXPECT_EQ(JsonString(log[1], "body_base64"), "/wAB");
  EXPECT_EQ(JsonString(log[2], "body"), events[2].payload);
}

TEST_F(SinkBatchTest, MalformedBatchIsAnswered400AndNothingIsLogged) {
  ASSERT_NO_FATAL_FAILURE(StartSink(log_path_));
  HttpRequest batch = BatchOf(Events(3));
  batch.body.insert(batch.body.find('\n') + 1, "not json\n");
  EXPECT_EQ(Send(batch), 400);
  EXPECT_TRUE(ReadLines(log_path_).empty());
}

// Compressed batches (Destination batch.compression): decoded before the
// signature is checked (it covers the uncompressed body) and the lines read.
TEST_F(SinkBatchTest, GzipAndZstdBatchesAreDecodedAndTheirSignaturesHold) {
  ASSERT_NO_FATAL_FAILURE(StartSink(log_path_));
  const std::vector<PendingEvent> events = Events(3);
  for (BodyCoding coding : {BodyCoding::kGzip, BodyCoding::kZstd}) {
    destination_.batch.compression = coding;
    const HttpRequest batch = BatchOf(events);
    EXPECT_EQ(testing::HeaderValue(batch, "Content-Encoding"),
              std::string(BodyCodingName(coding)));
    EXPECT_EQ(batch.body.find("event-0"), std::string::npos);  // compressed
    EXPECT_EQ(Send(batch), 200) << BodyCodingName(coding);
  }
  const std::vector<std::string> log = ReadLines(log_path_);
  ASSERT_EQ(log.size(), 6u);
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(JsonString(log[i], "id"), events[i % 3].id) << log[i];
    EXPECT_EQ(JsonString(log[i], "body"), events[i % 3].payload) << log[i];
    EXPECT_EQ(JsonField(log[i], "signature_valid"), "true") << log[i];
  }
}

TEST_F(SinkBatchTest, AnUnknownCodingIs415AndABrokenStreamIs400) {
  ASSERT_NO_FATAL_FAILURE(StartSink(log_path_));
  HttpRequest unknown = BatchOf(Events(2));
  unknown.headers.emplace_back("Content-Encoding", "compress");
  EXPECT_EQ(Send(unknown), 415);
  destination_.batch.compression = BodyCoding::kZstd;
  HttpRequest broken = BatchOf(Events(2));
  broken.body.resize(broken.body.size() - 4);
  EXPECT_EQ(Send(broken), 400);
  EXPECT_TRUE(ReadLines(log_path_).empty());
}

// --- The audit counts a resent batch as it counts resent events ----------

class SinkBatchAuditTest : public SinkBatchTest {
 protected:
  // Commits three sales of kTill as outbox-pos-sim does, POSTs them twice
  // (one batch or one request each) to a fresh sink, marks them delivered
  // and audits. No ordering key: NextDue hands all three out at once.
  audit::AuditReport SendTwiceAndAudit(bool batched, const std::string& name) {
    Options options;
    options.tables = {"sales"};
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open(options, dir_.Sub(name + "-db"));
    EXPECT_OUTBOX_OK(store);
    if (!store.ok()) return {};
    audit::AuditInput input;
    input.till = kTill;
    input.sales = 3;
    for (int64_t n = 0; n < 3; ++n) {
      input.acknowledged.push_back({n, CommitSale(store->get(), n), 1});
    }
    absl::StatusOr<DueEvents> due = (*store)->NextDue(100);
    EXPECT_OUTBOX_OK(due);
    if (!due.ok() || due->events.size() != 3) return {};
    const std::string log_path = dir_.Sub(name + "-sink.jsonl");
    StartSink(log_path);
    for (int round = 0; round < 2; ++round) {
      if (batched) {
        EXPECT_EQ(Send(BatchOf(due->events)), 200);
        continue;
      }
      for (const PendingEvent& e : due->events) {
        EXPECT_EQ(Send(BuildRequest(e, destination_, absl::Now(), 1)), 200);
      }
    }
    StopSink();
    for (const PendingEvent& e : due->events) {
      EXPECT_OUTBOX_OK((*store)->MarkDelivered(e));
    }
    for (const std::string& line : ReadLines(log_path)) {
      input.requests.push_back(audit::ParseSinkLine(line));
    }
    return audit::AuditDeliveries(input, store->get());
  }

  static std::string CommitSale(Store* store, int64_t n) {
    const std::string sale = absl::StrCat(kTill, "-", n);
    Txn txn;
    Event event;
    event.type = "sale.created";
    event.payload = absl::StrCat(R"({"sale":")", sale, R"(","n":)", n,
                                 R"(,"total_cents":)", 100 + n, "}");
    const std::string id = txn.Emit(event);
    txn.Put("sales", sale,
            absl::StrCat(R"({"n":)", n, R"(,"event_id":")", id, R"("})"));
    txn.Put("sales", "!next-sale", absl::StrCat(n + 1));
    EXPECT_OUTBOX_OK(store->Commit(txn));
    return id;
  }
};

TEST_F(SinkBatchAuditTest, BatchSentTwiceCountsAsItsEventsSentTwice) {
  const audit::AuditReport single = SendTwiceAndAudit(false, "single");
  const audit::AuditReport batch = SendTwiceAndAudit(true, "batch");
  EXPECT_EQ(batch.violation_count, 0) << absl::StrJoin(batch.violations, "\n");
  EXPECT_EQ(single.violation_count, 0)
      << absl::StrJoin(single.violations, "\n");
  EXPECT_EQ(batch.duplicates, 3);
  EXPECT_EQ(batch.duplicates, single.duplicates);
  EXPECT_EQ(batch.resends, single.resends);
  EXPECT_EQ(batch.requests, single.requests);
  EXPECT_EQ(batch.deliveries, single.deliveries);
}

}  // namespace
}  // namespace outbox::sink
