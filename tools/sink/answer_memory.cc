// Copyright (c) edge-outbox authors.

#include "tools/sink/answer_memory.h"

namespace outbox::sink {

const RouteAnswer* AnswerMemory::Find(const AnswerKey& key) const {
  const auto it = answers_.find(key);
  return it == answers_.end() ? nullptr : &it->second;
}

void AnswerMemory::Remember(AnswerKey key, RouteAnswer answer) {
  if (!answers_.try_emplace(key, std::move(answer)).second) return;
  oldest_first_.push_back(std::move(key));
  while (oldest_first_.size() > capacity_) {
    answers_.erase(oldest_first_.front());
    oldest_first_.pop_front();
  }
}

}  // namespace outbox::sink
