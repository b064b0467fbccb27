// Copyright (c) edge-outbox authors.
//
// MqttTopicTemplate: an MQTT topic with placeholders, such as
// "fleet/{device}/events/{type}", checked once when it is parsed and filled
// in per event.
//
// The template must be a valid topic name to publish to: not empty, no empty
// level ("a//b", a leading or trailing '/'), no '+' or '#' (wildcards belong
// to subscriptions), no '$' at the start (broker topics), no NUL, only
// placeholders it was told about, braces balanced.
//
// Values are rejected, never escaped: a value containing '/', '+', '#' or
// NUL, or an empty one, is kInvalidArgument. Escaping would make topics that
// subscribers cannot map back to the value, and would let a value add levels
// a broker's ACL never meant to allow; a device name or event type with a
// '/' is a configuration mistake to fix, not to hide.

#ifndef OUTBOX_PLATFORM_MQTT_TOPIC_H_
#define OUTBOX_PLATFORM_MQTT_TOPIC_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace outbox {

// Immutable after Parse; safe for concurrent use.
class MqttTopicTemplate {
 public:
  // Parses `text`, whose placeholders ("{name}") must each be one of
  // `known`. Errors: kInvalidArgument naming what is wrong and where.
  static absl::StatusOr<MqttTopicTemplate> Parse(
      absl::string_view text, const std::vector<std::string>& known);

  // The topic with every placeholder replaced by values[name].
  // Errors: kInvalidArgument if a placeholder has no value, or a value is
  // empty or contains '/', '+', '#' or NUL (the message names the
  // placeholder, not the value: values may be customer data).
  absl::StatusOr<std::string> Expand(
      const absl::flat_hash_map<std::string, std::string>& values) const;

  const std::string& text() const { return text_; }

 private:
  struct Piece {
    bool placeholder;
    std::string text;  // literal text, or the placeholder's name
  };

  MqttTopicTemplate(std::string text, std::vector<Piece> pieces)
      : text_(std::move(text)), pieces_(std::move(pieces)) {}

  std::string text_;
  std::vector<Piece> pieces_;
};

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_MQTT_TOPIC_H_
