// Copyright (c) edge-outbox authors.
//
// outbox-demo: the outbox's promise shown end to end (see DemoUsage() and
// story.h). This file wires flags, signals and the display to the Story.

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "platform/terminal.h"
#include "tools/demo/demo_options.h"
#include "tools/demo/display.h"
#include "tools/demo/story.h"

namespace outbox::demo {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

volatile std::sig_atomic_t g_interrupted = 0;

void OnSignal(int) { g_interrupted = 1; }

// SIGINT (Ctrl-C) and SIGTERM end the story between two ticks, and the
// Story then stops what it started. A terminal's Ctrl-C reaches the
// children too (one process group); they stop by themselves.
void CatchSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a closed stdout must not skip the cleanup
}

int ExitCode(const absl::Status& status) {
  if (status.ok()) return 0;
  if (status.code() == absl::StatusCode::kCancelled) return kExitInterrupted;
  return kExitFailed;
}

int Run(const std::vector<std::string>& args) {
  absl::StatusOr<DemoOptions> options =
      ParseDemoFlags(args, std::getenv("OUTBOX_DEMO_SHORT"));
  if (!options.ok()) {
    std::fprintf(stderr, "outbox-demo: %s\n",
                 std::string(options.status().message()).c_str());
    return kExitUsage;
  }
  if (options->help) {
    std::fputs(DemoUsage().c_str(), stdout);
    return 0;
  }
  CatchSignals();
  Display display(stdout, IsTerminal(STDOUT_FILENO),
                  TerminalColumns(STDOUT_FILENO));
  absl::Status status;
  std::string dir;
  bool saga_ran = false;
  {
    Story story(*options,
                {OUTBOX_DEMO_SINK_BINARY, OUTBOX_DEMO_POS_SIM_BINARY,
                 OUTBOX_DEMO_SAGA_ROUTES},
                &display, [] { return g_interrupted != 0; });
    dir = story.dir();
    status = story.Run();
    saga_ran = story.saga_ran();
    display.EndLive();
  }  // every process it started is stopped here
  if (status.ok()) {
    display.Print(absl::StrCat(
        "outbox-demo: nothing lost: every committed sale reached the ",
        "receiver",
        saga_ran ? ", and every saga completed or was compensated in order"
                 : "",
        ". Stores, configs and logs: ", dir));
  } else if (status.code() == absl::StatusCode::kCancelled) {
    display.Print(absl::StrCat("outbox-demo: interrupted; every process it ",
                               "started is stopped. Stores, configs and ",
                               "logs: ", dir));
  } else {
    display.Print(
        absl::StrCat("outbox-demo: FAILED: ", status.message(),
                     "\noutbox-demo: stores, configs and logs: ", dir));
  }
  return ExitCode(status);
}

}  // namespace
}  // namespace outbox::demo

int main(int argc, char** argv) {
  return outbox::demo::Run(std::vector<std::string>(argv + 1, argv + argc));
}
