// Copyright (c) edge-outbox authors.
//
// The command line that runs one of the project's binaries from a test. In
// a cross build, ctest runs tests under an emulator (qemu-user), but the
// kernel cannot exec a foreign binary by itself: a child is started through
// the same emulator. Native builds run the binary as it is.

#ifndef OUTBOX_TESTS_TESTING_TARGET_COMMAND_H_
#define OUTBOX_TESTS_TESTING_TARGET_COMMAND_H_

#include <string>
#include <vector>

namespace outbox::testing {

// The emulator's words (none in native builds), `binary`, then `args`: the
// command for ChildProcess::Start (platform/child_process.h).
std::vector<std::string> TargetCommand(const std::string& binary,
                                       const std::vector<std::string>& args);

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_TARGET_COMMAND_H_
