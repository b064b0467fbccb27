// Copyright (c) edge-outbox authors.

#include "tests/vm/lossy_disk_process.h"

#include <signal.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace outbox::vm {

DiskLine ParseDiskLine(const std::string& line) {
  DiskLine fields;
  for (absl::string_view word : absl::StrSplit(line, ' ')) {
    const std::vector<absl::string_view> kv =
        absl::StrSplit(word, absl::MaxSplits('=', 1));
    uint64_t value = 0;
    if (kv.size() == 2 && absl::SimpleAtoi(kv[1], &value)) {
      fields[std::string(kv[0])] = value;
    }
  }
  return fields;
}

absl::StatusOr<std::unique_ptr<LossyDiskProcess>> LossyDiskProcess::Start(
    const std::string& binary, const std::string& platter,
    const std::vector<std::string>& args, const std::string& stderr_path,
    absl::Duration timeout) {
  std::vector<std::string> command = {binary, "--platter=" + platter,
                                      "--port=0"};
  command.insert(command.end(), args.begin(), args.end());
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start(command, stderr_path);
  if (!child.ok()) return child.status();
  std::unique_ptr<LossyDiskProcess> disk(
      new LossyDiskProcess(*std::move(child)));
  absl::StatusOr<std::string> line =
      disk->AwaitLine("listening ", absl::Now() + timeout);
  if (!line.ok()) return line.status();
  // "listening 127.0.0.1:<port> ..."
  const size_t colon = line->find(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(
          line->substr(colon + 1, line->find(' ', colon) - colon - 1), &port)) {
    return absl::InternalError(absl::StrCat("no port in '", *line, "'"));
  }
  disk->port_ = port;
  return disk;
}

std::string LossyDiskProcess::Url() const {
  return absl::StrCat("nbd://127.0.0.1:", port_);
}

absl::StatusOr<std::string> LossyDiskProcess::AwaitLine(const std::string& word,
                                                        absl::Time deadline) {
  std::string line;
  while (true) {
    switch (child_->ReadLine(deadline, &line)) {
      case ChildProcess::Read::kLine:
        if (absl::StartsWith(line, word)) return line;
        break;
      case ChildProcess::Read::kTimeout:
        return absl::UnavailableError(absl::StrCat(
            "outbox-lossy-disk printed no '", word, "' line in time"));
      case ChildProcess::Read::kEof:
        return absl::UnavailableError(absl::StrCat(
            "outbox-lossy-disk exited before its '", word, "' line"));
    }
  }
}

absl::StatusOr<DiskLine> LossyDiskProcess::Ask(int signal,
                                               const std::string& word,
                                               absl::Duration timeout) {
  absl::Status status = child_->Signal(signal);
  if (!status.ok()) return status;
  absl::StatusOr<std::string> line = AwaitLine(word, absl::Now() + timeout);
  if (!line.ok()) return line.status();
  return ParseDiskLine(*line);
}

absl::StatusOr<DiskLine> LossyDiskProcess::Cut(absl::Duration timeout) {
  return Ask(SIGUSR1, "cut ", timeout);
}

absl::StatusOr<DiskLine> LossyDiskProcess::Counts(absl::Duration timeout) {
  return Ask(SIGUSR2, "counts ", timeout);
}

absl::StatusOr<DiskLine> LossyDiskProcess::Stop(absl::Duration timeout) {
  absl::StatusOr<DiskLine> counts = Ask(SIGTERM, "counts ", timeout);
  const int code = child_->Wait(absl::Now() + timeout);
  if (!counts.ok()) return counts.status();
  if (code != 0) {
    return absl::InternalError(
        absl::StrCat("outbox-lossy-disk exited with ", code));
  }
  return counts;
}

}  // namespace outbox::vm
