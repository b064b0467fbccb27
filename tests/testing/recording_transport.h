// Copyright (c) edge-outbox authors.
//
// An in-process receiver of webhooks and the HttpTransport that reaches it,
// for crash suites: no sockets, every answer chosen by the test, and a log of
// what the receiver got that outlives the device's power cuts (the receiver
// is a server somewhere else; only the device loses power).

#ifndef OUTBOX_TESTS_TESTING_RECORDING_TRANSPORT_H_
#define OUTBOX_TESTS_TESTING_RECORDING_TRANSPORT_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "outbox/http_transport.h"

namespace outbox::testing {

// How the receiver treats one request.
enum class Answer {
  kOk,               // 200: processed and acknowledged
  kServerError,      // 503: retried by the agent
  kTooManyRequests,  // 429 with Retry-After: 1
  kBadRequest,       // 400: the agent dead-letters the event
  kLostAnswer,       // processed, but the answer never reaches the device:
                     // the agent sees a transport error (not offline)
  kOffline,          // never reached the receiver: not logged
};
const char* AnswerName(Answer answer);

// One request that reached the receiver.
struct ReceivedRequest {
  uint64_t arrival = 0;    // 0, 1, 2, ... in order of arrival
  std::string webhook_id;  // the webhook-id header ("" if absent)
  std::string method;
  std::string url;
  std::string body;
  Answer answer = Answer::kOk;
  // The body of a kOk answer, {"ref":"a<arrival>"}: each 2xx names itself,
  // so that what a device stored of an answer can be traced to it.
  std::string response;
};

// Relative weights of the random answers (any non-negative values).
struct AnswerWeights {
  int ok = 55;
  int server_error = 10;
  int too_many_requests = 7;
  int bad_request = 6;
  int lost_answer = 10;
  int offline = 14;
};

// The receiving server. Scripted answers are used first, in order, then
// random ones drawn with `weights` from a generator seeded by the test, so a
// seed reproduces the same sequence of answers.
//
// REQUIRES: External synchronization (the agent's single thread).
class Receiver {
 public:
  explicit Receiver(uint64_t seed, AnswerWeights weights = AnswerWeights());
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;

  // Queues answers to give before any random one.
  void Script(std::vector<Answer> answers);
  // Forgets the scripted answers not given yet.
  void ClearScript() { script_.clear(); }
  // From now on, a request whose webhook-id `which` accepts and that the
  // receiver processed before (answered kOk, or lost that answer) is
  // answered kOk again, with the first processed answer's body, where it
  // would have been refused (5xx, 429, 400): an idempotent receiver. Lost
  // answers and offline still happen (the network's doing). Draws as many
  // answers as without it.
  void Deduplicate(std::function<bool(const std::string& webhook_id)> which) {
    deduplicate_ = std::move(which);
  }

  // Decides the answer to `request` and logs it unless it is kOffline.
  Answer Handle(const HttpRequest& request);

  const std::vector<ReceivedRequest>& log() const { return log_; }

 private:
  Answer Draw();

  const AnswerWeights weights_;
  std::mt19937_64 gen_;
  std::deque<Answer> script_;
  std::vector<ReceivedRequest> log_;
  std::function<bool(const std::string&)> deduplicate_;
  // Deduplicated ids processed so far: the body of their first answer.
  std::unordered_map<std::string, std::string> processed_;
};

// An HttpTransport whose requests reach `receiver` (borrowed; must outlive
// the transport) on the next Process() call. fd() is an eventfd, readable
// while requests wait. While `powered()` returns false the device is off:
// nothing leaves it, so requests are answered offline and never reach the
// receiver.
//
// REQUIRES: External synchronization, like every HttpTransport.
class RecordingTransport final : public HttpTransport {
 public:
  RecordingTransport(Receiver* receiver, std::function<bool()> powered);
  ~RecordingTransport() override;
  RecordingTransport(const RecordingTransport&) = delete;
  RecordingTransport& operator=(const RecordingTransport&) = delete;

  absl::Status Start(HttpRequest request) override;
  int fd() const override { return event_fd_; }
  absl::Status Process(std::vector<HttpResult>* done) override;
  size_t InFlight() const override { return waiting_.size(); }
  void AbandonAll(std::vector<HttpResult>* done) override;

  // While held, requests stay in flight, as with a receiver that is slow to
  // answer: Process() answers none until Release(), which makes fd()
  // readable so that the next Process() answers them all.
  void Hold() { held_ = true; }
  void Release();

  // The requests started and not answered yet, oldest first.
  const std::vector<HttpRequest>& waiting() const { return waiting_; }

 private:
  HttpResult Deliver(const HttpRequest& request);
  void Signal();

  Receiver* const receiver_;
  const std::function<bool()> powered_;
  int event_fd_ = -1;
  bool held_ = false;
  std::vector<HttpRequest> waiting_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_RECORDING_TRANSPORT_H_
