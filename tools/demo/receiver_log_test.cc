// Copyright (c) edge-outbox authors.

#include "tools/demo/receiver_log.h"

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace outbox::demo {
namespace {

// A request-log line as outbox-sink writes it, for sale `sale` (n).
std::string Line(int seq, const std::string& sale, int n, int status,
                 bool duplicate, int64_t ts_ms, bool drop = false) {
  return absl::StrCat(
      R"({"seq":)", seq, R"(,"id":"id-)", sale, R"(","ts_ms":)", ts_ms,
      R"(,"signature_valid":true,"duplicate":)", duplicate ? "true" : "false",
      R"(,"action":")", drop ? "drop" : "answer", R"(","status":)", status,
      R"(,"body":"{\"sale\":\")", sale, R"(\",\"n\":)", n, R"(}"})", "\n");
}

TEST(ReceiverLogTest, SplitsRequestsByTillAndCountsWhatTheyGot) {
  const std::string path =
      std::string(::testing::TempDir()) + "/receiver_log_test.log";
  std::ofstream(path, std::ios::trunc)
      << Line(1, "till-1-0", 0, 503, false, 1000)
      << Line(2, "till-1-0", 0, 200, false, 1100)
      << Line(3, "till-2-0", 0, 429, false, 1200)
      << Line(4, "till-1-0", 0, 200, true, 1300)
      << Line(5, "till-2-0", 0, 0, false, 1400, /*drop=*/true)
      << Line(6, "till-2-0", 0, 200, true, 1500)
      << Line(7, "till-9-0", 0, 200, false, 1600);
  ReceiverLog log(path, {"till-1", "till-2"});
  log.Poll();
  const TillTally& one = log.tally(0);
  EXPECT_EQ(one.requests.size(), 3u);
  EXPECT_EQ(one.delivered, std::set<int64_t>({0}));
  EXPECT_EQ(one.answered_503, 1);
  EXPECT_EQ(one.duplicates, 1);
  EXPECT_EQ(one.first_request, absl::FromUnixMillis(1000));
  EXPECT_EQ(one.first_delivery, absl::FromUnixMillis(1100));
  EXPECT_EQ(one.last_delivery, absl::FromUnixMillis(1100));  // first 2xx only
  const TillTally& two = log.tally(1);
  EXPECT_EQ(two.requests.size(), 3u);
  EXPECT_EQ(two.answered_429, 1);
  EXPECT_EQ(two.dropped, 1);
  EXPECT_EQ(two.last_request, absl::FromUnixMillis(1500));
  EXPECT_EQ(log.strays(), 1);

  std::ofstream(path, std::ios::app)
      << Line(8, "till-2-1", 1, 200, false, 1700);
  log.Poll();  // only the new line
  EXPECT_EQ(log.tally(1).delivered, std::set<int64_t>({0, 1}));
  EXPECT_EQ(log.tally(0).requests.size(), 3u);
}

}  // namespace
}  // namespace outbox::demo
