// Copyright (c) edge-outbox authors.
//
// One destination of the agent configuration: name, URL, secrets, timeouts,
// headers, TLS, proxy and retry overrides.

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/config/files.h"
#include "agent/config/internal.h"
#include "base/status_macros.h"
#include "platform/http_token.h"
#include "proto/agent_config.pb.h"
#include "webhooks/signature.h"

namespace outbox::config_internal {
namespace {

using google::protobuf::FieldDescriptor;
using Bound = Checker::Bound;

// The proxy kinds libcurl speaks.
constexpr std::initializer_list<absl::string_view> kProxySchemes = {
    "http", "https", "socks4", "socks4a", "socks5", "socks5h"};

// What is wrong with `url` as a URL of one of `schemes`, as a phrase after
// "it", or "" when nothing is. Only what a transport would otherwise reject
// later is checked; the rest is the receiver's business.
std::string UrlProblem(absl::string_view url,
                       std::initializer_list<absl::string_view> schemes) {
  for (char ch : url) {
    if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f) {
      return "contains whitespace or control characters";
    }
  }
  const size_t end = url.find("://");
  const std::string scheme = absl::AsciiStrToLower(
      url.substr(0, end == absl::string_view::npos ? 0 : end));
  if (std::find(schemes.begin(), schemes.end(), scheme) == schemes.end()) {
    std::string expected;
    for (absl::string_view s : schemes) {
      absl::StrAppend(&expected, expected.empty() ? "" : ", ", s, "://");
    }
    return absl::StrCat("does not start with ", expected);
  }
  const absl::string_view rest = url.substr(end + 3);
  if (rest.substr(0, rest.find_first_of("/?#")).empty()) return "has no host";
  return "";
}

// Headers the agent sets itself: a configured copy would contradict the
// signature, the idempotency contract, the body's framing or a batch's list
// of events.
bool IsReservedHeader(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  return absl::StartsWith(lower, "webhook-") || lower == "content-type" ||
         lower == "content-length" || lower == "idempotency-key" ||
         lower == "host" || lower == "transfer-encoding" ||
         lower == "content-encoding" || lower == "outbox-event-ids" ||
         lower == "outbox-batch-size";
}

// What is wrong with configured header `name`, or "" if nothing; `seen`
// collects the (case-folded) names so far.
std::string HeaderNameProblem(const std::string& name,
                              absl::flat_hash_set<std::string>* seen) {
  if (!IsHttpToken(name)) {
    // Not quoted: a key and value written the wrong way round would put the
    // value (a credential, say) here.
    return absl::StrCat(
        "the key is not a valid header name (letters, digits and ",
        kHttpTokenPunctuation, " only)");
  }
  if (IsReservedHeader(name)) {
    return absl::StrCat("header \"", name,
                        "\" is set by the agent and cannot be configured");
  }
  if (!seen->insert(absl::AsciiStrToLower(name)).second) {
    return absl::StrCat("header \"", name,
                        "\" given twice (names are case-insensitive, and "
                        "count over headers and header_files)");
  }
  return "";
}

// `headers` (values inline) and `header_files` (values read from files kept
// private, for credentials), under one set of name rules.
absl::Status ParseHeaders(const Checker& c, const Node& node,
                          Destination* out) {
  absl::flat_hash_set<std::string> seen;
  for (const absl::string_view field : {"headers", "header_files"}) {
    // Read through reflection: it lists map entries in the order written, so
    // each error can name the entry's line. Values are never quoted, and
    // neither are value-file paths (a value may sit where its path belongs).
    const FieldDescriptor* fd = c.Field(node, field);
    const auto* reflection = node.message->GetReflection();
    for (int i = 0; i < reflection->FieldSize(*node.message, fd); ++i) {
      const Node entry = c.Child(node, field, i);
      const auto* er = entry.message->GetReflection();
      const std::string name =
          er->GetString(*entry.message, c.Field(entry, "key"));
      std::string value =
          er->GetString(*entry.message, c.Field(entry, "value"));
      const std::string problem = HeaderNameProblem(name, &seen);
      if (!problem.empty()) return c.Error(node, field, i, problem);
      if (field == "headers") {
        if (absl::StrContains(value, '\r') || absl::StrContains(value, '\n') ||
            absl::StrContains(value, '\0')) {
          return c.Error(node, field, i,
                         absl::StrCat("value of header \"", name,
                                      "\" contains CR, LF or NUL"));
        }
      } else {
        absl::StatusOr<std::string> path =
            value.empty()
                ? absl::InvalidArgumentError("needs the path of its value file")
                : c.Resolve(value);
        absl::StatusOr<std::string> read =
            path.ok() ? config_files::ReadHeaderValueFile(*path)
                      : path.status();
        if (!read.ok()) {
          return c.Error(
              node, field, i,
              absl::StrCat("header \"", name, "\": ", read.status().message()),
              read.status().code());
        }
        value = *std::move(read);
      }
      out->headers.emplace_back(name, std::move(value));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseTls(const Checker& c, const Node& node, TlsOptions* tls) {
  const auto& in = static_cast<const config::Tls&>(*node.message);
  struct File {
    absl::string_view field;
    const std::string& path;
    std::string* resolved;
    bool directory;
  };
  const File files[] = {
      {"ca_file", in.ca_file(), &tls->ca_file, false},
      {"ca_dir", in.ca_dir(), &tls->ca_dir, true},
      {"client_cert_file", in.client_cert_file(), &tls->client_cert_file,
       false},
      {"client_key_file", in.client_key_file(), &tls->client_key_file, false}};
  // Checked now rather than at the first TLS handshake, which may be days
  // later on a device that boots offline.
  for (const File& file : files) {
    if (file.path.empty()) continue;
    absl::StatusOr<std::string> resolved = c.Resolve(file.path);
    if (!resolved.ok()) return c.Wrap(node, file.field, resolved.status());
    *file.resolved = *std::move(resolved);
    absl::Status readable =
        config_files::CheckReadable(*file.resolved, file.directory);
    if (!readable.ok()) return c.Wrap(node, file.field, readable);
  }
  if (!in.client_key_file().empty() && in.client_cert_file().empty()) {
    return c.Error(node, "client_key_file", -1,
                   "needs client_cert_file (the certificate it belongs to)");
  }
  tls->verify_peer = tls->verify_host = !in.insecure_skip_verify();
  return absl::OkStatus();
}

// The HTTP fields of `node` (an outbox.config.Destination without `mqtt`):
// URL, secrets, timeout, headers and proxy.
absl::Status ParseHttpDestination(const Checker& c, const Node& node,
                                  Destination* out) {
  const auto& in = static_cast<const config::Destination&>(*node.message);
  out->url = in.url();
  if (out->url.empty()) {
    return c.Error(node, "url", -1,
                   "is required: the http:// or https:// URL events are "
                   "POSTed to (or `mqtt`, a broker to publish them to)");
  }
  if (absl::StrContains(out->url, '@')) {
    // Not quoted: the part before '@' may well be a password.
    return c.Error(node, "url", -1,
                   "must not contain credentials (user:password@): URLs "
                   "appear in logs; send them in a header kept in a file "
                   "(`header_files`) instead");
  }
  const std::string url_problem = UrlProblem(out->url, {"http", "https"});
  if (!url_problem.empty()) {
    return c.Error(node, "url", -1,
                   absl::StrCat("\"", absl::CEscape(out->url),
                                "\" is not an http(s) URL: it ", url_problem));
  }
  if (!in.secrets_file().empty()) {
    if (absl::StrContains(in.secrets_file(), "whsec_")) {
      return c.Error(node, "secrets_file", -1,
                     "holds a secret instead of the path of a file of "
                     "secrets; put the secret in a file (chmod 600) and name "
                     "that file here");
    }
    absl::StatusOr<std::string> path = c.Resolve(in.secrets_file());
    if (!path.ok()) return c.Wrap(node, "secrets_file", path.status());
    out->secrets_file = *std::move(path);
    absl::StatusOr<std::vector<WebhookSecret>> secrets =
        ReadSecretsFile(out->secrets_file);
    if (!secrets.ok()) return c.Wrap(node, "secrets_file", secrets.status());
    out->secrets = *std::move(secrets);
  }
  OUTBOX_RETURN_IF_ERROR(
      c.Duration(node, "timeout", Bound::kPositive, &out->timeout));
  OUTBOX_RETURN_IF_ERROR(ParseHeaders(c, node, out));
  out->proxy = in.proxy();
  if (!out->proxy.empty() && !UrlProblem(out->proxy, kProxySchemes).empty()) {
    // Not quoted: proxy URLs may carry credentials, and curl takes them.
    return c.Error(node, "proxy", -1,
                   absl::StrCat("is not a proxy URL like \"http://host:3128\" "
                                "or \"socks5h://host:1080\": it ",
                                UrlProblem(out->proxy, kProxySchemes)));
  }
  return absl::OkStatus();
}

absl::Status ParseBatch(const Checker& c, const Node& node,
                        BatchSettings* out) {
  const auto& in = static_cast<const config::Batch&>(*node.message);
  out->enabled = true;
  if (in.has_max_events()) {
    if (in.max_events() < 1 || in.max_events() > 10000) {
      return c.Error(node, "max_events", -1,
                     absl::StrCat("must be 1..10000, got ", in.max_events()));
    }
    out->max_events = static_cast<size_t>(in.max_events());
  }
  if (in.has_max_bytes()) {
    if (in.max_bytes() < 1024 || in.max_bytes() > (64 << 20)) {
      return c.Error(node, "max_bytes", -1,
                     absl::StrCat("must be 1024..67108864 (1 KiB..64 MiB), "
                                  "got ",
                                  in.max_bytes()));
    }
    out->max_bytes = static_cast<size_t>(in.max_bytes());
  }
  if (!in.compression().empty() && in.compression() != "none") {
    absl::StatusOr<BodyCoding> coding = ParseBodyCoding(in.compression());
    if (!coding.ok() || *coding == BodyCoding::kIdentity) {
      return c.Error(node, "compression", -1,
                     absl::StrCat("must be \"gzip\", \"zstd\" or \"none\", "
                                  "got \"",
                                  absl::CEscape(in.compression()), "\""));
    }
    out->compression = *coding;
  }
  return c.Duration(node, "max_wait", Bound::kNonNegative, &out->max_wait);
}

absl::Status ParseRateLimit(const Checker& c, const Node& node,
                            RateLimitSettings* out) {
  const auto& in = static_cast<const config::RateLimit&>(*node.message);
  // NaN fails `> 0` too.
  if (in.events_per_second() != 0 && !(in.events_per_second() > 0)) {
    return c.Error(node, "events_per_second", -1,
                   absl::StrCat("must be > 0, got ", in.events_per_second()));
  }
  if (in.bytes_per_second() < 0) {
    return c.Error(node, "bytes_per_second", -1,
                   absl::StrCat("must be > 0, got ", in.bytes_per_second()));
  }
  out->events_per_second = in.events_per_second();
  out->bytes_per_second = in.bytes_per_second();
  if (!out->enabled()) {
    return c.Error(node, "events_per_second", -1,
                   "rate_limit needs events_per_second or bytes_per_second");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RejectHttpFields(const Checker& c, const Node& node,
                              absl::string_view kind) {
  const auto& in = static_cast<const config::Destination&>(*node.message);
  const struct {
    absl::string_view field;
    bool set;
  } http_only[] = {
      {"url", !in.url().empty()},
      {"secrets_file", !in.secrets_file().empty()},
      {"timeout", !in.timeout().empty()},
      {"headers", !in.headers().empty()},
      {"header_files", !in.header_files().empty()},
      {"proxy", !in.proxy().empty()},
  };
  for (const auto& f : http_only) {
    if (!f.set) continue;
    return c.Error(node, f.field, -1,
                   absl::StrCat("is an HTTP setting and does not apply to a",
                                kind == "mqtt" ? "n" : "", " `", kind,
                                "` destination; remove one of the two"));
  }
  return absl::OkStatus();
}

absl::Status ReadPasswordFile(const Checker& c, const Node& node,
                              absl::string_view field, const std::string& path,
                              std::string* out) {
  absl::StatusOr<std::string> resolved = c.Resolve(path);
  absl::StatusOr<std::string> password =
      resolved.ok() ? config_files::ReadHeaderValueFile(*resolved)
                    : resolved.status();
  if (!password.ok()) return c.Wrap(node, field, password.status());
  *out = *std::move(password);
  return absl::OkStatus();
}

// Destination.answers, into out->retry.answers.
absl::Status ParseAnswers(const Checker& c, const Node& node,
                          Destination* out) {
  const auto& in = static_cast<const config::Destination&>(*node.message);
  if (in.answers().empty()) return absl::OkStatus();
  if (out->kind == Destination::Kind::kKafka) {
    return c.Error(node, "answers", -1,
                   "applies to HTTP and MQTT destinations (Kafka's answers "
                   "are error classes, read as docs/transports.md says)");
  }
  const bool mqtt = out->kind == Destination::Kind::kMqtt;
  for (const auto& [status, meaning] : in.answers()) {
    if (mqtt ? (status < 0x80 || status > 0xFF)
             : (status < 300 || status > 599)) {
      return c.Error(
          node, "answers", -1,
          absl::StrCat(mqtt ? "PUBACK reason code " : "status ", status,
                       " cannot be given a meaning: use ",
                       mqtt ? "128..255 (0x80..0xFF; a success code is always "
                              "delivered)"
                            : "300..599 (a 2xx is always delivered)"));
    }
    absl::StatusOr<DeliveryOutcome> outcome = ParseAnswerOutcome(meaning);
    if (!outcome.ok()) {
      return c.Error(
          node, "answers", -1,
          absl::StrCat("status ", status, ": ", outcome.status().message()));
    }
    out->retry.answers[status] = *outcome;
  }
  return absl::OkStatus();
}

bool IsName(absl::string_view name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(), [](char ch) {
           return absl::ascii_isalnum(ch) || ch == '_' || ch == '.' ||
                  ch == '-';
         });
}

absl::Status ParseDestination(const Checker& c, const Node& node,
                              const RetryPolicy& global, Destination* out) {
  const auto& in = static_cast<const config::Destination&>(*node.message);
  out->name = in.name();
  if (out->name.empty()) return c.Error(node, "name", -1, "is required");
  if (!IsName(out->name)) {
    return c.Error(node, "name", -1,
                   absl::StrCat("\"", absl::CEscape(out->name),
                                "\" is not a name: 1..64 characters of "
                                "[A-Za-z0-9_.-] are required"));
  }
  if (in.has_mqtt() && in.has_kafka()) {
    return c.Error(node, "kafka", -1,
                   "and `mqtt` are both set; a destination is one of the two");
  }
  if ((in.has_mqtt() || in.has_kafka()) && in.has_batch()) {
    return c.Error(node, "batch", -1,
                   "applies to HTTP destinations only (each MQTT publish "
                   "and each Kafka record is one event)");
  }
  if (in.has_mqtt()) {
    OUTBOX_RETURN_IF_ERROR(ParseMqttDestination(c, node, out));
  } else if (in.has_kafka()) {
    OUTBOX_RETURN_IF_ERROR(ParseKafkaDestination(c, node, out));
  } else {
    OUTBOX_RETURN_IF_ERROR(ParseHttpDestination(c, node, out));
    if (in.has_batch()) {
      OUTBOX_RETURN_IF_ERROR(
          ParseBatch(c, c.Child(node, "batch", -1), &out->batch));
    }
  }
  OUTBOX_RETURN_IF_ERROR(c.Duration(node, "connect_timeout", Bound::kPositive,
                                    &out->connect_timeout));
  if (out->kind == Destination::Kind::kHttp &&
      out->timeout < out->connect_timeout) {
    return c.Error(node, "timeout", -1,
                   absl::StrCat("must be >= connect_timeout (",
                                absl::FormatDuration(out->connect_timeout),
                                "): it bounds the whole request"));
  }
  OUTBOX_RETURN_IF_ERROR(ParseTls(c, c.Child(node, "tls", -1), &out->tls));
  if (in.has_rate_limit()) {
    OUTBOX_RETURN_IF_ERROR(
        ParseRateLimit(c, c.Child(node, "rate_limit", -1), &out->rate_limit));
  }
  if (in.has_dead_letter_fuse()) {
    if (in.dead_letter_fuse() < 0 || in.dead_letter_fuse() > 1000000) {
      return c.Error(node, "dead_letter_fuse", -1,
                     "must be 0 (no fuse) to 1000000 dead letters in a row");
    }
    out->dead_letter_fuse = in.dead_letter_fuse();
  }
  out->retry = global;
  OUTBOX_RETURN_IF_ERROR(
      ApplyRetry(c, c.Child(node, "retry", -1), &out->retry));
  return ParseAnswers(c, node, out);
}

}  // namespace outbox::config_internal
