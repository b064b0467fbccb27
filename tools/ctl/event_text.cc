// Copyright (c) edge-outbox authors.
//
// The human forms of events (see event_format.h). Every stored string goes
// through Quote() or IsSafeForTerminal(): the store's bytes come from other
// programs and must not drive the operator's terminal.

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/ctl/event_format.h"
#include "tools/ctl/text.h"

namespace outbox::ctl {
namespace {

// The fields `list` shows for every event, after id/seq and before the
// state-specific ones.
std::string CommonFields(const PendingEvent& e) {
  return absl::StrCat(" type=", Quote(e.type), " key=", Quote(e.ordering_key),
                      " dest=", Quote(e.destination), " attempts=", e.attempts);
}

// The last attempt's error is what the receiver answered ("HTTP 503",
// "PUBACK: ...", "Kafka: ...") or why no answer came, for every kind of
// destination; an HTTP status follows only when there was one, so that an
// MQTT or Kafka event does not read as if an HTTP receiver never answered.
std::string LastFailure(const PendingEvent& e) {
  std::string out = absl::StrCat(" last_error=", Quote(e.last_error));
  if (e.last_http_status != 0) {
    absl::StrAppend(&out, " http=", e.last_http_status);
  }
  return out;
}

void AppendEventFields(const PendingEvent& e, std::string* out) {
  AddField(out, "seq", absl::StrCat(e.seq));
  AddField(out, "type", Quote(e.type));
  AddField(out, "content type", Quote(e.content_type));
  AddField(out, "ordering key", Quote(e.ordering_key));
  AddField(
      out, "destination",
      e.destination.empty() ? "\"\" (routed by type)" : Quote(e.destination));
  AddField(out, "idempotency key", Quote(e.idempotency_key));
  AddField(out, "created", FormatTimeOr(e.created, "-"));
  AddField(out, "attempts", absl::StrCat(e.attempts));
  AddField(out, "first attempt", FormatTimeOr(e.first_attempt, "none"));
  AddField(out, "last error", Quote(e.last_error));
  if (e.last_http_status != 0) {  // as in LastFailure
    AddField(out, "last HTTP status", absl::StrCat(e.last_http_status));
  }
}

void AppendPayload(absl::string_view payload, std::string* out) {
  if (payload.empty()) {
    *out += "  payload:          (empty)\n";
    return;
  }
  AppendBody("  ", "payload", payload, /*truncated=*/false, out);
}

}  // namespace

void AddField(std::string* out, absl::string_view label,
              absl::string_view value) {
  absl::StrAppendFormat(out, "  %-17s %s\n", absl::StrCat(label, ":"), value);
}

void AppendBody(absl::string_view indent, absl::string_view label,
                absl::string_view body, bool truncated, std::string* out) {
  const absl::string_view cut = truncated ? ", truncated" : "";
  if (IsSafeForTerminal(body, /*allow_newlines=*/true)) {
    absl::StrAppend(out, indent, label, " (", body.size(), " bytes", cut,
                    "):\n", body,
                    body.empty() || body.back() == '\n' ? "" : "\n");
    return;
  }
  absl::StrAppend(out, indent, label, " (", body.size(), " bytes", cut,
                  ", not printable text; base64):\n", absl::Base64Escape(body),
                  "\n");
}

std::string HttpStatusText(int status) {
  return status == 0 ? "-" : absl::StrCat(status);
}

std::string PendingLine(const PendingEvent& e) {
  return absl::StrCat(Quote(e.id), " seq=", e.seq, CommonFields(e),
                      " next=", FormatTimeOr(e.next_attempt, "now"),
                      LastFailure(e), "\n");
}

std::string DeadLine(const DeadLetter& d) {
  const PendingEvent& e = d.event;
  if (d.undecodable) {
    return absl::StrCat(Quote(e.id), " seq=", e.seq,
                        " undecodable dead_at=", FormatTimeOr(d.dead_at, "-"),
                        " reason=", Quote(d.reason), "\n");
  }
  return absl::StrCat(Quote(e.id), " seq=", e.seq, CommonFields(e),
                      " dead_at=", FormatTimeOr(d.dead_at, "-"),
                      " reason=", Quote(d.reason), LastFailure(e), "\n");
}

std::string PendingDetail(const PendingEvent& e) {
  std::string out = absl::StrCat("pending event ", Quote(e.id), "\n");
  AppendEventFields(e, &out);
  AddField(&out, "next attempt", FormatTimeOr(e.next_attempt, "now"));
  AppendPayload(e.payload, &out);
  return out;
}

std::string DeadDetail(const DeadLetter& d) {
  std::string out = absl::StrCat("dead letter ", Quote(d.event.id), "\n");
  if (d.undecodable) {
    out +=
        "  (undecodable: the stored entry could not be decoded; its raw bytes "
        "are kept in the store and it cannot be replayed)\n";
    AddField(&out, "seq", absl::StrCat(d.event.seq));
  } else {
    AppendEventFields(d.event, &out);
  }
  AddField(&out, "dead at", FormatTimeOr(d.dead_at, "-"));
  AddField(&out, "reason", Quote(d.reason));
  if (!d.undecodable) AppendPayload(d.event.payload, &out);
  return out;
}

}  // namespace outbox::ctl
