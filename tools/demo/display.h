// Copyright (c) edge-outbox authors.
//
// Where the demo talks: story events as lines, and a live progress line,
// rewritten in place ('\r') on a terminal and printed as a plain line at
// most once per `plain_interval` otherwise (a log or a CI job).

#ifndef OUTBOX_TOOLS_DEMO_DISPLAY_H_
#define OUTBOX_TOOLS_DEMO_DISPLAY_H_

#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace outbox::demo {

// One till in the progress line.
struct TillLive {
  std::string name;
  std::string state;      // offline, online, killed, drained, done
  int64_t pending = 0;    // committed, not yet answered 2xx
  int64_t delivered = 0;  // sales answered 2xx
  double rate = 0;        // sales newly answered 2xx per second, lately
};

// "[  4.2s] till-1 online 120p/280d 85/s | ... | total 280d 85/s".
std::string FormatLiveLine(absl::Duration elapsed,
                           const std::vector<TillLive>& tills);

// "[ 21.3s] saga till selling: 12 committed, 0 refunded | receiver 48
// requests".
std::string FormatSagaLiveLine(absl::Duration elapsed, absl::string_view state,
                               int64_t committed, int64_t refunded,
                               int64_t requests);

// Deliveries per second over the last `window`. REQUIRES: External
// synchronization.
class RateMeter {
 public:
  explicit RateMeter(absl::Duration window = absl::Seconds(2))
      : window_(window) {}
  // `count` so far, at `now` (non-decreasing).
  void Add(absl::Time now, int64_t count);
  double PerSecond() const;

 private:
  absl::Duration window_;
  std::deque<std::pair<absl::Time, int64_t>> samples_;
};

// REQUIRES: External synchronization.
class Display {
 public:
  // `columns`: the terminal's width (0: unknown); ignored unless
  // `terminal`.
  Display(std::FILE* out, bool terminal, int columns,
          absl::Duration plain_interval = absl::Seconds(1))
      : out_(out),
        terminal_(terminal),
        columns_(columns),
        plain_interval_(plain_interval) {}

  // A line of the story, "[  4.2s] text"; on a terminal the live line is
  // cleared first and drawn again after it.
  void Event(absl::Duration elapsed, absl::string_view text);
  // A plain line, no time stamp (the table at the end).
  void Print(absl::string_view text);
  // The progress line, as FormatLiveLine made it.
  void Live(absl::Time now, const std::string& line);
  // Leaves the live line as it is and moves below it.
  void EndLive();

 private:
  void Draw();

  std::FILE* const out_;
  const bool terminal_;
  const int columns_;
  const absl::Duration plain_interval_;
  std::string live_;
  bool live_shown_ = false;
  absl::Time last_plain_ = absl::InfinitePast();
};

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_DISPLAY_H_
