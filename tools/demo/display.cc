// Copyright (c) edge-outbox authors.

#include "tools/demo/display.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace outbox::demo {
namespace {

constexpr char kClearLine[] = "\r\x1b[K";  // to column 0, erase the line

std::string Stamp(absl::Duration elapsed) {
  return absl::StrFormat("[%6.1fs] ", absl::ToDoubleSeconds(elapsed));
}

}  // namespace

std::string FormatLiveLine(absl::Duration elapsed,
                           const std::vector<TillLive>& tills) {
  std::string line = Stamp(elapsed);
  int64_t delivered = 0;
  double rate = 0;
  for (const TillLive& t : tills) {
    absl::StrAppendFormat(&line, "%s %s %dp/%dd %.0f/s | ", t.name, t.state,
                          t.pending, t.delivered, t.rate);
    delivered += t.delivered;
    rate += t.rate;
  }
  absl::StrAppendFormat(&line, "total %dd %.0f/s", delivered, rate);
  return line;
}

std::string FormatSagaLiveLine(absl::Duration elapsed, absl::string_view state,
                               int64_t committed, int64_t refunded,
                               int64_t requests) {
  return absl::StrFormat(
      "%ssaga till %s: %d committed, %d refunded | receiver %d requests",
      Stamp(elapsed), state, committed, refunded, requests);
}

void RateMeter::Add(absl::Time now, int64_t count) {
  samples_.emplace_back(now, count);
  while (samples_.size() > 2 && now - samples_[1].first >= window_) {
    samples_.pop_front();
  }
}

double RateMeter::PerSecond() const {
  if (samples_.size() < 2) return 0;
  const double seconds =
      absl::ToDoubleSeconds(samples_.back().first - samples_.front().first);
  if (seconds <= 0) return 0;
  return static_cast<double>(samples_.back().second - samples_.front().second) /
         seconds;
}

void Display::Event(absl::Duration elapsed, absl::string_view text) {
  if (terminal_ && live_shown_) std::fputs(kClearLine, out_);
  std::fputs(absl::StrCat(Stamp(elapsed), text, "\n").c_str(), out_);
  if (terminal_ && live_shown_) Draw();
  std::fflush(out_);
}

void Display::Print(absl::string_view text) {
  std::fputs(absl::StrCat(text, "\n").c_str(), out_);
  std::fflush(out_);
}

void Display::Live(absl::Time now, const std::string& line) {
  live_ = line;
  if (terminal_) {
    Draw();
  } else if (now - last_plain_ >= plain_interval_) {
    last_plain_ = now;
    Print(line);
  }
  std::fflush(out_);
}

void Display::EndLive() {
  if (terminal_ && live_shown_) std::fputs("\n", out_);
  live_shown_ = false;
  std::fflush(out_);
}

void Display::Draw() {
  std::string shown = live_;
  // A line wider than the terminal wraps, and '\r' would then rewrite only
  // its last row.
  if (columns_ > 1 && shown.size() >= static_cast<size_t>(columns_)) {
    shown.resize(static_cast<size_t>(columns_) - 1);
  }
  std::fputs(absl::StrCat(kClearLine, shown).c_str(), out_);
  live_shown_ = true;
}

}  // namespace outbox::demo
