// Copyright (c) edge-outbox authors.
//
// EventClasses: Options::event_classes checked once at Open and compiled for
// the two questions the store asks per event: which class a type belongs to
// (most specific pattern: exact, then the longest "prefix.*", then "*", as
// routes match), and what that class allows. Lanes cache the answer, so a
// type is classified once per lane, not once per event.

#ifndef OUTBOX_LIB_EVENT_CLASSES_H_
#define OUTBOX_LIB_EVENT_CLASSES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "outbox/options.h"

namespace outbox {

class EventClasses {
 public:
  // Class ids: kNone for a type no class names, else 1 + the class's index
  // in Options::event_classes.
  static constexpr uint16_t kNone = 0;

  // Errors: kInvalidArgument naming the class and field (a bad name or
  // pattern, a pattern listed twice, priority outside 0..9, a fiscal class
  // that could lose events, kDropOldest or expire_after without evictable,
  // kDropOldest without a limit).
  static absl::StatusOr<EventClasses> Make(
      const std::vector<EventClass>& classes);
  EventClasses() = default;

  uint16_t Classify(absl::string_view type) const;
  // nullptr for kNone.
  const EventClass* Get(uint16_t id) const {
    return id == kNone || id > classes_.size() ? nullptr : &classes_[id - 1];
  }
  int Priority(uint16_t id) const {
    const EventClass* c = Get(id);
    return c == nullptr ? 0 : c->priority;
  }
  // Whether the store must know the class's oldest pending events (it may
  // evict or expire them).
  bool NeedsOrder(uint16_t id) const {
    const EventClass* c = Get(id);
    return c != nullptr && (c->on_full == EventClass::OnFull::kDropOldest ||
                            c->expire_after > absl::ZeroDuration());
  }
  // Number of ids, kNone included.
  size_t size() const { return classes_.size() + 1; }
  // "class NAME", or "no class", for messages.
  std::string Describe(uint16_t id) const;

 private:
  std::vector<EventClass> classes_;
  absl::flat_hash_map<std::string, uint16_t> exact_;
  std::vector<std::pair<std::string, uint16_t>> prefixes_;  // longest first
  uint16_t any_ = kNone;
};

}  // namespace outbox

#endif  // OUTBOX_LIB_EVENT_CLASSES_H_
