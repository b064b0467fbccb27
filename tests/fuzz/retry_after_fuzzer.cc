// Copyright (c) edge-outbox authors.
//
// Fuzzes what the agent reads from a receiver's response and the numbers it
// derives from it: ParseRetryAfter, ParseHttpDate (agent/retry/http_date.h),
// and RetryDelay, BackoffDelay, Classify and GiveUp
// (agent/retry/retry_policy.h).
//
// Input: the Retry-After value, then optionally '\n' and bytes that choose
// `now`, a retry policy, a retry count, an HTTP status and attempt counts
// (FuzzedDataProvider). A header line alone (the seeds) runs with the default
// policy and a fixed `now`.
//
// Properties checked besides "no crash, no sanitizer report":
//   - all-digit values always parse, to at most 2^31 s; results are >= 0;
//   - a value that is an HTTP-date gives max(date - now, 0);
//   - a parsed date prints back (IMF-fixdate) to a string that parses to the
//     same instant (for years curl_getdate reads: 1583..9999 here);
//   - delays stay within [0, cap] and honour the Retry-After floor;
//   - GiveUp obeys its attempt and clock-backwards rules.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "agent/retry/http_date.h"
#include "agent/retry/retry_policy.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using outbox::DeliveryOutcome;
using outbox::RetryPolicy;

// 2024-03-01 12:00:00 UTC: `now` for inputs that do not choose one.
constexpr int64_t kDefaultNowUnixSeconds = 1709294400;

// Any duration, with the special values (zero, negative, infinite) and
// realistic ones all reachable in a byte or two.
absl::Duration FuzzDuration(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0:
      return absl::Seconds(in.ConsumeIntegralInRange<int64_t>(-5, 100000));
    case 1:
      return absl::Nanoseconds(in.ConsumeIntegral<int64_t>());
    case 2:
      return absl::Seconds(in.ConsumeIntegral<int64_t>());
    case 3:
      return absl::InfiniteDuration();
    default:
      return -absl::InfiniteDuration();
  }
}

absl::Time FuzzTime(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0:
      return absl::FromUnixSeconds(kDefaultNowUnixSeconds) + FuzzDuration(in);
    case 1:
      return absl::FromUnixNanos(in.ConsumeIntegral<int64_t>());
    case 2:
      return absl::FromUnixSeconds(in.ConsumeIntegral<int64_t>());
    case 3:
      return absl::InfinitePast();
    default:
      return absl::InfiniteFuture();
  }
}

RetryPolicy FuzzPolicy(FuzzedDataProvider& in) {
  RetryPolicy policy;
  if (in.ConsumeBool()) policy.base_delay = FuzzDuration(in);
  if (in.ConsumeBool()) policy.max_delay = FuzzDuration(in);
  if (in.ConsumeBool()) policy.max_attempts = in.ConsumeIntegral<int>();
  if (in.ConsumeBool()) policy.max_age = FuzzDuration(in);
  if (in.ConsumeBool()) policy.max_retry_after = FuzzDuration(in);
  return policy;
}

// IMF-fixdate of `t`, or "" when its year does not fit the 4-digit field or
// is before 1583, which curl_getdate refuses (the Gregorian calendar's
// start) although a zone offset can move a date it read there.
std::string ImfFixdate(absl::Time t) {
  static constexpr std::array<const char*, 7> kDays = {
      "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  static constexpr std::array<const char*, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun",
      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const absl::CivilSecond cs = absl::ToCivilSecond(t, absl::UTCTimeZone());
  if (cs.year() < 1583 || cs.year() > 9999) return "";
  return absl::StrFormat("%s, %02d %s %04d %02d:%02d:%02d GMT",
                         kDays[static_cast<int>(absl::GetWeekday(cs))],
                         cs.day(), kMonths[cs.month() - 1], cs.year(),
                         cs.hour(), cs.minute(), cs.second());
}

bool AllDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

void CheckHeader(absl::string_view header, absl::Time now) {
  const absl::StatusOr<absl::Duration> delay =
      outbox::ParseRetryAfter(header, now);
  if (delay.ok()) {
    FUZZ_CHECK(*delay >= absl::ZeroDuration(), "negative Retry-After delay");
  } else {
    FUZZ_CHECK(
        delay.status().code() == absl::StatusCode::kInvalidArgument,
        "ParseRetryAfter failed with a code other than kInvalidArgument");
  }
  const absl::string_view value = absl::StripAsciiWhitespace(header);
  if (AllDigits(value)) {
    FUZZ_CHECK(delay.ok(), "delta-seconds rejected");
    FUZZ_CHECK(*delay <= absl::Seconds(int64_t{1} << 31),
               "delta-seconds above 2^31 s");
    return;  // Delta-seconds, even where curl would read digits as a date.
  }

  const absl::StatusOr<absl::Time> date = outbox::ParseHttpDate(value);
  if (!date.ok()) {
    FUZZ_CHECK(date.status().code() == absl::StatusCode::kInvalidArgument,
               "ParseHttpDate failed with a code other than kInvalidArgument");
    return;
  }
  FUZZ_CHECK(*date != absl::InfinitePast() && *date != absl::InfiniteFuture(),
             "an HTTP-date parsed to an infinite time");
  FUZZ_CHECK(delay.ok(), "an HTTP-date is not a valid Retry-After");
  FUZZ_CHECK(*delay == std::max(*date - now, absl::ZeroDuration()),
             "Retry-After date does not give max(date - now, 0)");
  const std::string printed = ImfFixdate(*date);
  if (!printed.empty()) {
    const absl::StatusOr<absl::Time> again = outbox::ParseHttpDate(printed);
    FUZZ_CHECK(again.ok(), "a printed IMF-fixdate does not parse");
    FUZZ_CHECK(*again == *date, "HTTP-date does not survive print and parse");
  }
}

void CheckSchedule(FuzzedDataProvider& in, absl::string_view header,
                   absl::Time now) {
  const RetryPolicy policy = FuzzPolicy(in);
  const bool valid = outbox::ValidateRetryPolicy(policy).ok();
  const int retry = in.ConsumeBool() ? in.ConsumeIntegral<int>()
                                     : in.ConsumeIntegralInRange<int>(0, 80);
  std::optional<absl::Duration> retry_after;
  if (in.ConsumeBool()) {
    retry_after = FuzzDuration(in);
  } else {
    absl::StatusOr<absl::Duration> parsed =
        outbox::ParseRetryAfter(header, now);
    if (parsed.ok()) retry_after = *parsed;
  }
  // Seeded from the input so that a saved crash replays the same draws.
  std::mt19937_64 gen(in.ConsumeIntegral<uint64_t>());

  const absl::Duration cap = std::max(policy.max_delay, absl::ZeroDuration());
  const absl::Duration backoff = outbox::BackoffDelay(policy, retry, gen);
  FUZZ_CHECK(backoff >= absl::ZeroDuration(), "negative backoff");
  FUZZ_CHECK(backoff <= cap, "backoff above max_delay");
  if (valid && retry <= 0) {
    FUZZ_CHECK(backoff <= policy.base_delay, "first backoff above base_delay");
  }

  const absl::Duration delay =
      outbox::RetryDelay(policy, retry, retry_after, gen);
  const absl::Duration retry_after_cap =
      std::max(policy.max_retry_after, absl::ZeroDuration());
  FUZZ_CHECK(delay >= absl::ZeroDuration(), "negative retry delay");
  FUZZ_CHECK(delay <= std::max(cap, retry_after_cap),
             "retry delay above both caps");
  if (retry_after.has_value()) {
    FUZZ_CHECK(delay >= std::clamp(*retry_after, absl::ZeroDuration(),
                                   retry_after_cap),
               "retry delay below the capped Retry-After");
  }

  const int status = in.ConsumeIntegral<int>();
  const DeliveryOutcome outcome = outbox::Classify(status);
  FUZZ_CHECK(outbox::DeliveryOutcomeName(outcome) != "unknown",
             "Classify returned an unnamed outcome");
  FUZZ_CHECK((status >= 200 && status <= 299) ==
                 (outcome == DeliveryOutcome::kDelivered),
             "2xx and only 2xx must be delivered");

  const int attempts = in.ConsumeIntegral<int>();
  const absl::Time previous = FuzzTime(in);
  const absl::Duration age = absl::Milliseconds(in.ConsumeIntegral<int64_t>());
  const absl::Duration next_age =
      outbox::NextRetryAge(age, previous, now, policy);
  const absl::Duration longest =
      std::max(policy.max_delay, policy.max_retry_after);
  if (valid && age >= absl::ZeroDuration()) {
    // One gap, whatever the clocks say, adds between nothing and the
    // longest wait the policy can schedule. Durations saturate: an age near
    // the largest finite one (~292 billion years) plus such a wait becomes
    // infinite, which GiveUp treats as past any max_age.
    FUZZ_CHECK(next_age >= age, "a retry age went down");
    FUZZ_CHECK(
        next_age == absl::InfiniteDuration() || next_age - age <= longest,
        "one gap aged an event by more than the longest wait");
  }
  const bool give_up = outbox::GiveUp(attempts, next_age, policy);
  if (attempts >= policy.max_attempts) {
    FUZZ_CHECK(give_up, "attempt limit reached but GiveUp is false");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const absl::string_view header = input.substr(0, newline);
  const absl::string_view rest = newline == absl::string_view::npos
                                     ? absl::string_view()
                                     : input.substr(newline + 1);
  FuzzedDataProvider in(reinterpret_cast<const uint8_t*>(rest.data()),
                        rest.size());
  const absl::Time now = in.ConsumeBool()
                             ? FuzzTime(in)
                             : absl::FromUnixSeconds(kDefaultNowUnixSeconds);
  CheckHeader(header, now);
  CheckSchedule(in, header, now);
  return 0;
}
