// Copyright (c) edge-outbox authors.

#include "agent/telemetry/drain_rate.h"

#include <algorithm>

namespace outbox {
namespace {

int64_t SecondOf(absl::Time t) { return absl::ToUnixSeconds(t); }

}  // namespace

void DrainRate::Expire(Window* w, absl::Time now) const {
  const int64_t oldest = SecondOf(now - window_);
  while (!w->buckets.empty() && w->buckets.front().first <= oldest) {
    w->buckets.pop_front();
  }
}

void DrainRate::OnDelivered(absl::string_view destination, uint64_t events,
                            absl::Time now) {
  Window& w = by_destination_[destination];
  Expire(&w, now);
  if (w.buckets.empty()) w.since = now;  // delivering again after a pause
  const int64_t second = SecondOf(now);
  if (w.buckets.empty() || w.buckets.back().first != second) {
    w.buckets.emplace_back(second, 0);
  }
  w.buckets.back().second += events;
}

double DrainRate::PerSecond(absl::string_view destination,
                            absl::Time now) const {
  auto it = by_destination_.find(destination);
  if (it == by_destination_.end()) return 0;
  const Window& w = it->second;
  const int64_t oldest = SecondOf(now - window_);
  uint64_t events = 0;
  for (const auto& [second, n] : w.buckets) {
    if (second > oldest) events += n;
  }
  if (events == 0) return 0;
  const absl::Duration span =
      std::clamp(now - w.since, absl::Seconds(1), window_);
  return static_cast<double>(events) / absl::ToDoubleSeconds(span);
}

absl::Duration DrainEta(uint64_t pending, double per_second) {
  if (pending == 0) return absl::ZeroDuration();
  if (per_second <= 0) return absl::InfiniteDuration();
  return absl::Seconds(static_cast<double>(pending) / per_second);
}

}  // namespace outbox
