// Copyright (c) edge-outbox authors.

#include "platform/mqtt_topic.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace outbox {
namespace {

// MQTT 5 §1.5.4: a UTF-8 string is at most 65,535 bytes.
constexpr size_t kMaxTopicBytes = 65535;

absl::Status Invalid(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("MQTT topic template \"", text, "\": ", why));
}

// The checks on the template's shape that do not depend on placeholders.
absl::Status CheckShape(absl::string_view text) {
  if (text.empty()) return Invalid(text, "is empty");
  if (text.size() > kMaxTopicBytes) {
    return Invalid("...", "is longer than 65535 bytes");
  }
  if (text.find('\0') != absl::string_view::npos) {
    return Invalid("...", "contains a NUL byte");
  }
  if (text.find_first_of("+#") != absl::string_view::npos) {
    return Invalid(text,
                   "contains '+' or '#': wildcards are for subscriptions, a "
                   "publish needs one topic name");
  }
  if (text[0] == '$') {
    return Invalid(text,
                   "starts with '$', which brokers reserve for their "
                   "own topics");
  }
  for (absl::string_view level : absl::StrSplit(text, '/')) {
    if (level.empty()) {
      return Invalid(text,
                     "has an empty level (a leading, trailing or double '/')");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MqttTopicTemplate> MqttTopicTemplate::Parse(
    absl::string_view text, const std::vector<std::string>& known) {
  if (absl::Status shape = CheckShape(text); !shape.ok()) return shape;
  std::vector<Piece> pieces;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find_first_of("{}", pos);
    if (open == absl::string_view::npos) {
      pieces.push_back({false, std::string(text.substr(pos))});
      break;
    }
    if (text[open] == '}') return Invalid(text, "has a '}' without a '{'");
    if (open > pos)
      pieces.push_back({false, std::string(text.substr(pos, open - pos))});
    const size_t close = text.find_first_of("{}/", open + 1);
    if (close == absl::string_view::npos || text[close] != '}') {
      return Invalid(text, "has a '{' without a '}' in the same level");
    }
    std::string name(text.substr(open + 1, close - open - 1));
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return Invalid(
          text, absl::StrCat("has an unknown placeholder {", name,
                             "}; known: {", absl::StrJoin(known, "}, {"), "}"));
    }
    pieces.push_back({true, std::move(name)});
    pos = close + 1;
  }
  return MqttTopicTemplate(std::string(text), std::move(pieces));
}

absl::StatusOr<std::string> MqttTopicTemplate::Expand(
    const absl::flat_hash_map<std::string, std::string>& values) const {
  std::string topic;
  for (const Piece& piece : pieces_) {
    if (!piece.placeholder) {
      topic += piece.text;
      continue;
    }
    auto it = values.find(piece.text);
    if (it == values.end() || it->second.empty()) {
      return Invalid(text_, absl::StrCat("no value for {", piece.text, "}"));
    }
    if (it->second.find_first_of(std::string("/+#\0", 4)) !=
        std::string::npos) {
      return Invalid(text_, absl::StrCat("the value of {", piece.text,
                                         "} contains '/', '+', '#' or NUL, "
                                         "which would change the topic's "
                                         "levels or make it a wildcard"));
    }
    topic += it->second;
  }
  if (topic.size() > kMaxTopicBytes) {
    return Invalid(text_, "expands to more than 65535 bytes");
  }
  return topic;
}

}  // namespace outbox
