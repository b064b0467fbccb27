// Copyright (c) edge-outbox authors.

#include "tools/sink/sink_options.h"

#include <functional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "tools/sink/answer_memory.h"

namespace outbox::sink {
namespace {

using Setter = std::function<absl::Status(const std::string& value)>;

absl::Status BadFlag(absl::string_view flag, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", why));
}

absl::Status ParseRate(absl::string_view flag, const std::string& v,
                       double* out) {
  double rate = 0;
  if (!absl::SimpleAtod(v, &rate) || !(rate >= 0 && rate <= 1)) {
    return BadFlag(
        flag, absl::StrCat("want a rate between 0 and 1, got \"", v, "\""));
  }
  *out = rate;
  return absl::OkStatus();
}

absl::Status ParseInt(absl::string_view flag, const std::string& v, int lo,
                      int hi, int* out) {
  int n = 0;
  if (!absl::SimpleAtoi(v, &n) || n < lo || n > hi) {
    return BadFlag(flag, absl::StrCat("want an integer in [", lo, ", ", hi,
                                      "], got \"", v, "\""));
  }
  *out = n;
  return absl::OkStatus();
}

absl::Status ParseStatusForType(const std::string& v, SinkOptions* o) {
  const size_t eq = v.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    return BadFlag("status-for-type", "want TYPE=CODE, e.g. order.voided=410");
  }
  int code = 0;
  OUTBOX_RETURN_IF_ERROR(
      ParseInt("status-for-type", v.substr(eq + 1), 200, 599, &code));
  o->faults.status_for_type[v.substr(0, eq)] = code;
  return absl::OkStatus();
}

std::map<std::string, Setter> Setters(SinkOptions* o) {
  std::map<std::string, Setter> s;
  s["port"] = [o](const std::string& v) {
    return ParseInt("port", v, 0, 65535, &o->port);
  };
  s["port-file"] = [o](const std::string& v) {
    o->port_file = v;
    return absl::OkStatus();
  };
  s["bind"] = [o](const std::string& v) {
    o->bind_address = v;
    return absl::OkStatus();
  };
  s["secret-file"] = [o](const std::string& v) {
    o->secret_file = v;
    return absl::OkStatus();
  };
  s["log"] = [o](const std::string& v) {
    o->log_path = v;
    return absl::OkStatus();
  };
  s["tls-cert"] = [o](const std::string& v) {
    o->tls_cert = v;
    return absl::OkStatus();
  };
  s["tls-key"] = [o](const std::string& v) {
    o->tls_key = v;
    return absl::OkStatus();
  };
  s["routes"] = [o](const std::string& v) {
    if (v.empty()) return BadFlag("routes", "want a file name");
    o->routes_path = v;
    return absl::OkStatus();
  };
  s["timestamp-tolerance"] = [o](const std::string& v) {
    int seconds = 0;
    OUTBOX_RETURN_IF_ERROR(
        ParseInt("timestamp-tolerance", v, 0, 1 << 30, &seconds));
    o->timestamp_tolerance = absl::Seconds(seconds);
    return absl::OkStatus();
  };
  s["drop-rate"] = [o](const std::string& v) {
    return ParseRate("drop-rate", v, &o->faults.drop_rate);
  };
  s["fail-rate"] = [o](const std::string& v) {
    return ParseRate("fail-rate", v, &o->faults.fail_rate);
  };
  s["fail-status"] = [o](const std::string& v) {
    return ParseInt("fail-status", v, 200, 599, &o->faults.fail_status);
  };
  s["throttle-rate"] = [o](const std::string& v) {
    return ParseRate("throttle-rate", v, &o->faults.throttle_rate);
  };
  s["retry-after"] = [o](const std::string& v) {
    // Sent as a header value: a line break would split the response.
    if (v.empty() || v.find_first_of("\r\n") != std::string::npos) {
      return BadFlag("retry-after", "want a non-empty single-line value");
    }
    o->faults.retry_after = v;
    return absl::OkStatus();
  };
  s["delay-ms"] = [o](const std::string& v) {
    int ms = 0;
    OUTBOX_RETURN_IF_ERROR(ParseInt("delay-ms", v, 0, 600000, &ms));
    o->faults.delay = absl::Milliseconds(ms);
    return absl::OkStatus();
  };
  s["status-for-type"] = [o](const std::string& v) {
    return ParseStatusForType(v, o);
  };
  s["type-header"] = [o](const std::string& v) {
    if (v.empty()) return BadFlag("type-header", "want a header name");
    o->faults.type_header = v;
    return absl::OkStatus();
  };
  s["seed"] = [o](const std::string& v) {
    uint64_t seed = 0;
    if (!absl::SimpleAtoi(v, &seed)) {
      return BadFlag("seed",
                     absl::StrCat("want an unsigned integer, got \"", v, "\""));
    }
    o->faults.seed = seed;
    return absl::OkStatus();
  };
  return s;
}

absl::Status CheckComplete(const SinkOptions& o) {
  if (o.port < 0) return BadFlag("port", "is required (0 picks a free port)");
  if (o.secret_file.empty()) return BadFlag("secret-file", "is required");
  if (o.log_path.empty()) return BadFlag("log", "is required");
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    return BadFlag("tls-cert", "--tls-cert and --tls-key go together");
  }
  const FaultOptions& f = o.faults;
  if (f.drop_rate + f.fail_rate + f.throttle_rate > 1.0 + 1e-9) {
    return BadFlag("drop-rate",
                   "--drop-rate + --fail-rate + --throttle-rate must be <= 1");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SinkOptions> ParseSinkFlags(
    const std::vector<std::string>& args) {
  SinkOptions options;
  const std::map<std::string, Setter> setters = Setters(&options);
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      return options;
    }
    if (!absl::ConsumePrefix(&arg, "--")) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", arg, "\" (see --help)"));
    }
    std::string name(arg);
    std::string value;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    auto setter = setters.find(name);
    if (setter == setters.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, " (see --help)"));
    }
    if (eq == std::string::npos) {
      if (i + 1 >= args.size()) return BadFlag(name, "needs a value");
      value = args[++i];
    }
    OUTBOX_RETURN_IF_ERROR(setter->second(value));
  }
  OUTBOX_RETURN_IF_ERROR(CheckComplete(options));
  return options;
}

std::string SinkUsage() {
  return absl::StrCat(
      R"(outbox-sink: a webhook receiver for tests and demos of edge-outbox.

THIS IS A TEST RECEIVER. It logs every request BODY to --log in clear text,
keeps its duplicate set and the answers it replays only in memory, and
answers with faults on purpose.
Do not point production traffic at it. It never logs the secrets.

Usage:
  outbox-sink --port P --secret-file F --log FILE [options]

Required:
  --port P                 TCP port; 0 picks a free one (see --port-file).
  --secret-file F          Standard Webhooks secrets, one "whsec_<base64>" per
                           line (several = rotation: any one may sign). Blank
                           lines and lines starting with '#' are ignored. The
                           file must be private to its owner (chmod 600), as
                           the agent requires of its secrets files.
  --log FILE               Appends one JSON line per request, written before
                           the response leaves (so a client that got an
                           answer can read its line). "seq" restarts at 1 in
                           each run.
Listening:
  --bind ADDR              Address to listen on. Default: 127.0.0.1.
  --port-file F            Written (atomically) with the bound port once the
                           socket accepts connections. Also printed on stdout.
  --tls-cert C --tls-key K Serve HTTPS with this PEM certificate and key.
Verification:
  --timestamp-tolerance S  Max |now - webhook-timestamp| in seconds. Default:
                           300, as the spec recommends.
Faults (one random draw per request; the three rates must add up to <= 1):
  --drop-rate R            Close the connection after reading the request,
                           without answering (sent but not acknowledged).
  --fail-rate R            Answer --fail-status (default 503).
  --throttle-rate R        Answer 429 with "Retry-After: --retry-after".
  --retry-after V          Retry-After value, sent verbatim. Default: 1.
  --delay-ms N             Wait N ms before answering or dropping any request
                           (a batch waits once): e.g. 100 to play a slow link.
  --seed N                 Seed for the draws (default: random, printed).
Fixed answers, checked before everything else:
  POST /status/NNN         Answers NNN (200..599); 429 carries Retry-After.
  --status-for-type T=CODE Answer CODE when header --type-header equals T.
                           Repeatable.
  --type-header NAME       Default: x-event-type.
Services (answers per method and path, e.g. seed 003's inventory, fraud
check, shipping and billing: tools/sink/testdata/seed003_routes.json):
  --routes FILE            JSON, // and /* */ comments allowed:
                             {"routes": [{"route": "POST /api/billing",
                                          "status": 200, "body": {...},
                                          "fail": {...}}, ...]}
                           "route": METHOD (GET POST PUT PATCH DELETE) and a
                           path; a {NAME} segment matches any one segment
                           (percent-decoded). The first route that matches
                           answers; with --routes, a request no route
                           matches is answered 404.
                           "status": 200..599, default 200.
                           "body": a JSON template (none: the status as
                           text). In its strings, {uuid} is a fresh UUID
                           (one per request), {counter} the route's request
                           count (1, 2...), {path:NAME} the {NAME} segment,
                           {request:/POINTER} the value at that JSON pointer
                           (RFC 6901) in the request body. A string that is
                           one placeholder becomes the value with its type;
                           values are inserted as JSON, never pasted. A
                           request without the value is answered 500
                           {"error": ...}, logged as route_error.
                           "fail": {"when": "/POINTER", "in": [values...],
                           "status": S, "body": {...}}: answer S (and that
                           body) when the request's value there is listed.

Otherwise: an invalid or missing signature, or a timestamp outside the
tolerance, is answered 401; a valid one by its route, or 200 without
--routes (a duplicate, i.e. a webhook-id already processed in this run, is
answered again and logged with "duplicate":true; a dropped request counts as
processed, since a drop stands for an answer lost on the way back). POST is
always routed, other methods only if a route uses them; the rest get
httplib's 404 (not logged). Every routed request must be signed, reverts too.

Batches (the agent's batched HTTP): a POST with "Content-Type:
application/x-ndjson" and an "outbox-event-ids: id1,id2,..." header carries
one JSON line per event: {"id", "type", "ordering_key" (optional),
"content_type", "data" (the payload as text) or "data_base64"}. The ids of
the lines must be the header's, in order (and "outbox-batch-size", if sent,
their number), else the batch is answered 400 and nothing is logged. The
signature covers the whole body under the batch's webhook-id. The batch is
answered once: one fault draw, one --delay-ms; --status-for-type applies
when any event's type is listed (the first such decides). It is logged as
one line per event, in order, as if each had come alone (id, type,
content_type and body are the event's, "duplicate" is per event id), with
batch_id (the batch's webhook-id) and batch_size.

Resends, with --routes: as an idempotent service does, a request with the
webhook-id, method and path of one a route answered 2xx gets that first
answer again, byte for byte (status, body, content type; {counter} does not
advance, {uuid} is not drawn again). A non-2xx answer is not remembered: a
retry after it is answered afresh. The sink keeps the last )",
      kRememberedAnswers, R"( answers (an
older one is forgotten: its resend is answered afresh), in memory only: a
restarted sink forgets them all.

Log line fields: seq, id, webhook_timestamp, ts_ms (receive time), method,
path, signature_valid, signature_error, duplicate, action ("answer" or
"drop"), status (0 when dropped), idempotency_key, content_type, route (the
--routes entry matched, or null), route_error, response (the body sent, or
null when dropped), type (the --type-header value, or a batched event's
type), batch_id and batch_size (null unless the event came in a batch), and
body (or body_base64 when the body is not UTF-8).

Exit status: 0 after SIGTERM/SIGINT, 2 for bad flags or an unusable secret
or routes file, 1 when the log, certificates or port cannot be used.
)");
}

}  // namespace outbox::sink
