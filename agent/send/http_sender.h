// Copyright (c) edge-outbox authors.
//
// HttpSender: webhooks as a Sender. Each event is one POST built by
// BuildRequest (webhook_request.h) on an HttpTransport; the answer's status is
// classified by Classify() (retry_policy.h) and its Retry-After read.
// Workflow steps go through StartRequest with a request of their own.

#ifndef OUTBOX_AGENT_SEND_HTTP_SENDER_H_
#define OUTBOX_AGENT_SEND_HTTP_SENDER_H_

#include <memory>
#include <vector>

#include "agent/send/sender.h"
#include "outbox/http_transport.h"

namespace outbox {

// The SendResult for an HTTP answer `result` that came at wall time `now`.
SendResult SendResultFromHttp(HttpResult result, absl::Time now);

// REQUIRES: External synchronization. Driven by the agent's one thread.
class HttpSender final : public Sender {
 public:
  explicit HttpSender(std::unique_ptr<HttpTransport> transport)
      : transport_(std::move(transport)) {}
  ~HttpSender() override;

  absl::Status Start(const PendingEvent& event, const Destination& destination,
                     absl::Time now, uint64_t tag) override;
  // Starts `request` as it is (its tag included). Errors as Start().
  absl::Status StartRequest(HttpRequest request);
  int fd() const override { return transport_->fd(); }
  // The transport, for another sender. REQUIRES: nothing in flight
  // (AbandonAll); this sender is unusable after.
  std::unique_ptr<HttpTransport> TakeTransport() {
    return std::move(transport_);
  }
  absl::Status Process(absl::Time now, std::vector<SendResult>* done) override;
  size_t InFlight() const override { return transport_->InFlight(); }
  void AbandonAll(std::vector<SendResult>* done) override;

 private:
  std::unique_ptr<HttpTransport> transport_;
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_SEND_HTTP_SENDER_H_
