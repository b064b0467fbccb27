// Copyright (c) edge-outbox authors.

#include "agent/http_date.h"

#include <array>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/civil_time.h"

namespace outbox {
namespace {

constexpr std::array<absl::string_view, 7> kShortDays = {
    "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::array<absl::string_view, 7> kLongDays = {
    "Monday", "Tuesday",  "Wednesday", "Thursday",
    "Friday", "Saturday", "Sunday"};
constexpr std::array<absl::string_view, 12> kMonths = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun",
    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// The fields of a date as written, before validation.
struct Fields {
  int year = 0;
  int month = 0;  // 1..12
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
};

// A forward-only reader over the input. Every method consumes input only
// when it matches, and returns whether it did.
class Cursor {
 public:
  explicit Cursor(absl::string_view text) : rest_(text) {}

  bool Literal(absl::string_view literal) {
    if (!absl::StartsWith(rest_, literal)) return false;
    rest_.remove_prefix(literal.size());
    return true;
  }

  // Exactly `count` ASCII digits.
  bool Digits(int count, int* value) {
    if (rest_.size() < static_cast<size_t>(count)) return false;
    int result = 0;
    for (int i = 0; i < count; ++i) {
      const char c = rest_[i];
      if (c < '0' || c > '9') return false;
      result = result * 10 + (c - '0');
    }
    rest_.remove_prefix(count);
    *value = result;
    return true;
  }

  // One of `names`; `*index` is its position.
  template <size_t N>
  bool OneOf(const std::array<absl::string_view, N>& names, int* index) {
    for (size_t i = 0; i < N; ++i) {
      if (Literal(names[i])) {
        *index = static_cast<int>(i);
        return true;
      }
    }
    return false;
  }

  bool Done() const { return rest_.empty(); }

 private:
  absl::string_view rest_;
};

bool Month(Cursor& in, Fields* f) {
  int index = 0;
  if (!in.OneOf(kMonths, &index)) return false;
  f->month = index + 1;
  return true;
}

// time-of-day = hour ":" minute ":" second
bool TimeOfDay(Cursor& in, Fields* f) {
  return in.Digits(2, &f->hour) && in.Literal(":") &&
         in.Digits(2, &f->minute) && in.Literal(":") &&
         in.Digits(2, &f->second);
}

// "Sun, 06 Nov 1994 08:49:37 GMT"
bool ImfFixdate(absl::string_view text, Fields* f) {
  Cursor in(text);
  int weekday = 0;
  return in.OneOf(kShortDays, &weekday) && in.Literal(", ") &&
         in.Digits(2, &f->day) && in.Literal(" ") && Month(in, f) &&
         in.Literal(" ") && in.Digits(4, &f->year) && in.Literal(" ") &&
         TimeOfDay(in, f) && in.Literal(" GMT") && in.Done();
}

// "Sunday, 06-Nov-94 08:49:37 GMT"; f->year gets the two digits.
bool Rfc850Date(absl::string_view text, Fields* f) {
  Cursor in(text);
  int weekday = 0;
  return in.OneOf(kLongDays, &weekday) && in.Literal(", ") &&
         in.Digits(2, &f->day) && in.Literal("-") && Month(in, f) &&
         in.Literal("-") && in.Digits(2, &f->year) && in.Literal(" ") &&
         TimeOfDay(in, f) && in.Literal(" GMT") && in.Done();
}

// "Sun Nov  6 08:49:37 1994": the day is two digits or space + one digit.
bool AsctimeDate(absl::string_view text, Fields* f) {
  Cursor in(text);
  int weekday = 0;
  if (!in.OneOf(kShortDays, &weekday) || !in.Literal(" ") || !Month(in, f) ||
      !in.Literal(" ")) {
    return false;
  }
  if (!in.Digits(2, &f->day) && !(in.Literal(" ") && in.Digits(1, &f->day))) {
    return false;
  }
  return in.Literal(" ") && TimeOfDay(in, f) && in.Literal(" ") &&
         in.Digits(4, &f->year) && in.Done();
}

// RFC 9110: a two-digit year more than 50 years in the future means the most
// recent past year with the same last two digits.
int ExpandTwoDigitYear(int two_digits, absl::Time now) {
  // Clamp so that an absurd `now` (InfiniteFuture) cannot overflow below.
  int64_t now_year = absl::ToCivilYear(now, absl::UTCTimeZone()).year();
  if (now_year < 0) now_year = 0;
  if (now_year > 1000000) now_year = 1000000;
  int64_t year = now_year / 100 * 100 + two_digits;
  if (year > now_year + 50) year -= 100;
  return static_cast<int>(year);
}

}  // namespace

absl::StatusOr<absl::Time> ParseHttpDate(absl::string_view text,
                                         absl::Time now) {
  // Each format sets all six fields when it matches, so what a failed
  // attempt left behind is always overwritten.
  Fields f;
  if (!ImfFixdate(text, &f) && !AsctimeDate(text, &f)) {
    if (!Rfc850Date(text, &f)) {
      return absl::InvalidArgumentError(
          "not an HTTP-date (expected e.g. \"Sun, 06 Nov 1994 08:49:37 GMT\")");
    }
    f.year = ExpandTwoDigitYear(f.year, now);
  }
  // Second 60 is allowed for a leap second; CivilSecond rolls it into the
  // next minute, which is as precise as a retry delay needs.
  if (f.hour > 23 || f.minute > 59 || f.second > 60) {
    return absl::InvalidArgumentError("HTTP-date has an out-of-range time");
  }
  const absl::CivilDay day(f.year, f.month, f.day);
  if (f.day < 1 || day.day() != f.day || day.month() != f.month) {
    return absl::InvalidArgumentError(
        "HTTP-date names a day that does not exist");
  }
  return absl::FromCivil(
      absl::CivilSecond(f.year, f.month, f.day, f.hour, f.minute, f.second),
      absl::UTCTimeZone());
}

}  // namespace outbox
