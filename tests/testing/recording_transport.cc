// Copyright (c) edge-outbox authors.

#include "tests/testing/recording_transport.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace outbox::testing {

const char* AnswerName(Answer answer) {
  switch (answer) {
    case Answer::kOk:
      return "200";
    case Answer::kServerError:
      return "503";
    case Answer::kTooManyRequests:
      return "429";
    case Answer::kBadRequest:
      return "400";
    case Answer::kLostAnswer:
      return "lost answer";
    case Answer::kOffline:
      return "offline";
  }
  return "?";
}

Receiver::Receiver(uint64_t seed, AnswerWeights weights)
    : weights_(weights), gen_(seed) {}

void Receiver::Script(std::vector<Answer> answers) {
  script_.insert(script_.end(), answers.begin(), answers.end());
}

Answer Receiver::Draw() {
  std::discrete_distribution<int> pick(
      {static_cast<double>(weights_.ok),
       static_cast<double>(weights_.server_error),
       static_cast<double>(weights_.too_many_requests),
       static_cast<double>(weights_.bad_request),
       static_cast<double>(weights_.lost_answer),
       static_cast<double>(weights_.offline)});
  return static_cast<Answer>(pick(gen_));
}

Answer Receiver::Handle(const HttpRequest& request) {
  Answer answer;
  if (!script_.empty()) {
    answer = script_.front();
    script_.pop_front();
  } else {
    answer = Draw();
  }
  if (answer == Answer::kOffline) return answer;
  ReceivedRequest received;
  received.arrival = log_.size();
  for (const auto& [name, value] : request.headers) {
    if (absl::EqualsIgnoreCase(name, "webhook-id")) received.webhook_id = value;
  }
  received.method = request.method;
  received.url = request.url;
  received.body = request.body;
  std::string body = absl::StrCat("{\"ref\":\"a", received.arrival, "\"}");
  if (deduplicate_ != nullptr && deduplicate_(received.webhook_id)) {
    auto first = processed_.find(received.webhook_id);
    if (first != processed_.end()) {
      body = first->second;  // its first answer, again
      if (answer == Answer::kServerError || answer == Answer::kBadRequest ||
          answer == Answer::kTooManyRequests) {
        answer = Answer::kOk;
      }
    } else if (answer == Answer::kOk || answer == Answer::kLostAnswer) {
      processed_.emplace(received.webhook_id, body);
    }
  }
  received.answer = answer;
  if (answer == Answer::kOk) received.response = std::move(body);
  log_.push_back(std::move(received));
  return answer;
}

RecordingTransport::RecordingTransport(Receiver* receiver,
                                       std::function<bool()> powered)
    : receiver_(receiver),
      powered_(std::move(powered)),
      event_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

RecordingTransport::~RecordingTransport() {
  if (event_fd_ >= 0) close(event_fd_);
}

absl::Status RecordingTransport::Start(HttpRequest request) {
  if (event_fd_ < 0) return absl::ResourceExhaustedError("no eventfd");
  if (!absl::StartsWith(request.url, "http://") &&
      !absl::StartsWith(request.url, "https://")) {
    return absl::InvalidArgumentError("URL is not http(s)");
  }
  waiting_.push_back(std::move(request));
  Signal();
  return absl::OkStatus();
}

void RecordingTransport::Signal() {
  const uint64_t one = 1;
  ssize_t ignored = write(event_fd_, &one, sizeof(one));
  (void)ignored;  // a full counter is still readable
}

void RecordingTransport::Release() {
  held_ = false;
  if (!waiting_.empty()) Signal();
}

HttpResult RecordingTransport::Deliver(const HttpRequest& request) {
  HttpResult result;
  result.tag = request.tag;
  // A device without power sends nothing: the receiver never sees it.
  const Answer answer =
      powered_() ? receiver_->Handle(request) : Answer::kOffline;
  switch (answer) {
    case Answer::kOk:
      result.http_status = 200;
      result.body =
          receiver_->log().back().response.substr(0, request.max_response_body);
      break;
    case Answer::kServerError:
      result.http_status = 503;
      break;
    case Answer::kTooManyRequests:
      result.http_status = 429;
      result.retry_after = "1";
      break;
    case Answer::kBadRequest:
      result.http_status = 400;
      break;
    case Answer::kLostAnswer:
      result.transport =
          absl::UnavailableError("connection reset after the request was sent");
      break;
    case Answer::kOffline:
      result.transport = absl::UnavailableError("could not connect");
      result.offline = true;
      break;
  }
  return result;
}

absl::Status RecordingTransport::Process(std::vector<HttpResult>* done) {
  uint64_t count;
  while (read(event_fd_, &count, sizeof(count)) > 0) {
  }
  if (held_) return absl::OkStatus();
  std::vector<HttpRequest> requests = std::move(waiting_);
  waiting_.clear();
  for (const HttpRequest& request : requests) {
    done->push_back(Deliver(request));
  }
  return absl::OkStatus();
}

void RecordingTransport::AbandonAll(std::vector<HttpResult>* done) {
  for (const HttpRequest& request : waiting_) {
    HttpResult result;
    result.tag = request.tag;
    result.transport = absl::CancelledError("abandoned");
    done->push_back(std::move(result));
  }
  waiting_.clear();
  uint64_t count;
  while (read(event_fd_, &count, sizeof(count)) > 0) {
  }
}

}  // namespace outbox::testing
