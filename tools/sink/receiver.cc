// Copyright (c) edge-outbox authors.

#include "tools/sink/receiver.h"

#include <cstdio>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "platform/body_coding.h"
#include "tools/sink/batch_body.h"

namespace outbox::sink {
namespace {

bool Is2xx(int status) { return status >= 200 && status <= 299; }

// The fields every log line of `request` shares.
LogRecord RecordOf(const IncomingRequest& request, absl::Time now) {
  LogRecord record;
  record.received = now;
  record.method = request.method;
  record.path = request.path;
  record.idempotency_key = request.idempotency_key;
  record.content_type = request.content_type;
  return record;
}

// The type that --status-for-type sees for a batch: the first event's
// with an entry, so that a test can fail a whole batch by one event's type.
std::optional<std::string> TypeForFixedStatus(
    const std::vector<BatchEvent>& events, const FaultOptions& faults) {
  for (const BatchEvent& event : events) {
    if (faults.status_for_type.count(event.type) != 0) return event.type;
  }
  return std::nullopt;
}

}  // namespace

Receiver::Receiver(std::vector<WebhookSecret> secrets,
                   const SinkOptions& options, uint64_t seed, RequestLog* log,
                   const RouteTable* routes)
    : secrets_(std::move(secrets)),
      faults_(options.faults),
      tolerance_(options.timestamp_tolerance),
      log_(log),
      routes_(routes),
      planner_(options.faults, seed),
      route_counters_(routes == nullptr ? 0 : routes->routes().size(), 0) {}

void Receiver::Verify(const IncomingRequest& request, absl::Time now,
                      LogRecord* record) const {
  record->signature_valid = false;
  if (!request.webhook_id.has_value()) {
    record->signature_error = "missing webhook-id";
    return;
  }
  if (!request.webhook_timestamp.has_value()) {
    record->signature_error = "missing webhook-timestamp";
    return;
  }
  int64_t timestamp = 0;
  if (!absl::SimpleAtoi(*request.webhook_timestamp, &timestamp)) {
    record->signature_error = "webhook-timestamp is not an integer";
    return;
  }
  record->webhook_timestamp = timestamp;
  if (!request.webhook_signature.has_value()) {
    record->signature_error = "missing webhook-signature";
    return;
  }
  if (!VerifySignature(secrets_, *request.webhook_id, timestamp, request.body,
                       *request.webhook_signature)) {
    record->signature_error = "no matching signature";
    return;
  }
  // Checked after the MAC so that the error says "stale" only for a request
  // that was genuinely signed: that is a sender clock problem, not forgery.
  if (!TimestampWithinTolerance(timestamp, now, tolerance_)) {
    record->signature_error = "webhook-timestamp outside tolerance";
    return;
  }
  record->signature_valid = true;
}

Reply Receiver::Answer(const IncomingRequest& request,
                       const std::optional<RouteMatch>& match,
                       LogRecord* record) {
  Reply reply;
  if (routes_ == nullptr) return reply;
  if (!match.has_value()) {
    reply.status = 404;
    return reply;
  }
  RouteAnswer answer = AnswerOnce(request, *match);
  record->route_error = std::move(answer.error);
  reply.status = answer.status;
  reply.body = std::move(answer.body);
  reply.content_type = std::move(answer.content_type);
  return reply;
}

RouteAnswer Receiver::AnswerOnce(const IncomingRequest& request,
                                 const RouteMatch& match) {
  // One lock from the look-up to Remember (rendering is cheap, no I/O): of
  // two concurrent sends of one request exactly one renders, and the other
  // replays its answer.
  absl::MutexLock lock(&mu_);
  std::optional<AnswerKey> key;
  if (request.webhook_id.has_value()) {
    key = AnswerKey{*request.webhook_id, request.method, request.raw_path};
    if (const RouteAnswer* first = answers_.Find(*key)) return *first;
  }
  RouteAnswer answer = AnswerRoute(
      match, request.body, ++route_counters_[match.index], RandomUuid());
  // A non-2xx answer says nothing was done: a retry (after a 503, say) is a
  // new attempt and gets a new render.
  if (key.has_value() && Is2xx(answer.status)) {
    answers_.Remember(*std::move(key), answer);
  }
  return answer;
}

Reply Receiver::Decide(const IncomingRequest& request,
                       const std::optional<std::string>& type,
                       LogRecord* record) {
  std::optional<RouteMatch> match;
  if (routes_ != nullptr) {
    match = routes_->Match(request.method, request.raw_path);
    // Logged for every request, also one a fault answers.
    if (match.has_value()) record->route = match->route->name;
  }
  Reply reply;
  if (std::optional<int> fixed = FixedStatus(request.path, type, faults_)) {
    reply.status = *fixed;
  } else if (!record->signature_valid) {
    reply.status = 401;
  } else {
    switch (planner_.Draw()) {
      case Fault::kDrop:
        reply.drop = true;
        reply.status = 0;
        break;
      case Fault::kFail:
        reply.status = faults_.fail_status;
        break;
      case Fault::kThrottle:
        reply.status = 429;
        break;
      case Fault::kNone:
        reply = Answer(request, match, record);
        break;
    }
  }
  if (reply.status == 429) reply.retry_after = faults_.retry_after;
  if (!reply.drop && reply.body.empty()) {
    reply.body = absl::StrCat(reply.status, "\n");
  }
  return reply;
}

std::optional<Reply> DecodeContent(IncomingRequest* request,
                                   bool gzip_decoded) {
  if (!request->content_encoding.has_value()) return std::nullopt;
  Reply refused;
  absl::StatusOr<BodyCoding> coding =
      ParseBodyCoding(*request->content_encoding);
  if (!coding.ok()) {
    refused.status = 415;
    refused.body = absl::StrCat(coding.status().message(), "\n");
    return refused;
  }
  if (*coding == BodyCoding::kIdentity ||
      (*coding == BodyCoding::kGzip && gzip_decoded)) {
    return std::nullopt;
  }
  absl::StatusOr<std::string> body =
      DecodeBody(*coding, request->body, kMaxDecodedBody);
  if (!body.ok()) {
    refused.status = 400;
    refused.body = absl::StrCat("Content-Encoding ", BodyCodingName(*coding),
                                ": ", body.status().message(), "\n");
    return refused;
  }
  request->body = *std::move(body);
  return std::nullopt;
}

Reply Receiver::Handle(const IncomingRequest& request, absl::Time now) {
  if (IsBatch(request.content_type, request.event_ids)) {
    return HandleBatch(request, now);
  }
  std::vector<LogRecord> records = {RecordOf(request, now)};
  LogRecord& record = records[0];
  record.id = request.webhook_id;
  record.type = request.event_type;
  record.body = request.body;
  Verify(request, now, &record);
  const Reply reply = Decide(request, request.event_type, &record);
  Record(reply, &records);
  return reply;
}

Reply Receiver::HandleBatch(const IncomingRequest& request, absl::Time now) {
  absl::StatusOr<std::vector<BatchEvent>> events =
      ParseBatch(request.body, *request.event_ids, request.batch_size);
  if (!events.ok()) {
    // Nothing is logged: no event of a malformed batch was received, and a
    // line per request would count as a delivery of none of them.
    Reply reply;
    reply.status = 400;
    reply.body = absl::StrCat(events.status().message(), "\n");
    return reply;
  }
  LogRecord common = RecordOf(request, now);
  common.batch_id = request.webhook_id;
  common.batch_size = static_cast<int64_t>(events->size());
  Verify(request, now, &common);
  const Reply reply =
      Decide(request, TypeForFixedStatus(*events, faults_), &common);
  std::vector<LogRecord> records;
  records.reserve(events->size());
  for (BatchEvent& event : *events) {
    LogRecord record = common;
    record.id = std::move(event.id);
    record.type = std::move(event.type);
    record.content_type = std::move(event.content_type);
    record.body = std::move(event.data);
    records.push_back(std::move(record));
  }
  Record(reply, &records);
  return reply;
}

void Receiver::Record(const Reply& reply, std::vector<LogRecord>* records) {
  // Check, insert and log under one lock: of two concurrent 2xx answers
  // for the same id exactly one is the first, and it is also first in the
  // log, so "seq" order agrees with the "duplicate" flags; a batch's lines
  // are consecutive.
  absl::MutexLock lock(&mu_);
  for (LogRecord& record : *records) {
    record.dropped = reply.drop;
    record.status = reply.status;
    if (!reply.drop) record.response = reply.body;
    if (record.id.has_value()) {
      record.duplicate = answered_ids_.contains(*record.id);
      // A drop simulates a receiver that acted on the request and lost its
      // answer on the way back: the id counts as processed, so the sender's
      // resend is the duplicate the receiver must recognise.
      if (Is2xx(reply.status) || reply.drop) answered_ids_.insert(*record.id);
    }
    const absl::Status logged = log_->Append(record);
    if (!logged.ok()) {
      std::fprintf(stderr, "outbox-sink: %s\n", logged.ToString().c_str());
    }
  }
}

}  // namespace outbox::sink
