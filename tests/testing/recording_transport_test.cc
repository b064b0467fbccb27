// Copyright (c) edge-outbox authors.
//
// RecordingTransport and Receiver: what the agent sees for each answer, and
// what the receiver logs.

#include "tests/testing/recording_transport.h"

#include <poll.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox::testing {
namespace {

HttpRequest Request(uint64_t tag, const std::string& id) {
  HttpRequest r;
  r.tag = tag;
  r.url = "http://receiver.test/";
  r.headers = {{"Content-Type", "application/json"}, {"webhook-id", id}};
  r.body = "{\"id\":\"" + id + "\"}";
  return r;
}

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

TEST(RecordingTransportTest, AnswersOnTheNextProcessAsScripted) {
  Receiver receiver(/*seed=*/1);
  receiver.Script({Answer::kOk, Answer::kServerError, Answer::kTooManyRequests,
                   Answer::kBadRequest, Answer::kLostAnswer, Answer::kOffline});
  RecordingTransport transport(&receiver, [] { return true; });
  for (uint64_t tag = 1; tag <= 6; ++tag) {
    ASSERT_OUTBOX_OK(transport.Start(Request(tag, "e" + std::to_string(tag))));
  }
  EXPECT_EQ(transport.InFlight(), 6u);
  EXPECT_TRUE(Readable(transport.fd()));

  std::vector<HttpResult> done;
  ASSERT_OUTBOX_OK(transport.Process(&done));
  ASSERT_EQ(done.size(), 6u);
  EXPECT_EQ(transport.InFlight(), 0u);
  EXPECT_FALSE(Readable(transport.fd()));
  EXPECT_EQ(done[0].http_status, 200);
  EXPECT_EQ(done[1].http_status, 503);
  EXPECT_EQ(done[2].http_status, 429);
  EXPECT_EQ(done[2].retry_after, "1");
  EXPECT_EQ(done[3].http_status, 400);
  EXPECT_FALSE(done[4].transport.ok());  // lost answer: not offline
  EXPECT_FALSE(done[4].offline);
  EXPECT_FALSE(done[5].transport.ok());
  EXPECT_TRUE(done[5].offline);
  for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(done[i].tag, i + 1);
}

TEST(RecordingTransportTest, ReceiverLogsWhatReachedItInArrivalOrder) {
  Receiver receiver(/*seed=*/1);
  receiver.Script({Answer::kLostAnswer, Answer::kOffline, Answer::kOk});
  RecordingTransport transport(&receiver, [] { return true; });
  for (uint64_t tag = 1; tag <= 3; ++tag) {
    ASSERT_OUTBOX_OK(transport.Start(Request(tag, "e" + std::to_string(tag))));
  }
  std::vector<HttpResult> done;
  ASSERT_OUTBOX_OK(transport.Process(&done));

  // The offline request never got there; the lost answer did.
  ASSERT_EQ(receiver.log().size(), 2u);
  EXPECT_EQ(receiver.log()[0].webhook_id, "e1");
  EXPECT_EQ(receiver.log()[0].answer, Answer::kLostAnswer);
  EXPECT_EQ(receiver.log()[0].body, "{\"id\":\"e1\"}");
  EXPECT_EQ(receiver.log()[1].webhook_id, "e3");
  EXPECT_EQ(receiver.log()[1].arrival, 1u);
}

TEST(RecordingTransportTest, A2xxNamesItsArrivalUpToTheRequestsLimit) {
  Receiver receiver(/*seed=*/1);
  receiver.Script({Answer::kServerError, Answer::kOk, Answer::kOk});
  RecordingTransport transport(&receiver, [] { return true; });
  for (uint64_t tag = 1; tag <= 3; ++tag) {
    HttpRequest r = Request(tag, "e" + std::to_string(tag));
    r.method = "DELETE";
    r.url = "http://receiver.test/wf/" + std::to_string(tag);
    r.max_response_body = tag == 3 ? 5 : 100;
    ASSERT_OUTBOX_OK(transport.Start(std::move(r)));
  }
  std::vector<HttpResult> done;
  ASSERT_OUTBOX_OK(transport.Process(&done));

  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].body, "");
  EXPECT_EQ(done[1].body, "{\"ref\":\"a1\"}");
  EXPECT_EQ(done[2].body, "{\"ref");  // cut at its request's limit
  ASSERT_EQ(receiver.log().size(), 3u);
  EXPECT_EQ(receiver.log()[0].response, "");
  EXPECT_EQ(receiver.log()[2].response, "{\"ref\":\"a2\"}");
  EXPECT_EQ(receiver.log()[1].method, "DELETE");
  EXPECT_EQ(receiver.log()[1].url, "http://receiver.test/wf/2");
}

TEST(RecordingTransportTest, NothingLeavesAPoweredOffDevice) {
  Receiver receiver(/*seed=*/1);
  bool powered = true;
  RecordingTransport transport(&receiver, [&powered] { return powered; });
  ASSERT_OUTBOX_OK(transport.Start(Request(1, "e1")));
  powered = false;
  std::vector<HttpResult> done;
  ASSERT_OUTBOX_OK(transport.Process(&done));

  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].offline);
  EXPECT_TRUE(receiver.log().empty());
}

TEST(RecordingTransportTest, SameSeedGivesSameRandomAnswers) {
  Receiver a(/*seed=*/42), b(/*seed=*/42);
  std::vector<Answer> from_a, from_b;
  for (int i = 0; i < 200; ++i) {
    from_a.push_back(a.Handle(Request(i, "e")));
    from_b.push_back(b.Handle(Request(i, "e")));
  }
  EXPECT_EQ(from_a, from_b);
  // Every kind of answer shows up with the default weights.
  for (Answer answer :
       {Answer::kOk, Answer::kServerError, Answer::kTooManyRequests,
        Answer::kBadRequest, Answer::kLostAnswer, Answer::kOffline}) {
    EXPECT_NE(std::find(from_a.begin(), from_a.end(), answer), from_a.end())
        << AnswerName(answer);
  }
}

TEST(RecordingTransportTest, HeldRequestsStayInFlightUntilReleased) {
  Receiver receiver(/*seed=*/1);
  RecordingTransport transport(&receiver, [] { return true; });
  transport.Hold();
  ASSERT_OUTBOX_OK(transport.Start(Request(1, "e1")));
  std::vector<HttpResult> done;
  ASSERT_OUTBOX_OK(transport.Process(&done));
  EXPECT_TRUE(done.empty());
  EXPECT_EQ(transport.InFlight(), 1u);
  ASSERT_EQ(transport.waiting().size(), 1u);
  EXPECT_EQ(transport.waiting()[0].tag, 1u);
  EXPECT_FALSE(Readable(transport.fd())) << "nothing to do while held";

  transport.Release();
  EXPECT_TRUE(Readable(transport.fd()));
  ASSERT_OUTBOX_OK(transport.Process(&done));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].tag, 1u);
  EXPECT_EQ(transport.InFlight(), 0u);
}

TEST(RecordingTransportTest, AbandonAllCancelsWhatWaits) {
  Receiver receiver(/*seed=*/1);
  RecordingTransport transport(&receiver, [] { return true; });
  ASSERT_OUTBOX_OK(transport.Start(Request(7, "e7")));
  std::vector<HttpResult> done;
  transport.AbandonAll(&done);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].tag, 7u);
  EXPECT_TRUE(absl::IsCancelled(done[0].transport));
  EXPECT_EQ(transport.InFlight(), 0u);
  EXPECT_TRUE(receiver.log().empty());
}

}  // namespace
}  // namespace outbox::testing
