// Copyright (c) edge-outbox authors.
//
// The --json forms of events (see event_format.h).

#include "absl/strings/string_view.h"
#include "tools/ctl/event_format.h"

namespace outbox::ctl {
namespace {

void WriteEventMembers(const PendingEvent& e, bool with_payload,
                       JsonWriter* w) {
  w->Bytes("id", e.id).Key("seq").Uint(e.seq);
  w->Bytes("type", e.type)
      .Bytes("content_type", e.content_type)
      .Bytes("ordering_key", e.ordering_key)
      .Bytes("destination", e.destination)
      .Bytes("idempotency_key", e.idempotency_key)
      .Time("created", e.created)
      .Key("attempts")
      .Uint(e.attempts)
      .Time("first_attempt", e.first_attempt)
      .Bytes("last_error", e.last_error)
      .Key("last_http_status");
  if (e.last_http_status == 0) {
    w->Null();
  } else {
    w->Int(e.last_http_status);
  }
  if (with_payload) {
    w->Key("payload_bytes").Uint(e.payload.size()).Bytes("payload", e.payload);
  }
}

}  // namespace

void WritePendingJson(const PendingEvent& e, bool with_payload, JsonWriter* w) {
  w->BeginObject().Key("state").String("pending");
  WriteEventMembers(e, with_payload, w);
  w->Time("next_attempt", e.next_attempt).EndObject();
}

void WriteDeadJson(const DeadLetter& d, bool with_payload, JsonWriter* w) {
  w->BeginObject().Key("state").String("dead");
  w->Key("undecodable").Bool(d.undecodable);
  if (d.undecodable) {
    // Only the id and seq of an undecodable entry mean anything.
    w->Bytes("id", d.event.id).Key("seq").Uint(d.event.seq);
  } else {
    WriteEventMembers(d.event, with_payload, w);
  }
  w->Time("dead_at", d.dead_at).Bytes("reason", d.reason).EndObject();
}

}  // namespace outbox::ctl
