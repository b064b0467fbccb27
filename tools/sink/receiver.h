// Copyright (c) edge-outbox authors.
//
// The sink's decision for one webhook request, independent of HTTP
// plumbing: verify, deduplicate, pick the answer, log.

#ifndef OUTBOX_TOOLS_SINK_RECEIVER_H_
#define OUTBOX_TOOLS_SINK_RECEIVER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tools/sink/answer_memory.h"
#include "tools/sink/fault_plan.h"
#include "tools/sink/request_log.h"
#include "tools/sink/routes.h"
#include "tools/sink/sink_options.h"
#include "webhooks/signature.h"

namespace outbox::sink {

// The parts of an HTTP request the sink looks at. Headers are nullopt when
// absent.
struct IncomingRequest {
  std::string method;
  std::string path;      // Decoded, as logged.
  std::string raw_path;  // As sent (percent-encoded), no query: for routes.
  std::string body;
  std::optional<std::string> webhook_id;
  std::optional<std::string> webhook_timestamp;
  std::optional<std::string> webhook_signature;
  std::optional<std::string> idempotency_key;
  std::optional<std::string> content_type;
  std::optional<std::string> event_type;  // The --type-header value.
  std::optional<std::string> event_ids;   // outbox-event-ids (batches)
  std::optional<std::string> batch_size;  // outbox-batch-size (batches)
  std::optional<std::string> content_encoding;
};

struct Reply {
  bool drop = false;  // Close the connection instead of answering.
  int status = 200;
  std::optional<std::string> retry_after;  // Set on every 429.
  std::string body;
  std::string content_type = "text/plain";
};

// The most a request body may decode to (a batch's max_bytes is at most
// 64 MiB).
inline constexpr size_t kMaxDecodedBody = size_t{64} << 20;

// Decodes `request`'s body by its Content-Encoding (gzip, zstd; identity or
// none: as it is), so that the signature is checked over, and the batch read
// from, what the agent signed. `gzip_decoded`: the HTTP server already
// inflated a gzip body (cpp-httplib does when built with zlib). Returns the
// answer to give instead, nothing logged: 415 for any other coding, 400 for
// a body that does not decode (or past kMaxDecodedBody).
std::optional<Reply> DecodeContent(IncomingRequest* request, bool gzip_decoded);

// Decides and logs. The order of checks, documented in --help:
//   1. a fixed status (POST /status/NNN, --status-for-type);
//   2. a bad signature or stale timestamp -> 401;
//   3. a random fault (drop / fail / throttle);
//   4. with routes: the matched route's answer, or 404 when none matches;
//      without: 200. A request (webhook-id, method, path) a route answered
//      2xx before gets that first answer again, not a new render (see
//      AnswerMemory); a non-2xx answer is not remembered.
// A batch (agent/send/batch_request.h: Content-Type application/x-ndjson with
// an outbox-event-ids header) is checked first: a body that does not parse,
// or whose ids are not the header's, is answered 400 and logged not at all.
// A well-formed batch is decided once, as one request (its signature over
// the whole body, one fault draw, a --status-for-type entry matching the
// first event whose type has one), and logged as one line per event, in
// order, each as if the event had come alone (its id, type, content type
// and payload as body) plus batch_id and batch_size.
// "duplicate" means the webhook-id (a batch's event id) was processed earlier
// in this process (answered 2xx, or dropped after reading: a drop simulates an
// answer lost on the way back): the set, like the remembered answers, lives in
// memory only, so a restarted sink forgets it (a receiver must dedupe durably;
// this one only reports what it saw). Thread-safe: HTTP worker threads call
// Handle concurrently.
class Receiver {
 public:
  // REQUIRES: `log` and `routes` (nullptr: no --routes) outlive the
  // Receiver.
  Receiver(std::vector<WebhookSecret> secrets, const SinkOptions& options,
           uint64_t seed, RequestLog* log, const RouteTable* routes = nullptr);

  // Decides the reply for `request` received at `now` and appends its log
  // line before returning, so the line exists before the client hears back.
  // A failed log write is reported on stderr and does not change the reply.
  Reply Handle(const IncomingRequest& request, absl::Time now)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Handle() for a batch.
  Reply HandleBatch(const IncomingRequest& request, absl::Time now)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Fills record->signature_valid / signature_error / webhook_timestamp.
  void Verify(const IncomingRequest& request, absl::Time now,
              LogRecord* record) const;
  // The reply by the order above, `type` standing for the type header;
  // fills record->route and route_error.
  Reply Decide(const IncomingRequest& request,
               const std::optional<std::string>& type, LogRecord* record)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Completes `records` (one request's) with `reply`, flags duplicates and
  // appends them to the log, together.
  void Record(const Reply& reply, std::vector<LogRecord>* records)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Step 4 above.
  Reply Answer(const IncomingRequest& request,
               const std::optional<RouteMatch>& match, LogRecord* record)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The answer `match` gives `request`: the remembered one, or a new render
  // (remembered if 2xx).
  RouteAnswer AnswerOnce(const IncomingRequest& request,
                         const RouteMatch& match) ABSL_LOCKS_EXCLUDED(mu_);

  const std::vector<WebhookSecret> secrets_;
  const FaultOptions faults_;
  const absl::Duration tolerance_;
  RequestLog* const log_;
  const RouteTable* const routes_;
  FaultPlanner planner_;
  absl::Mutex mu_;
  absl::flat_hash_set<std::string> answered_ids_ ABSL_GUARDED_BY(mu_);
  // Requests answered so far per route (RouteTable::routes() index).
  std::vector<int64_t> route_counters_ ABSL_GUARDED_BY(mu_);
  // The 2xx route answers given, for resends.
  AnswerMemory answers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_RECEIVER_H_
