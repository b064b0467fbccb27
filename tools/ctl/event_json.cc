// Copyright (c) edge-outbox authors.
//
// The --json forms of events (see event_format.h).

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tools/ctl/event_format.h"
#include "tools/ctl/text.h"
#include "tools/json_bytes.h"

namespace outbox::ctl {
namespace {

void SetEventMembers(const PendingEvent& e, bool with_payload,
                     nlohmann::ordered_json* j) {
  SetBytes("id", e.id, j);
  (*j)["seq"] = e.seq;
  SetBytes("type", e.type, j);
  SetBytes("content_type", e.content_type, j);
  SetBytes("ordering_key", e.ordering_key, j);
  SetBytes("destination", e.destination, j);
  SetBytes("idempotency_key", e.idempotency_key, j);
  SetTime("created", e.created, j);
  (*j)["attempts"] = e.attempts;
  SetTime("first_attempt", e.first_attempt, j);
  SetBytes("last_error", e.last_error, j);
  (*j)["last_http_status"] = nullptr;  // no HTTP answer
  if (e.last_http_status != 0) (*j)["last_http_status"] = e.last_http_status;
  if (with_payload) {
    (*j)["payload_bytes"] = e.payload.size();
    SetBytes("payload", e.payload, j);
  }
}

}  // namespace

void SetTime(absl::string_view name, absl::Time t,
             nlohmann::ordered_json* object) {
  nlohmann::ordered_json text;  // null
  nlohmann::ordered_json unix_ms;
  if (t != absl::InfinitePast() && t != absl::InfiniteFuture()) {
    text = FormatRfc3339(t);
    unix_ms = absl::ToUnixMillis(t);
  }
  (*object)[std::string(name)] = std::move(text);
  (*object)[absl::StrCat(name, "_unix_ms")] = std::move(unix_ms);
}

nlohmann::ordered_json PendingJson(const PendingEvent& e, bool with_payload) {
  nlohmann::ordered_json j = {{"state", "pending"}};
  SetEventMembers(e, with_payload, &j);
  SetTime("next_attempt", e.next_attempt, &j);
  return j;
}

nlohmann::ordered_json DeadJson(const DeadLetter& d, bool with_payload) {
  nlohmann::ordered_json j = {{"state", "dead"},
                              {"undecodable", d.undecodable}};
  if (d.undecodable) {
    // Only the id and seq of an undecodable entry mean anything.
    SetBytes("id", d.event.id, &j);
    j["seq"] = d.event.seq;
  } else {
    SetEventMembers(d.event, with_payload, &j);
  }
  SetTime("dead_at", d.dead_at, &j);
  SetBytes("reason", d.reason, &j);
  return j;
}

}  // namespace outbox::ctl
