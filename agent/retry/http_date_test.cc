// Copyright (c) edge-outbox authors.

#include "agent/retry/http_date.h"

#include <ctime>
#include <string>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/time/civil_time.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

// RFC 9110's example instant, 1994-11-06T08:49:37Z.
const absl::Time kExample = absl::FromUnixSeconds(784111777);

TEST(HttpDateTest, ParsesImfFixdate) {
  absl::StatusOr<absl::Time> t = ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT");
  ASSERT_OUTBOX_OK(t);
  EXPECT_EQ(*t, kExample);
}

TEST(HttpDateTest, ParsesRfc850) {
  absl::StatusOr<absl::Time> t =
      ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT");
  ASSERT_OUTBOX_OK(t);
  EXPECT_EQ(*t, kExample);
}

TEST(HttpDateTest, ParsesAsctimeWithSpacePaddedAndTwoDigitDay) {
  absl::StatusOr<absl::Time> t = ParseHttpDate("Sun Nov  6 08:49:37 1994");
  ASSERT_OUTBOX_OK(t);
  EXPECT_EQ(*t, kExample);
  absl::StatusOr<absl::Time> t2 = ParseHttpDate("Thu Nov 16 08:49:37 1994");
  ASSERT_OUTBOX_OK(t2);
  EXPECT_EQ(*t2, kExample + absl::Hours(24 * 10));
}

TEST(HttpDateTest, Rfc850TwoDigitYearsUpTo70AreThisCentury) {
  auto year_of = [](const char* text) {
    absl::StatusOr<absl::Time> t = ParseHttpDate(text);
    EXPECT_TRUE(t.ok()) << text << ": " << t.status();
    return t.ok() ? absl::ToCivilYear(*t, absl::UTCTimeZone()).year() : 0;
  };
  EXPECT_EQ(year_of("Sunday, 06-Nov-94 08:49:37 GMT"), 1994);
  EXPECT_EQ(year_of("Thursday, 01-Jan-26 00:00:00 GMT"), 2026);
  EXPECT_EQ(year_of("Thursday, 01-Jan-37 00:00:00 GMT"), 2037);
  EXPECT_EQ(year_of("Friday, 01-Jan-71 00:00:00 GMT"), 1971);
}

TEST(HttpDateTest, AcceptsLeapSecondAndLeapDay) {
  absl::StatusOr<absl::Time> leap_second =
      ParseHttpDate("Sat, 31 Dec 2016 23:59:60 GMT");
  ASSERT_OUTBOX_OK(leap_second);
  // Rolled into the next minute: as precise as a retry delay needs.
  EXPECT_EQ(*leap_second,
            absl::FromCivil(absl::CivilSecond(2017, 1, 1, 0, 0, 0),
                            absl::UTCTimeZone()));
  EXPECT_OUTBOX_OK(ParseHttpDate("Thu, 29 Feb 2024 12:00:00 GMT"));
}

TEST(HttpDateTest, RejectsOutOfRangeFields) {
  for (const char* text :
       {"Mon, 00 Apr 2024 12:00:00 GMT", "Mon, 01 Apr 2024 24:00:00 GMT",
        "Mon, 01 Apr 2024 23:60:00 GMT", "Mon, 01 Apr 2024 23:59:61 GMT",
        "Mon Apr 32 12:00:00 2024"}) {
    EXPECT_STATUS_CODE(ParseHttpDate(text), absl::StatusCode::kInvalidArgument)
        << text;
  }
}

TEST(HttpDateTest, RejectsTextThatHoldsNoDate) {
  for (const char* text : {
           "",
           "soon",
           "120 s",
           "Nov",
           "1994",
           "Sun, 06 November 1994 08:49:37 GMT",  // no such month name
           "Xyz, 06 Nov 1994 08:49:37 GMT",       // no such word
           "Sun, 06 Nov 1994 08:49:37 XYZ",       // no such zone
           "1994-11-06T08:49:37Z",
       }) {
    EXPECT_STATUS_CODE(ParseHttpDate(text), absl::StatusCode::kInvalidArgument)
        << '"' << text << '"';
  }
}

TEST(HttpDateTest, RejectsANulByte) {
  // curl_getdate would read only up to the NUL, and take this for a date.
  EXPECT_STATUS_CODE(
      ParseHttpDate(std::string("Sun, 06 Nov 1994 08:49:37 GMT\0junk", 35)),
      absl::StatusCode::kInvalidArgument);
}

TEST(HttpDateTest, DatesUpTo2037ParseOnEveryTarget) {
  absl::StatusOr<absl::Time> t = ParseHttpDate("Thu, 31 Dec 2037 23:59:59 GMT");
  ASSERT_OUTBOX_OK(t);
  EXPECT_EQ(*t, absl::FromCivil(absl::CivilSecond(2037, 12, 31, 23, 59, 59),
                                absl::UTCTimeZone()));
}

TEST(HttpDateTest, FarDatesParseOnlyWhereTimeTHoldsThem) {
  const absl::StatusOr<absl::Time> t =
      ParseHttpDate("Fri, 31 Dec 9999 23:59:59 GMT");
  if (sizeof(time_t) >= 8) {
    ASSERT_OUTBOX_OK(t);
    EXPECT_EQ(absl::ToCivilYear(*t, absl::UTCTimeZone()).year(), 9999);
  } else {
    // 32-bit time_t (armhf): refused, so a Retry-After that far off is
    // ignored and the normal backoff applies.
    EXPECT_STATUS_CODE(t, absl::StatusCode::kInvalidArgument);
  }
}

// Fuzz-like: mutations of valid dates and random bytes either parse or fail
// with kInvalidArgument; nothing crashes (run under ASan/UBSan in CI's
// sanitizer build to catch reads past the end).
TEST(HttpDateTest, RandomInputNeverCrashes) {
  absl::BitGen gen(std::seed_seq{20260101});
  const std::string seeds[] = {"Sun, 06 Nov 1994 08:49:37 GMT",
                               "Sunday, 06-Nov-94 08:49:37 GMT",
                               "Sun Nov  6 08:49:37 1994"};
  int parsed = 0;
  int rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = seeds[i % 3];
    const int edits = absl::Uniform(gen, 0, 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = absl::Uniform<size_t>(gen, 0, text.size());
      switch (absl::Uniform(gen, 0, 3)) {
        case 0:
          text[pos] = static_cast<char>(absl::Uniform(gen, 0, 256));
          break;
        case 1:
          text.erase(pos, absl::Uniform<size_t>(gen, 1, 8));
          break;
        default:
          text.insert(pos, 1, static_cast<char>(absl::Uniform(gen, 0, 256)));
      }
    }
    absl::StatusOr<absl::Time> t = ParseHttpDate(text);
    if (t.ok()) {
      ++parsed;
    } else {
      ASSERT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
      ++rejected;
    }
  }
  // Both branches were exercised, so the mutations were neither all fatal
  // nor all harmless.
  EXPECT_GT(parsed, 100);
  EXPECT_GT(rejected, 100);
}

}  // namespace
}  // namespace outbox
