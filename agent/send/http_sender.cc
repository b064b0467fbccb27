// Copyright (c) edge-outbox authors.

#include "agent/send/http_sender.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/retry/retry_policy.h"
#include "agent/send/webhook_request.h"
#include "lib/crash_points.h"

namespace outbox {

SendResult SendResultFromHttp(HttpResult result, absl::Time now) {
  SendResult out;
  out.tag = result.tag;
  out.offline = result.offline;
  out.transport = result.transport;
  if (result.transport.ok()) {
    out.http_status = result.http_status;
    out.outcome = Classify(result.http_status);
    out.answer = absl::StrCat("HTTP ", result.http_status);
    // Parsed whatever Classify() says: a destination's `answers` may make
    // any status a retry (Decide() reads it only for retries).
    if (!result.retry_after.empty()) {
      absl::StatusOr<absl::Duration> wait =
          ParseRetryAfter(result.retry_after, now);
      if (wait.ok()) out.retry_after = *wait;
    }
  }
  out.http = std::move(result);
  return out;
}

HttpSender::~HttpSender() {
  std::vector<HttpResult> abandoned;  // left pending; resent next time
  transport_->AbandonAll(&abandoned);
}

absl::Status HttpSender::Start(const PendingEvent& event,
                               const Destination& destination, absl::Time now,
                               uint64_t tag) {
  HttpRequest request = BuildRequest(event, destination, now, tag);
  internal::CrashPoint(internal::kAgentBeforeSend);
  return transport_->Start(std::move(request));
}

absl::Status HttpSender::StartRequest(HttpRequest request) {
  return transport_->Start(std::move(request));
}

absl::Status HttpSender::Process(absl::Time now,
                                 std::vector<SendResult>* done) {
  std::vector<HttpResult> finished;
  absl::Status s = transport_->Process(&finished);
  for (HttpResult& r : finished) {
    done->push_back(SendResultFromHttp(std::move(r), now));
  }
  return s;
}

void HttpSender::AbandonAll(std::vector<SendResult>* done) {
  std::vector<HttpResult> abandoned;
  transport_->AbandonAll(&abandoned);
  // kCancelled, no answer: the time to read one by is never used.
  for (HttpResult& r : abandoned) {
    done->push_back(SendResultFromHttp(std::move(r), absl::UnixEpoch()));
  }
}

}  // namespace outbox
