// Copyright (c) edge-outbox authors.

#include "agent/clock_trust.h"

#include "absl/strings/str_cat.h"

namespace outbox {
namespace {

std::string Format(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

}  // namespace

bool ClockTrust::Update(absl::Time now, absl::Time mark,
                        std::optional<bool> synchronized) {
  std::string why;
  if (tolerance_ > absl::ZeroDuration() && mark != absl::InfinitePast() &&
      now < mark - tolerance_) {
    why = absl::StrCat(
        "the wall clock (", Format(now), ") is ",
        absl::FormatDuration(absl::Trunc(mark - now, absl::Seconds(1))),
        " behind the newest time this store has seen (", Format(mark),
        "), more than clock_tolerance (", absl::FormatDuration(tolerance_),
        ")");
  } else if (require_synchronized_ && synchronized.has_value() &&
             !*synchronized) {
    why = absl::StrCat("the kernel says the wall clock (", Format(now),
                       ") is not synchronized, and "
                       "require_synchronized_clock is set");
  }
  const bool trusted = why.empty();
  if (trusted == trusted_) return false;
  trusted_ = trusted;
  if (!trusted) {
    why_ = std::move(why);
  } else {
    why_ = absl::StrCat("the wall clock (", Format(now),
                        ") can be trusted again; it was not because ", why_);
  }
  return true;
}

}  // namespace outbox
