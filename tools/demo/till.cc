// Copyright (c) edge-outbox authors.

#include "tools/demo/till.h"

#include <signal.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"

namespace outbox::demo {

absl::Status Till::Start() {
  std::vector<std::string> command = {binary_,
                                      "--db",
                                      spec_.db,
                                      "--config",
                                      spec_.config_path,
                                      "--sales",
                                      absl::StrCat(spec_.sales),
                                      "--rate",
                                      absl::StrCat(spec_.rate),
                                      "--till",
                                      spec_.name};
  command.insert(command.end(), spec_.more_flags.begin(),
                 spec_.more_flags.end());
  OUTBOX_ASSIGN_OR_RETURN(child_,
                          ChildProcess::Start(command, spec_.stderr_path));
  ++runs_;
  state_ = State::kRunning;
  drained_ = false;
  exit_code_ = -1;
  run_started_ = absl::Now();
  return absl::OkStatus();
}

absl::Status Till::Poll() {
  if (state_ != State::kRunning) return absl::OkStatus();
  OUTBOX_RETURN_IF_ERROR(ReadLines());
  const int code = child_->Wait(absl::InfinitePast());
  if (code != -1) {
    OUTBOX_RETURN_IF_ERROR(ReadLines());  // what it wrote just before
    state_ = State::kExited;
    exit_code_ = code;
  }
  return absl::OkStatus();
}

absl::Status Till::Kill() {
  child_->Kill();
  state_ = State::kKilled;
  exit_code_ = child_->exit_code();
  // Lines it wrote before dying are acknowledged sales too; a torn last
  // line (no newline) is not returned.
  return ReadLines();
}

absl::Status Till::Pause() { return child_->Signal(SIGSTOP); }

absl::Status Till::Resume() { return child_->Signal(SIGCONT); }

void Till::Stop(absl::Duration grace) {
  if (state_ != State::kRunning) return;
  child_->Signal(SIGCONT).IgnoreError();
  child_->Signal(SIGTERM).IgnoreError();
  if (child_->Wait(absl::Now() + grace) == -1) child_->Kill();
  state_ = State::kExited;
  exit_code_ = child_->exit_code();
}

absl::Status Till::ExitStatus() const {
  if (state_ != State::kExited) return absl::OkStatus();
  if (exit_code_ == 0 && drained_) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(
      spec_.name, ": outbox-pos-sim exited with ", exit_code_,
      drained_ ? "" : " before it drained", "; see ", spec_.stderr_path));
}

absl::Status Till::ReadLines() {
  std::string line;
  while (child_->ReadLine(absl::InfinitePast(), &line) ==
         ChildProcess::Read::kLine) {
    OUTBOX_RETURN_IF_ERROR(Record(line));
  }
  return absl::OkStatus();
}

absl::Status Till::Record(const std::string& line) {
  if (line == "drained") {
    drained_ = true;
    return absl::OkStatus();
  }
  const std::vector<std::string> words = absl::StrSplit(line, ' ');
  audit::AcknowledgedSale sale;
  sale.run = runs_;
  absl::string_view number =
      words.size() == 3 ? absl::string_view(words[1]) : absl::string_view();
  const bool refund = !words.empty() && words[0] == "refund";
  if (words.size() != 3 || (words[0] != "sale" && !refund) ||
      !absl::ConsumePrefix(&number, absl::StrCat(spec_.name, "-")) ||
      !absl::SimpleAtoi(number, &sale.n)) {
    return absl::InternalError(absl::StrCat(
        spec_.name, ": outbox-pos-sim printed an unexpected line: ", line));
  }
  sale.event_id = words[2];
  (refund ? refunded_ : acknowledged_).push_back(std::move(sale));
  return absl::OkStatus();
}

}  // namespace outbox::demo
