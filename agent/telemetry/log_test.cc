// Copyright (c) edge-outbox authors.

#include "outbox/log.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

std::set<std::string> CodeNames() {
  std::set<std::string> names;
  for (LogEvent e : AllLogEvents()) names.emplace(LogEventName(e));
  return names;
}

// The first-column names of the table between the log-events markers of
// docs/metrics-and-logs.md: rows like "| `store_opened` | info | ... |".
std::set<std::string> DocumentedNames() {
  std::ifstream in(OUTBOX_LOG_DOC);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  const size_t begin = text.find("<!-- log-events:begin -->");
  const size_t end = text.find("<!-- log-events:end -->");
  std::set<std::string> names;
  if (begin == std::string::npos || end == std::string::npos) return names;
  for (absl::string_view line : absl::StrSplit(
           absl::string_view(text).substr(begin, end - begin), '\n')) {
    if (!absl::ConsumePrefix(&line, "| `")) continue;
    const size_t tick = line.find('`');
    if (tick != absl::string_view::npos) names.emplace(line.substr(0, tick));
  }
  return names;
}

TEST(LogEventTest, EveryEventHasItsOwnSnakeCaseName) {
  const std::vector<LogEvent> all = AllLogEvents();
  EXPECT_EQ(CodeNames().size(), all.size()) << "two events share a name";
  for (LogEvent e : all) {
    const absl::string_view name = LogEventName(e);
    EXPECT_FALSE(name.empty());
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"),
              absl::string_view::npos)
        << name;
  }
}

TEST(LogEventTest, NamesOfTheStateChangesAreStable) {
  // Log shippers alert on these: renaming one breaks them silently.
  EXPECT_EQ(LogEventName(LogEvent::kDestinationUnreachable),
            "destination_unreachable");
  EXPECT_EQ(LogEventName(LogEvent::kDestinationReachable),
            "destination_reachable");
  EXPECT_EQ(LogEventName(LogEvent::kDestinationPaused), "destination_paused");
  EXPECT_EQ(LogEventName(LogEvent::kDestinationResumed), "destination_resumed");
  EXPECT_EQ(LogEventName(LogEvent::kDeadLetter), "dead_letter");
  EXPECT_EQ(LogEventName(LogEvent::kDiskFull), "disk_full");
  EXPECT_EQ(LogEventName(LogEvent::kStoreOpened), "store_opened");
  EXPECT_EQ(LogSeverityName(LogSeverity::kWarning), "warning");
}

// The name is the test's from when the table was in the README.
TEST(LogEventTest, ReadmeListsExactlyTheEventsTheCodeHas) {
  const std::set<std::string> documented = DocumentedNames();
  ASSERT_FALSE(documented.empty())
      << OUTBOX_LOG_DOC << " has no log-events table (between "
      << "<!-- log-events:begin --> and <!-- log-events:end -->)";
  for (const std::string& name : CodeNames()) {
    EXPECT_TRUE(documented.count(name))
        << OUTBOX_LOG_DOC << " does not list " << name;
  }
  for (const std::string& name : documented) {
    EXPECT_TRUE(CodeNames().count(name)) << OUTBOX_LOG_DOC << " lists " << name
                                         << ", which the code does not have";
  }
}

}  // namespace
}  // namespace outbox
