// Copyright (c) edge-outbox authors.
//
// A device can lose power during its very first start, while Store::Open is
// still creating the store. Nothing was committed yet, so the next start
// must open (finishing or redoing the creation), not refuse the directory
// forever. Here outbox-pos-sim is SIGKILLed at 0, 3, 6 ... 150 ms after its
// first start on a fresh directory, which on this machine spans the whole
// creation, and restarted once each time.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "platform/child_process.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {
namespace {

std::string Listing(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ignored)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return absl::StrJoin(names, " ");
}

std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

TEST(FirstStartKillTest, StoreKilledWhileBeingCreatedOpensOnRestart) {
  TempDir dir;
  // Nothing is ever pending, so the agent never connects to this address.
  const std::string config = dir.Sub("agent.textproto");
  std::ofstream(config)
      << "destinations { name: \"sink\" "
         "url: \"http://127.0.0.1:9/\" }\n"
         "routes { event_type: \"*\" destination: \"sink\" }\n";
  int killed = 0;
  std::vector<std::string> refused;
  for (int delay_ms = 0; delay_ms <= 150; delay_ms += 3) {
    const std::string db = dir.Sub(absl::StrCat("db-", delay_ms));
    const std::string err = dir.Sub(absl::StrCat("stderr-", delay_ms));
    const std::vector<std::string> args = {"--db", db,        "--config",
                                           config, "--sales", "0"};
    auto first =
        ChildProcess::Start(TargetCommand(OUTBOX_POS_SIM_BINARY, args), err);
    ASSERT_OUTBOX_OK(first);
    std::string line;
    const absl::Time kill_at = absl::Now() + absl::Milliseconds(delay_ms);
    while ((*first)->ReadLine(kill_at, &line) == ChildProcess::Read::kLine) {
    }
    if ((*first)->Wait(absl::Now()) == -1) {  // still running
      (*first)->Kill();
      ++killed;
    }

    auto second =
        ChildProcess::Start(TargetCommand(OUTBOX_POS_SIM_BINARY, args), err);
    ASSERT_OUTBOX_OK(second);
    bool drained = false;
    while ((*second)->ReadLine(absl::Now() + absl::Seconds(30), &line) ==
           ChildProcess::Read::kLine) {
      drained = drained || line == "drained";
    }
    const int code = (*second)->Wait(absl::Now() + absl::Seconds(30));
    if (code != 0 || !drained) {
      refused.push_back(absl::StrCat("killed after ", delay_ms,
                                     " ms: restart exited ", code, ": ",
                                     LastLine(err), "\n  left: ", Listing(db)));
    }
  }
  std::cout << "[first start] " << killed << " first starts killed, "
            << refused.size() << " stores refused on restart\n";
  EXPECT_GT(killed, 0);
  EXPECT_TRUE(refused.empty()) << refused.size() << " restarts failed:\n"
                               << absl::StrJoin(refused, "\n");
}

}  // namespace
}  // namespace outbox::testing
