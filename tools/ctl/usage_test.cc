// Copyright (c) edge-outbox authors.
//
// The command line: help, and usage errors (exit 2 with the help text).

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/ctl_fixture.h"

namespace outbox::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using CtlUsageTest = CtlTest;

TEST_F(CtlUsageTest, HelpListsEveryCommandAndExitsZero) {
  sink::ExitResult r = CtlNoDb({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, StartsWith("usage: outboxctl --db DIR COMMAND"));
  for (const char* command : {"stats", "list", "show", "replay", "retry-step",
                              "cancel", "purge-dead", "get", "emit"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("\n  ") + command + " "));
  }
  EXPECT_EQ(r.err, "");
}

TEST_F(CtlUsageTest, CommandHelpPrintsThatCommandsUsage) {
  sink::ExitResult r = CtlNoDb({"emit", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, StartsWith("usage: outboxctl --db DIR emit"));
  EXPECT_THAT(r.out, HasSubstr("--idempotency-key"));
}

TEST_F(CtlUsageTest, UsageErrorsExitTwoWithTheHelpText) {
  const std::vector<std::vector<std::string>> cases = {
      {},                                   // no command
      {"frobnicate"},                       // unknown command
      {"stats", "--verbose"},               // unknown flag
      {"list"},                             // missing argument
      {"list", "everything"},               // bad argument
      {"list", "pending", "--limit", "0"},  // bad count
      {"show"},                             // missing id
      {"replay"},                           // neither id nor --all
      {"replay", "x", "--all"},             // both
      {"retry-step", "x"},                  // missing the step
      {"cancel"},                           // missing id
      {"cancel", "x", "--reason"},          // missing reason
      {"get", "--table", "sales"},          // missing --key
      {"emit", "--table", "sales"},         // missing the rest
  };
  for (const std::vector<std::string>& args : cases) {
    sink::ExitResult r = Ctl(args);
    const std::string what = args.empty() ? "(none)" : args[0];
    EXPECT_EQ(r.exit_code, 2) << what << ": " << r.err;
    EXPECT_THAT(r.err, StartsWith("outboxctl: ")) << what;
    EXPECT_THAT(r.err, HasSubstr("usage: outboxctl")) << what;
    EXPECT_EQ(r.out, "") << what;
  }
}

TEST_F(CtlUsageTest, MissingDbIsAUsageError) {
  sink::ExitResult r = CtlNoDb({"stats"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, StartsWith("outboxctl: --db DIR is required"));
}

TEST_F(CtlUsageTest, DbMayFollowTheCommand) {
  sink::ExitResult r = CtlNoDb({"stats", "--db", db()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace outbox::ctl
