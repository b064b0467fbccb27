// Copyright (c) edge-outbox authors.

#include "tools/ctl/command.h"

namespace outbox::ctl {

std::vector<const Command*> AllCommands() {
  return {&StatsCommand(),     &ListCommand(),           &ShowCommand(),
          &ReplayCommand(),    &RetryStepCommand(),      &CancelCommand(),
          &PurgeDeadCommand(), &ResetClockMarkCommand(), &GetCommand(),
          &EmitCommand(),      &VerifyCommand()};
}

}  // namespace outbox::ctl
