// Copyright (c) edge-outbox authors.

#include "tools/json_fields.h"

#include "nlohmann/json.hpp"

namespace outbox {
namespace {

// Member `key` of `object`, or nullptr (also when it is not an object).
const nlohmann::json* Member(const nlohmann::json& object,
                             absl::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

nlohmann::json Parse(absl::string_view text) {
  return nlohmann::json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                               /*allow_exceptions=*/false);
}

}  // namespace

std::optional<std::string> JsonField(absl::string_view line,
                                     absl::string_view key) {
  const nlohmann::json object = Parse(line);
  const nlohmann::json* member = Member(object, key);
  if (member == nullptr) return std::nullopt;
  return member->dump();
}

std::string JsonString(absl::string_view line, absl::string_view key) {
  const nlohmann::json object = Parse(line);
  const nlohmann::json* member = Member(object, key);
  if (member == nullptr || !member->is_string()) return "";
  return member->get<std::string>();
}

}  // namespace outbox
