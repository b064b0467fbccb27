// Copyright (c) edge-outbox authors.
//
// outboxctl's entry point, apart from main() so that the exit-status rules
// live in one place.

#ifndef OUTBOX_TOOLS_CTL_CTL_H_
#define OUTBOX_TOOLS_CTL_CTL_H_

#include <cstdio>
#include <string>
#include <vector>

namespace outbox::ctl {

// Exit statuses of outboxctl.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;  // the operation failed; see stderr
constexpr int kExitUsage = 2;   // the command line was wrong

// Runs outboxctl with argv[1..]: results to `out`, usage text for --help to
// `out`, errors (each starting "outboxctl: ") to `err`. Returns the exit
// status.
int RunCtl(const std::vector<std::string>& args, std::FILE* out,
           std::FILE* err);

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_CTL_H_
