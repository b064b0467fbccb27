// Copyright (c) edge-outbox authors.

#include "lib/event_classes.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace outbox {
namespace {

absl::Status Invalid(size_t i, const EventClass& c, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("Options::event_classes[", i,
                                                 "] (\"", absl::CEscape(c.name),
                                                 "\"): ", what));
}

bool ValidName(absl::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char ch) {
    return absl::ascii_isalnum(ch) || ch == '_' || ch == '.' || ch == '-';
  });
}

// Why class `c` could lose events it must not, or be unable to act; empty
// if its policy holds together.
std::string PolicyError(const EventClass& c) {
  const bool drops = c.on_full == EventClass::OnFull::kDropOldest;
  const bool expires = c.expire_after > absl::ZeroDuration();
  if (c.fiscal && (c.evictable || drops || expires || !c.keep_evicted)) {
    return "a fiscal class is never evicted nor expired: remove evictable, "
           "on_full drop_oldest, expire_after and keep_evicted false";
  }
  if ((drops || expires) && !c.evictable) {
    return "on_full drop_oldest and expire_after give events up undelivered; "
           "they need evictable: true";
  }
  if (drops && c.max_pending_events == 0 && c.max_pending_bytes == 0) {
    return "on_full drop_oldest needs max_pending_events or "
           "max_pending_bytes (the class's own limit)";
  }
  if (c.expire_after < absl::ZeroDuration()) {
    return "expire_after must be >= 0 (0: never)";
  }
  if (c.priority < 0 || c.priority > 9) return "priority must be 0..9";
  return "";
}

}  // namespace

absl::StatusOr<EventClasses> EventClasses::Make(
    const std::vector<EventClass>& classes) {
  if (classes.size() >= 0xFFFF) {
    return absl::InvalidArgumentError("Options::event_classes: too many");
  }
  EventClasses out;
  out.classes_ = classes;
  absl::flat_hash_set<std::string> names, patterns;
  for (size_t i = 0; i < classes.size(); ++i) {
    const EventClass& c = classes[i];
    const uint16_t id = static_cast<uint16_t>(i + 1);
    if (!ValidName(c.name)) {
      return Invalid(i, c, "a name is 1..64 characters of [A-Za-z0-9_.-]");
    }
    if (!names.insert(c.name).second) return Invalid(i, c, "name used twice");
    if (std::string why = PolicyError(c); !why.empty()) {
      return Invalid(i, c, why);
    }
    if (c.event_types.empty()) return Invalid(i, c, "no event_types");
    for (const std::string& type : c.event_types) {
      absl::string_view literal = type;
      if (type == "*") {
        literal = "";
        out.any_ = id;
      } else if (absl::EndsWith(type, ".*") && type.size() > 2) {
        literal = absl::string_view(type).substr(0, type.size() - 1);
        out.prefixes_.emplace_back(std::string(literal), id);
      } else {
        out.exact_.emplace(type, id);
      }
      if (type.empty() || absl::StrContains(literal, '*')) {
        return Invalid(i, c,
                       absl::StrCat("\"", absl::CEscape(type),
                                    "\" is not an event type pattern: write "
                                    "an exact type, a prefix like "
                                    "\"telemetry.*\", or \"*\""));
      }
      if (!patterns.insert(type).second) {
        return Invalid(i, c,
                       absl::StrCat("\"", absl::CEscape(type),
                                    "\" is already in another class"));
      }
    }
  }
  std::stable_sort(out.prefixes_.begin(), out.prefixes_.end(),
                   [](const auto& a, const auto& b) {
                     return a.first.size() > b.first.size();
                   });
  return out;
}

uint16_t EventClasses::Classify(absl::string_view type) const {
  if (auto it = exact_.find(type); it != exact_.end()) return it->second;
  for (const auto& [prefix, id] : prefixes_) {
    if (absl::StartsWith(type, prefix)) return id;
  }
  return any_;
}

std::string EventClasses::Describe(uint16_t id) const {
  const EventClass* c = Get(id);
  return c == nullptr ? "no class" : absl::StrCat("class ", c->name);
}

}  // namespace outbox
