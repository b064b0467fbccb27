// Copyright (c) edge-outbox authors.

#include "tests/testing/target_command.h"

#include "absl/strings/str_split.h"

namespace outbox::testing {

std::vector<std::string> TargetCommand(const std::string& binary,
                                       const std::vector<std::string>& args) {
  std::vector<std::string> command =
      absl::StrSplit(OUTBOX_TEST_EMULATOR, ' ', absl::SkipEmpty());
  command.push_back(binary);
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

}  // namespace outbox::testing
