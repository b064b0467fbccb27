// Copyright (c) edge-outbox authors.

#include "agent/http_date.h"

#include <string>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/time/civil_time.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

// 2026-01-01T00:00:00Z, the project's usual test epoch.
const absl::Time kNow = absl::FromUnixSeconds(1767225600);
// RFC 9110's example instant, 1994-11-06T08:49:37Z.
const absl::Time kExample = absl::FromUnixSeconds(784111777);

TEST(HttpDateTest, ParsesImfFixdate) {
  absl::StatusOr<absl::Time> t =
      ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT", kNow);
  ASSERT_OUTBOX_OK(t);
  EXPECT_EQ(*t, kExample);
}

TEST(HttpDateTest, ParsesRfc850) {
  absl::StatusOr<absl::Time> t =
      ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", kNow);
  ASSERT_OUTBOX_OK(t);
  EXPECT_EQ(*t, kExample);
}

TEST(HttpDateTest, ParsesAsctimeWithSpacePaddedAndTwoDigitDay) {
  absl::StatusOr<absl::Time> t =
      ParseHttpDate("Sun Nov  6 08:49:37 1994", kNow);
  ASSERT_OUTBOX_OK(t);
  EXPECT_EQ(*t, kExample);
  absl::StatusOr<absl::Time> t2 =
      ParseHttpDate("Thu Nov 16 08:49:37 1994", kNow);
  ASSERT_OUTBOX_OK(t2);
  EXPECT_EQ(*t2, kExample + absl::Hours(24 * 10));
}

TEST(HttpDateTest, Rfc850TwoDigitYearFollowsFiftyYearRule) {
  // From 2026: "70" is 2070 (44 years ahead), "94" would be 2094 (68 ahead)
  // so it is 1994, and "26" is this year.
  auto year_of = [](const char* text) {
    absl::StatusOr<absl::Time> t = ParseHttpDate(text, kNow);
    EXPECT_TRUE(t.ok()) << text << ": " << t.status();
    return t.ok() ? absl::ToCivilYear(*t, absl::UTCTimeZone()).year() : 0;
  };
  EXPECT_EQ(year_of("Monday, 06-Jan-70 00:00:00 GMT"), 2070);
  EXPECT_EQ(year_of("Sunday, 06-Nov-94 08:49:37 GMT"), 1994);
  EXPECT_EQ(year_of("Thursday, 01-Jan-26 00:00:00 GMT"), 2026);
  EXPECT_EQ(year_of("Thursday, 01-Jan-76 00:00:00 GMT"), 2076);
  EXPECT_EQ(year_of("Thursday, 01-Jan-77 00:00:00 GMT"), 1977);
}

TEST(HttpDateTest, AcceptsLeapSecondAndLeapDay) {
  EXPECT_OUTBOX_OK(ParseHttpDate("Sat, 31 Dec 2016 23:59:60 GMT", kNow));
  EXPECT_OUTBOX_OK(ParseHttpDate("Thu, 29 Feb 2024 12:00:00 GMT", kNow));
}

TEST(HttpDateTest, RejectsImpossibleDatesAndTimes) {
  for (const char* text :
       {"Thu, 29 Feb 2023 12:00:00 GMT", "Mon, 31 Apr 2024 12:00:00 GMT",
        "Mon, 00 Apr 2024 12:00:00 GMT", "Mon, 01 Apr 2024 24:00:00 GMT",
        "Mon, 01 Apr 2024 23:60:00 GMT", "Mon, 01 Apr 2024 23:59:61 GMT",
        "Mon Apr 32 12:00:00 2024"}) {
    EXPECT_STATUS_CODE(ParseHttpDate(text, kNow),
                       absl::StatusCode::kInvalidArgument)
        << text;
  }
}

TEST(HttpDateTest, RejectsNearMisses) {
  for (const char* text : {
           "",
           "Sun, 06 Nov 1994 08:49:37 UTC",  // only GMT
           "Sun, 06 Nov 1994 08:49:37 gmt",  // case-sensitive
           "sun, 06 Nov 1994 08:49:37 GMT",  //
           "Sun, 6 Nov 1994 08:49:37 GMT",   // day needs two digits
           "Sun, 06 Nov 94 08:49:37 GMT",    // IMF needs four-digit year
           "Sun, 06 November 1994 08:49:37 GMT",
           "Sun,06 Nov 1994 08:49:37 GMT",
           "Sun, 06 Nov 1994 08:49:37 GMT ",  // trailing junk (callers trim)
           "Sun, 06 Nov 1994 08:49 GMT",
           "Sun, 06 Nov 1994 8:49:37 GMT",
           "Sunday, 06 Nov 1994 08:49:37 GMT",
           "Sun, 06-Nov-94 08:49:37 GMT",  // RFC 850 needs the long day
           "Sun Nov 6 08:49:37 1994",      // asctime pads with a space
           "Sun Nov  6 08:49:37 94",
           "1994-11-06T08:49:37Z",
           "Xyz, 06 Nov 1994 08:49:37 GMT",
       }) {
    EXPECT_STATUS_CODE(ParseHttpDate(text, kNow),
                       absl::StatusCode::kInvalidArgument)
        << '"' << text << '"';
  }
}

TEST(HttpDateTest, ToleratesExtremeNow) {
  const char* text = "Sunday, 06-Nov-94 08:49:37 GMT";
  EXPECT_OUTBOX_OK(ParseHttpDate(text, absl::InfiniteFuture()));
  EXPECT_OUTBOX_OK(ParseHttpDate(text, absl::InfinitePast()));
  EXPECT_OUTBOX_OK(ParseHttpDate(text, absl::UnixEpoch()));
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
    absl::StatusOr<absl::Time> t = ParseHttpDate(text, kNow);
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
