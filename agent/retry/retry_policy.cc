// Copyright (c) edge-outbox authors.

#include "agent/retry/retry_policy.h"

#include <algorithm>
#include <cstdint>

#include "absl/random/distributions.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/retry/http_date.h"

namespace outbox {
namespace {

// RFC 9111 section 1.2.2: a delta-seconds too large to represent is read as
// 2^31 seconds (about 68 years): "forever" for any caller, and finite.
constexpr int64_t kMaxDeltaSeconds = int64_t{1} << 31;

// min(max_delay, base_delay * 2^retry) without overflow, for any inputs.
absl::Duration BackoffCeiling(const RetryPolicy& policy, int retry) {
  const absl::Duration cap = std::max(policy.max_delay, absl::ZeroDuration());
  absl::Duration ceiling = std::max(policy.base_delay, absl::ZeroDuration());
  // Doubling stops at the cap, so this runs at most ~64 times whatever
  // `retry` is, and never multiplies past the cap.
  for (int i = 0; i < retry && ceiling < cap && ceiling > absl::ZeroDuration();
       ++i) {
    ceiling *= 2;
  }
  return std::min(ceiling, cap);
}

bool AllDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

}  // namespace

absl::Status ValidateRetryPolicy(const RetryPolicy& policy) {
  if (policy.base_delay <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("RetryPolicy.base_delay must be > 0");
  }
  if (policy.max_delay < policy.base_delay) {
    return absl::InvalidArgumentError(
        "RetryPolicy.max_delay must be >= base_delay");
  }
  if (policy.max_attempts < 1) {
    return absl::InvalidArgumentError("RetryPolicy.max_attempts must be >= 1");
  }
  if (policy.max_age <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("RetryPolicy.max_age must be > 0");
  }
  if (policy.max_retry_after < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "RetryPolicy.max_retry_after must be >= 0");
  }
  return absl::OkStatus();
}

absl::Duration BackoffDelay(const RetryPolicy& policy, int retry,
                            absl::BitGenRef gen) {
  const absl::Duration ceiling = BackoffCeiling(policy, retry);
  // Drawn in whole nanoseconds; an infinite cap saturates to ~292 years.
  const int64_t ceiling_ns = absl::ToInt64Nanoseconds(ceiling);
  if (ceiling_ns <= 0) return absl::ZeroDuration();
  return absl::Nanoseconds(
      absl::Uniform(absl::IntervalClosedClosed, gen, int64_t{0}, ceiling_ns));
}

absl::Duration RetryDelay(const RetryPolicy& policy, int retry,
                          std::optional<absl::Duration> retry_after,
                          absl::BitGenRef gen) {
  const absl::Duration backoff = BackoffDelay(policy, retry, gen);
  if (!retry_after.has_value()) return backoff;
  const absl::Duration asked =
      std::clamp(*retry_after, absl::ZeroDuration(),
                 std::max(policy.max_retry_after, absl::ZeroDuration()));
  return std::max(backoff, asked);
}

absl::StatusOr<absl::Duration> ParseRetryAfter(absl::string_view header,
                                               absl::Time now) {
  const absl::string_view value = absl::StripAsciiWhitespace(header);
  if (value.empty()) {
    return absl::InvalidArgumentError("Retry-After is empty");
  }
  if (AllDigits(value)) {
    int64_t seconds = 0;
    // Only overflow makes SimpleAtoi fail on all-digit input.
    if (!absl::SimpleAtoi(value, &seconds) || seconds > kMaxDeltaSeconds) {
      seconds = kMaxDeltaSeconds;
    }
    return absl::Seconds(seconds);
  }
  absl::StatusOr<absl::Time> date = ParseHttpDate(value);
  if (!date.ok()) {
    // The value is the receiver's, not a secret; show a bounded prefix so
    // the operator can see what the receiver sent.
    return absl::InvalidArgumentError(absl::StrCat(
        "Retry-After is neither delta-seconds nor an HTTP-date: \"",
        absl::CHexEscape(value.substr(0, 64)), "\""));
  }
  return std::max(*date - now, absl::ZeroDuration());
}

DeliveryOutcome Classify(int http_status) {
  if (http_status >= 200 && http_status <= 299) {
    return DeliveryOutcome::kDelivered;
  }
  if (http_status == 401 || http_status == 403) {
    return DeliveryOutcome::kHoldDestination;
  }
  if (http_status == 410) return DeliveryOutcome::kPauseDestination;
  if (http_status == 408 || http_status == 425 || http_status == 429) {
    return DeliveryOutcome::kRetry;
  }
  if (http_status >= 500 && http_status <= 599) return DeliveryOutcome::kRetry;
  if (http_status >= 300 && http_status <= 499) {
    return DeliveryOutcome::kDeadLetter;
  }
  return DeliveryOutcome::kRetry;  // Not a valid final status: a broken hop.
}

DeliveryOutcome ClassifyFor(int http_status, const RetryPolicy& policy) {
  auto it = policy.answers.find(http_status);
  return it != policy.answers.end() ? it->second : Classify(http_status);
}

DeliveryOutcome ClassifyPubackFor(int reason_code, DeliveryOutcome table,
                                  const RetryPolicy& policy) {
  if (reason_code < 0x80) return table;  // success: always delivered
  auto it = policy.answers.find(reason_code);
  return it != policy.answers.end() ? it->second : table;
}

absl::StatusOr<DeliveryOutcome> ParseAnswerOutcome(absl::string_view name) {
  if (name == "retry") return DeliveryOutcome::kRetry;
  if (name == "dead_letter") return DeliveryOutcome::kDeadLetter;
  if (name == "hold") return DeliveryOutcome::kHoldDestination;
  if (name == "pause") return DeliveryOutcome::kPauseDestination;
  return absl::InvalidArgumentError(absl::StrCat(
      "\"", absl::CHexEscape(name.substr(0, 32)),
      "\" is not an answer's meaning: use retry, dead_letter, hold or pause"));
}

absl::string_view DeliveryOutcomeName(DeliveryOutcome outcome) {
  switch (outcome) {
    case DeliveryOutcome::kDelivered:
      return "delivered";
    case DeliveryOutcome::kRetry:
      return "retry";
    case DeliveryOutcome::kPauseDestination:
      return "pause_destination";
    case DeliveryOutcome::kDeadLetter:
      return "dead_letter";
    case DeliveryOutcome::kHoldDestination:
      return "hold_destination";
  }
  return "unknown";
}

bool GiveUp(int attempts, absl::Duration retry_age, const RetryPolicy& policy) {
  return attempts >= policy.max_attempts || retry_age >= policy.max_age;
}

absl::Duration NextRetryAge(absl::Duration age, absl::Time previous,
                            absl::Time now, const RetryPolicy& policy) {
  if (previous == absl::InfinitePast()) return age;
  const absl::Duration longest =
      std::max(policy.max_delay, policy.max_retry_after);
  // Infinite times subtract to infinite durations, which clamp sanely.
  const absl::Duration gap =
      std::clamp(now - previous, absl::ZeroDuration(), longest);
  return age + gap;
}

}  // namespace outbox
