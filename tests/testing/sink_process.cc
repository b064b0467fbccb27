// Copyright (c) edge-outbox authors.

#include "tests/testing/sink_process.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

namespace outbox::sink {
namespace {

using testing::ChildProcess;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string UniquePrefix(const std::string& dir) {
  static std::atomic<int> counter{0};
  return absl::StrCat(dir, "/sink-", getpid(), "-", counter++);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SinkProcess>> SinkProcess::Start(
    const std::string& binary, const std::string& dir,
    const std::vector<std::string>& args, absl::Duration startup_timeout,
    int port) {
  const std::string prefix = UniquePrefix(dir);
  const std::string port_file = prefix + ".port";
  std::vector<std::string> full_args = args;
  full_args.insert(full_args.end(),
                   {"--port", absl::StrCat(port), "--port-file", port_file});
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::StartToFiles(binary, full_args, prefix + ".out",
                                 prefix + ".err");
  if (!child.ok()) return child.status();

  const absl::Time deadline = absl::Now() + startup_timeout;
  while (absl::Now() < deadline) {
    int bound = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadFile(port_file)),
                         &bound) &&
        bound > 0) {
      return std::unique_ptr<SinkProcess>(
          new SinkProcess(*std::move(child), bound, prefix + ".err"));
    }
    const int exit_code = (*child)->Wait(absl::InfinitePast());
    if (exit_code != -1) {
      return absl::UnavailableError(
          absl::StrCat("outbox-sink exited with ", exit_code,
                       " before listening: ", ReadFile(prefix + ".err")));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  // ~ChildProcess kills it.
  return absl::UnavailableError("outbox-sink did not write its port in time");
}

absl::StatusOr<int> SinkProcess::Stop() {
  if (child_->reaped()) return absl::FailedPreconditionError("already stopped");
  absl::Status signalled = child_->Signal(SIGTERM);
  if (!signalled.ok()) return signalled;
  return child_->Wait(absl::InfiniteFuture());
}

std::string SinkProcess::Stderr() const { return ReadFile(stderr_path_); }

absl::StatusOr<ExitResult> RunToExit(const std::string& binary,
                                     const std::string& dir,
                                     const std::vector<std::string>& args,
                                     absl::Duration timeout) {
  const std::string prefix = UniquePrefix(dir);
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::StartToFiles(binary, args, prefix + ".out",
                                 prefix + ".err");
  if (!child.ok()) return child.status();
  ExitResult result;
  result.exit_code = (*child)->Wait(absl::Now() + timeout);
  if (result.exit_code == -1) {
    return absl::DeadlineExceededError(
        absl::StrCat(binary, " did not exit by itself"));  // then killed
  }
  result.out = ReadFile(prefix + ".out");
  result.err = ReadFile(prefix + ".err");
  return result;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

namespace {

// Member `key` of `object`, or nullptr (also when it is not an object).
const nlohmann::json* Member(const nlohmann::json& object,
                             absl::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

nlohmann::json Parse(absl::string_view text) {
  return nlohmann::json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                               /*allow_exceptions=*/false);
}

}  // namespace

std::optional<std::string> JsonField(absl::string_view line,
                                     absl::string_view key) {
  const nlohmann::json object = Parse(line);
  const nlohmann::json* member = Member(object, key);
  if (member == nullptr) return std::nullopt;
  return member->dump();
}

std::string JsonString(absl::string_view line, absl::string_view key) {
  const nlohmann::json object = Parse(line);
  const nlohmann::json* member = Member(object, key);
  if (member == nullptr || !member->is_string()) return "";
  return member->get<std::string>();
}

}  // namespace outbox::sink
