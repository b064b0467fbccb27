// Copyright (c) edge-outbox authors.
//
// Sender: what the agent's loop needs from one kind of destination (HTTP,
// MQTT), so that routes, retries and backoff, "offline is not an attempt",
// dead letters, FIFO per ordering key and metrics work the same for every
// kind. Each sender turns what its protocol says into a SendResult, and the
// agent decides from that alone (Decide() in ../decision.h).
//
// Like HttpTransport, a sender contributes one pollable fd to the agent's
// epoll and never blocks; the agent calls Process() when the fd is readable.

#ifndef OUTBOX_AGENT_SEND_SENDER_H_
#define OUTBOX_AGENT_SEND_SENDER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/config/config.h"
#include "agent/retry/retry_policy.h"
#include "outbox/http_transport.h"
#include "outbox/store.h"

namespace outbox {

// How one delivery a sender started ended.
struct SendResult {
  uint64_t tag = 0;
  // True when nothing reached the receiver (or broker): no route, refused,
  // connect timeout, a broker that is down or refused the connection. Not
  // an attempt: the event stays as it was and its destination counts as
  // unreachable. False whenever the receiver may have it.
  bool offline = false;
  // OK when the receiver answered: its verdict is `outcome`. Otherwise why
  // no answer came (a reset or timeout after sending: the receiver may have
  // acted on it); kFailedPrecondition is a TLS failure, before anything
  // was sent.
  absl::Status transport;
  // The receiver's verdict, when transport is OK (HTTP: Classify(); MQTT:
  // the PUBACK's reason code).
  DeliveryOutcome outcome = DeliveryOutcome::kRetry;
  // The answer in a few words for the store and logs, without payloads:
  // "HTTP 503", "PUBACK 0x87 (Not authorized)".
  std::string answer;
  // The HTTP status for the store's attempt record; 0 for other kinds.
  int http_status = 0;
  // MQTT: the PUBACK's reason code when the broker answered; else -1.
  int reason_code = -1;
  // How long the receiver asked to wait before the next attempt, if it did.
  std::optional<absl::Duration> retry_after;
  // The whole HTTP answer (HTTP senders only): a workflow step keeps its
  // status and body.
  HttpResult http;
};

// REQUIRES: External synchronization. Driven by the agent's one thread.
class Sender {
 public:
  // Abandons deliveries in flight without results (they stay pending in
  // the store and are sent again, with the same id, next time).
  virtual ~Sender() = default;

  // Begins delivering `event` to `destination` (one of this sender's) at
  // wall time `now`, and returns at once. After OK exactly one SendResult
  // with `tag` comes out of Process() or AbandonAll(). Errors (no result
  // follows): kResourceExhausted when full (start it in a later round);
  // anything else means this event can never be sent this way (e.g. an
  // event type that makes no valid MQTT topic): the message says why.
  virtual absl::Status Start(const PendingEvent& event,
                             const Destination& destination, absl::Time now,
                             uint64_t tag) = 0;

  // Readable, level-triggered, whenever Process() has work to do. Valid for
  // the life of the sender; the caller must not read or close it.
  virtual int fd() const = 0;

  // Advances every delivery as far as it goes without blocking and appends
  // the finished ones to `*done`; `now` is the wall time, for answers that
  // name a date (Retry-After). A non-OK status means the sender itself
  // faltered; deliveries stay in flight, so the caller logs it and goes on.
  virtual absl::Status Process(absl::Time now,
                               std::vector<SendResult>* done) = 0;

  // Deliveries started and not yet returned.
  virtual size_t InFlight() const = 0;

  // Stops every delivery in flight and appends a result with transport
  // kCancelled for each: the receiver may or may not have it. For shutdown.
  virtual void AbandonAll(std::vector<SendResult>* done) = 0;
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_SEND_SENDER_H_
