// Copyright (c) edge-outbox authors.
//
// The Receiver's handling of batches, built by the agent's own
// BuildBatchRequest: decided once, logged once per event.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/send/batch_request.h"
#include "gtest/gtest.h"
#include "tests/testing/batch_request.h"
#include "tests/testing/request_headers.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "tools/json_fields.h"
#include "tools/sink/receiver.h"
#include "tools/sink/request_log.h"
#include "webhooks/signature.h"

namespace outbox::sink {
namespace {

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const absl::Time kNow = absl::FromUnixSeconds(1767225600);

class ReceiverBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<WebhookSecret> secret = ParseWebhookSecret(kSecret);
    ASSERT_TRUE(secret.ok());
    destination_.url = "http://127.0.0.1/hook";
    destination_.secrets = {*secret};
    for (int n = 1; n <= 3; ++n) {
      PendingEvent e;
      e.id = absl::StrCat("event-", n);
      e.type = n == 2 ? "sale.voided" : "sale.created";
      e.content_type = "application/json";
      e.payload = absl::StrCat(R"({"n":)", n, "}");
      events_.push_back(e);
    }
  }

  void Build(SinkOptions options = SinkOptions()) {
    absl::StatusOr<std::unique_ptr<RequestLog>> log =
        RequestLog::Open(log_path_);
    ASSERT_OUTBOX_OK(log);
    log_ = *std::move(log);
    receiver_ = std::make_unique<Receiver>(destination_.secrets, options, 1,
                                           log_.get());
  }

  // The batch of `events_` as the agent sends it, as the server hands it on.
  IncomingRequest Batch() {
    std::vector<const PendingEvent*> events;
    for (const PendingEvent& e : events_) events.push_back(&e);
    const HttpRequest r =
        testing::BatchRequestOf(events, destination_, kNow, 1);
    IncomingRequest in;
    in.method = r.method;
    in.path = in.raw_path = "/hook";
    in.body = r.body;
    in.webhook_id = testing::HeaderValue(r, "webhook-id");
    in.webhook_timestamp = testing::HeaderValue(r, "webhook-timestamp");
    in.webhook_signature = testing::HeaderValue(r, "webhook-signature");
    in.idempotency_key = testing::HeaderValue(r, "Idempotency-Key");
    in.content_type = testing::HeaderValue(r, "Content-Type");
    in.event_ids = testing::HeaderValue(r, "outbox-event-ids");
    in.batch_size = testing::HeaderValue(r, "outbox-batch-size");
    return in;
  }

  std::vector<std::string> Lines() { return ReadLines(log_path_); }

  Destination destination_;
  std::vector<PendingEvent> events_;
  testing::TempDir dir_;
  std::string log_path_ = dir_.Sub("log.jsonl");
  std::unique_ptr<RequestLog> log_;
  std::unique_ptr<Receiver> receiver_;
};

TEST_F(ReceiverBatchTest, EachEventIsLoggedAsIfItHadComeAlone) {
  Build();
  const IncomingRequest batch = Batch();
  EXPECT_EQ(receiver_->Handle(batch, kNow).status, 200);
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 3u);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(JsonString(lines[i], "id"), events_[i].id);
    EXPECT_EQ(JsonString(lines[i], "type"), events_[i].type);
    EXPECT_EQ(JsonString(lines[i], "content_type"), events_[i].content_type);
    EXPECT_EQ(JsonString(lines[i], "body"), events_[i].payload);
    EXPECT_EQ(JsonField(lines[i], "signature_valid"), "true");
    EXPECT_EQ(JsonField(lines[i], "status"), "200");
    EXPECT_EQ(JsonString(lines[i], "batch_id"), *batch.webhook_id);
    EXPECT_EQ(JsonField(lines[i], "batch_size"), "3");
  }
}

TEST_F(ReceiverBatchTest, BadSignatureAnswers401AndLogsEachEventInvalid) {
  Build();
  destination_.secrets = {WebhookSecret("a-key-the-sink-does-not-have")};
  EXPECT_EQ(receiver_->Handle(Batch(), kNow).status, 401);
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 3u);
  for (const std::string& line : lines) {
    EXPECT_EQ(JsonField(line, "signature_valid"), "false");
    EXPECT_EQ(JsonField(line, "status"), "401");
  }
}

TEST_F(ReceiverBatchTest, MalformedBatchAnswers400AndLogsNothing) {
  Build();
  IncomingRequest batch = Batch();
  batch.event_ids = "event-1,event-3,event-2";
  const Reply reply = receiver_->Handle(batch, kNow);
  EXPECT_EQ(reply.status, 400);
  EXPECT_TRUE(absl::StrContains(reply.body, "outbox-event-ids")) << reply.body;
  EXPECT_TRUE(Lines().empty());
}

TEST_F(ReceiverBatchTest, EventsOfAnAnsweredBatchAreDuplicatesWhenResent) {
  Build();
  ASSERT_EQ(receiver_->Handle(Batch(), kNow).status, 200);
  events_.erase(events_.begin());  // a regrouped resend: events 2 and 3
  ASSERT_EQ(receiver_->Handle(Batch(), kNow).status, 200);
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 5u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(JsonField(lines[i], "duplicate"), "false") << i;
  }
  EXPECT_EQ(JsonString(lines[3], "id"), "event-2");
  EXPECT_EQ(JsonField(lines[3], "duplicate"), "true");
  EXPECT_EQ(JsonField(lines[4], "duplicate"), "true");
}

TEST_F(ReceiverBatchTest, StatusForOneEventsTypeAnswersTheWholeBatch) {
  SinkOptions options;
  options.faults.status_for_type["sale.voided"] = 422;
  Build(options);
  EXPECT_EQ(receiver_->Handle(Batch(), kNow).status, 422);
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(JsonField(lines[0], "status"), "422");
  EXPECT_EQ(JsonField(lines[2], "status"), "422");
}

TEST_F(ReceiverBatchTest, OneFaultDrawAppliesToTheWholeBatch) {
  SinkOptions options;
  options.faults.drop_rate = 1;
  Build(options);
  EXPECT_TRUE(receiver_->Handle(Batch(), kNow).drop);
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 3u);
  for (const std::string& line : lines) {
    EXPECT_EQ(JsonString(line, "action"), "drop");
  }
}

TEST_F(ReceiverBatchTest, NdjsonWithoutTheIdsHeaderIsOneRequest) {
  Build();
  IncomingRequest batch = Batch();
  batch.event_ids.reset();
  receiver_->Handle(batch, kNow);
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(JsonString(lines[0], "id"), *batch.webhook_id);
  EXPECT_EQ(JsonString(lines[0], "body"), batch.body);
}

}  // namespace
}  // namespace outbox::sink
