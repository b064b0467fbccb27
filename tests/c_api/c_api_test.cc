// Copyright (c) edge-outbox authors.
//
// The C API end to end: the C program examples/c/c_api_example.c, linked
// statically against the project's libraries, commits and drains through
// outbox/outbox.h into a real outbox-sink.

#include <fstream>
#include <set>
#include <string>

#include "tests/testing/sink_process.h"
#include "gtest/gtest.h"
#include "tests/testing/agent_fixture.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

class CApiTest : public testing::AgentSinkTest {};

TEST_F(CApiTest, CProgramCommitsAndDrainsThroughTheCApi) {
  StartSink();
  const std::string config = dir_.Sub("agent.textproto");
  std::ofstream(config) << Config();
  store_.reset();  // the C program opens the store itself
  auto run = sink::RunToExit(OUTBOX_C_API_EXAMPLE, dir_.path(),
                             {dir_.Sub("db"), config}, absl::Seconds(60));
  ASSERT_OUTBOX_OK(run);
  EXPECT_EQ(run->exit_code, 0) << run->out << run->err;
  EXPECT_NE(run->out.find("(duplicate)"), std::string::npos) << run->out;
  std::set<std::string> delivered;
  for (const testing::SinkLine& l : SinkLog()) {
    if (l.status == 200) delivered.insert(l.id);
  }
  EXPECT_EQ(delivered.size(), 2u) << run->out;
}

}  // namespace
}  // namespace outbox
