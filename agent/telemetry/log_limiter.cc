// Copyright (c) edge-outbox authors.

#include "agent/telemetry/log_limiter.h"

namespace outbox {

LogLimiter::LogLimiter(int burst, absl::Duration window)
    : burst_(burst), window_(window) {}

bool LogLimiter::Admit(LogEvent event, absl::string_view destination,
                       absl::Time now, Held* held) {
  held->count = 0;
  Window& w = windows_[Key(event, std::string(destination))];
  if (w.written == 0 || now - w.start >= window_) {
    if (w.held > 0) {
      *held = Held{event, std::string(destination), w.held, w.last - w.start};
    }
    w = Window{now, now, 0, 0};
  }
  w.last = now;
  if (w.written < burst_) {
    ++w.written;
    return true;
  }
  ++w.held;
  return false;
}

std::vector<LogLimiter::Held> LogLimiter::TakeHeld() {
  std::vector<Held> held;
  for (auto& [key, w] : windows_) {
    if (w.held > 0) {
      held.push_back(Held{key.first, key.second, w.held, w.last - w.start});
    }
  }
  windows_.clear();
  return held;
}

}  // namespace outbox
