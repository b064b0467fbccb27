// Copyright (c) edge-outbox authors.
//
// What outbox-sink's routes answered, so that a resent request gets its
// first answer again, as an idempotent service gives it: a resent "reserve
// stock" step is told the reservation id it was given, not a new one.

#ifndef OUTBOX_TOOLS_SINK_ANSWER_MEMORY_H_
#define OUTBOX_TOOLS_SINK_ANSWER_MEMORY_H_

#include <cstddef>
#include <deque>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "tools/sink/routes.h"

namespace outbox::sink {

// How many answers a sink remembers; past that the oldest is forgotten. A
// seed 003 saga sends a handful of requests per order, so a test stays far
// below it; the bound keeps a long demo's memory flat (answers are small
// JSON bodies: some tens of MB at most).
inline constexpr size_t kRememberedAnswers = 100000;

// The request an answer belongs to. The webhook-id alone would do (a step
// and its revert are different events), but an id resent to another path is
// another request, not a resend.
struct AnswerKey {
  std::string webhook_id;
  std::string method;
  std::string path;  // As sent: IncomingRequest::raw_path.

  friend bool operator==(const AnswerKey& a, const AnswerKey& b) {
    return std::tie(a.webhook_id, a.method, a.path) ==
           std::tie(b.webhook_id, b.method, b.path);
  }
  template <typename H>
  friend H AbslHashValue(H h, const AnswerKey& key) {
    return H::combine(std::move(h), key.webhook_id, key.method, key.path);
  }
};

// The last `capacity` answers remembered, by key, in memory only (a
// restarted sink forgets them all). The oldest is forgotten first, counted
// from when it was remembered, not from when it was last replayed.
// REQUIRES: External synchronization (Receiver holds its mutex).
class AnswerMemory {
 public:
  explicit AnswerMemory(size_t capacity = kRememberedAnswers)
      : capacity_(capacity) {}

  // The answer remembered for `key`, or nullptr. Valid until the next
  // Remember.
  const RouteAnswer* Find(const AnswerKey& key) const;

  // Remembers `answer` for `key` unless an answer is remembered for it
  // already (the first one stays), then forgets the oldest beyond capacity.
  void Remember(AnswerKey key, RouteAnswer answer);

 private:
  const size_t capacity_;
  absl::flat_hash_map<AnswerKey, RouteAnswer> answers_;
  std::deque<AnswerKey> oldest_first_;  // The keys of answers_.
};

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_ANSWER_MEMORY_H_
