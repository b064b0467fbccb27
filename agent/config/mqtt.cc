// Copyright (c) edge-outbox authors.
//
// The `mqtt` part of a destination: the broker URL, client id, topic
// template, credentials and session settings.

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/config/files.h"
#include "agent/config/internal.h"
#include "base/status_macros.h"
#include "platform/mqtt_topic.h"
#include "proto/agent_config.pb.h"

namespace outbox::config_internal {
namespace {

using Bound = Checker::Bound;

// Reads "mqtt://host[:port]" or "mqtts://host[:port]" into `*out`; returns
// what is wrong with it as a phrase after "it", or "".
std::string ParseBroker(absl::string_view url, MqttSettings* out) {
  for (char ch : url) {
    if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f) {
      return "contains whitespace or control characters";
    }
  }
  absl::string_view rest = url;
  if (absl::ConsumePrefix(&rest, "mqtts://")) {
    out->use_tls = true;
    out->port = 8883;
  } else if (absl::ConsumePrefix(&rest, "mqtt://")) {
    out->use_tls = false;
    out->port = 1883;
  } else {
    return "does not start with mqtt:// or mqtts://";
  }
  if (absl::StrContains(rest, '@')) return "carries credentials";
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find_first_of("/?#") != absl::string_view::npos) {
    return "has a path (the topic goes in `topic`)";
  }
  // "[::1]:1883" or "host:1883": the port follows the last ':' outside
  // brackets.
  const size_t bracket = rest.rfind(']');
  const size_t colon = rest.rfind(':');
  absl::string_view host = rest;
  if (colon != absl::string_view::npos &&
      (bracket == absl::string_view::npos || colon > bracket)) {
    host = rest.substr(0, colon);
    int port = 0;
    if (!absl::SimpleAtoi(rest.substr(colon + 1), &port) || port < 1 ||
        port > 65535) {
      return "has a port that is not 1..65535";
    }
    out->port = port;
  }
  if (absl::ConsumePrefix(&host, "[") && !absl::ConsumeSuffix(&host, "]")) {
    return "has an unclosed '['";
  }
  if (host.empty()) return "has no host";
  out->host = std::string(host);
  return "";
}

bool IsClientId(absl::string_view id) {
  return !id.empty() && id.size() <= 128 &&
         std::all_of(id.begin(), id.end(), [](char ch) {
           return absl::ascii_isalnum(ch) || ch == '_' || ch == '.' ||
                  ch == ':' || ch == '-';
         });
}

absl::Status ParseMqttSession(const Checker& c, const Node& node,
                              MqttSettings* out) {
  absl::Duration keepalive = absl::Seconds(out->keepalive_seconds);
  OUTBOX_RETURN_IF_ERROR(
      c.Duration(node, "keepalive", Bound::kPositive, &keepalive));
  if (keepalive < absl::Seconds(5) || keepalive > absl::Seconds(65535) ||
      keepalive != absl::Trunc(keepalive, absl::Seconds(1))) {
    return c.Error(node, "keepalive", -1,
                   "must be whole seconds from 5s to 65535s (MQTT's limit)");
  }
  out->keepalive_seconds = static_cast<int>(absl::ToInt64Seconds(keepalive));
  OUTBOX_RETURN_IF_ERROR(c.Duration(node, "session_expiry", Bound::kNonNegative,
                                    &out->session_expiry));
  if (out->session_expiry > absl::Seconds(0xFFFFFFFEu)) {
    return c.Error(node, "session_expiry", -1,
                   "is longer than MQTT allows (4294967294s, ~136 years)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseMqttDestination(const Checker& c, const Node& node,
                                  Destination* out) {
  OUTBOX_RETURN_IF_ERROR(RejectHttpFields(c, node, "mqtt"));
  const Node mqtt = c.Child(node, "mqtt", -1);
  const auto& in = static_cast<const config::Mqtt&>(*mqtt.message);
  out->kind = Destination::Kind::kMqtt;
  MqttSettings& m = out->mqtt;
  if (in.broker().empty()) {
    return c.Error(mqtt, "broker", -1,
                   "is required: \"mqtt://host:port\" or "
                   "\"mqtts://host:port\"");
  }
  const std::string problem = ParseBroker(in.broker(), &m);
  if (!problem.empty()) {
    // Quoted only when it cannot hold a password.
    return c.Error(
        mqtt, "broker", -1,
        absl::StrCat(absl::StrContains(in.broker(), '@')
                         ? std::string("the broker URL")
                         : absl::StrCat("\"", absl::CEscape(in.broker()), "\""),
                     " is not an MQTT broker URL: it ", problem));
  }
  out->url = absl::StrCat(m.use_tls ? "mqtts://" : "mqtt://",
                          in.broker().substr(in.broker().find("://") + 3));
  m.client_id = in.client_id();
  if (!IsClientId(m.client_id)) {
    return c.Error(mqtt, "client_id", -1,
                   m.client_id.empty()
                       ? "is required: the broker keeps the session under it"
                       : "is not 1..128 characters of [A-Za-z0-9_.:-]");
  }
  absl::StatusOr<MqttTopicTemplate> topic =
      MqttTopicTemplate::Parse(in.topic(), {"device", "type"});
  if (!topic.ok()) return c.Wrap(mqtt, "topic", topic.status());
  m.topic = in.topic();
  m.username = in.username();
  if (!in.password_file().empty()) {
    OUTBOX_RETURN_IF_ERROR(ReadPasswordFile(c, mqtt, "password_file",
                                            in.password_file(), &m.password));
  }
  return ParseMqttSession(c, mqtt, &m);
}

}  // namespace outbox::config_internal
