// Copyright (c) edge-outbox authors.

#include "tools/recorder/mosquitto_broker.h"

#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "platform/reserved_port.h"

namespace outbox::recorder {
namespace {

namespace fs = std::filesystem;

bool IsExecutableFile(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::is_regular_file(status)) return false;
  const fs::perms exec =
      fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
  return (status.permissions() & exec) != fs::perms::none;
}

// Two distinct free ports (both held while the second is picked); released
// on return for mosquitto to bind.
absl::Status FreePorts(int* first, int* second) {
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<ReservedPort> a,
                          ReservedPort::Reserve());
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<ReservedPort> b,
                          ReservedPort::Reserve());
  *first = a->port();
  *second = b->port();
  return absl::OkStatus();
}

std::string ReadFile(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

// Runs mosquitto_passwd to make `file` with one user.
absl::Status WritePasswordFile(const std::string& dir, const std::string& file,
                               const BrokerConfig& config) {
  OUTBOX_ASSIGN_OR_RETURN(const std::string binary,
                          FindMosquittoProgram("mosquitto_passwd"));
  const std::string err = dir + "/mosquitto_passwd.err";
  OUTBOX_ASSIGN_OR_RETURN(
      std::unique_ptr<ChildProcess> child,
      ChildProcess::StartToFiles(
          {binary, "-c", "-b", file, config.user, config.password},
          dir + "/mosquitto_passwd.out", err));
  const int code = child->Wait(absl::Now() + absl::Seconds(10));
  if (code == -1) child->Kill();
  if (code != 0) {
    return absl::InternalError(
        absl::StrCat("mosquitto_passwd failed: ", ReadFile(err)));
  }
  return absl::OkStatus();
}

absl::Status WriteConfig(const std::string& dir, const BrokerConfig& config,
                         int port, int plain_port) {
  std::ofstream conf(dir + "/mosquitto.conf");
  // As root (CI), mosquitto would drop to the "mosquitto" user, which
  // cannot read a private directory of ours.
  conf << "user root\nlog_dest stderr\n"
       << "listener " << plain_port << " 127.0.0.1\n";
  if (config.persistence) {
    conf << "persistence true\npersistence_location " << dir
         << "/\nautosave_interval 1\nmax_queued_messages 0\n";
  } else {
    conf << "persistence false\n";
  }
  if (!config.ca_file.empty()) {
    conf << "listener " << port << " 127.0.0.1\n"
         << "cafile " << config.ca_file << "\ncertfile " << config.cert_file
         << "\nkeyfile " << config.key_file << "\nrequire_certificate true\n";
  }
  if (!config.acl.empty()) {
    std::ofstream(dir + "/acl") << config.acl << "\n";
    conf << "acl_file " << dir << "/acl\n";
  }
  if (config.user.empty()) {
    conf << "allow_anonymous true\n";
  } else {
    const std::string file = dir + "/passwords";
    conf << "allow_anonymous false\npassword_file " << file << "\n";
    OUTBOX_RETURN_IF_ERROR(WritePasswordFile(dir, file, config));
  }
  conf.close();
  if (!conf) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", dir, "/mosquitto.conf"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> FindMosquittoProgram(absl::string_view name) {
  const char* path = std::getenv("PATH");
  std::vector<std::string> dirs =
      absl::StrSplit(path == nullptr ? "" : path, ':', absl::SkipEmpty());
  dirs.push_back("/usr/sbin");
  for (const std::string& dir : dirs) {
    const fs::path candidate = fs::path(dir) / std::string(name);
    if (IsExecutableFile(candidate)) return candidate.string();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      name, " is not installed (not on PATH, not in /usr/sbin): apt-get ",
      "install mosquitto, or run toolchains/install-deps.sh"));
}

absl::StatusOr<std::unique_ptr<MosquittoBroker>> MosquittoBroker::Start(
    const std::string& dir, const BrokerConfig& config) {
  OUTBOX_ASSIGN_OR_RETURN(std::string binary,
                          FindMosquittoProgram("mosquitto"));
  int plain_port = 0, tls_port = 0;
  OUTBOX_RETURN_IF_ERROR(FreePorts(&plain_port, &tls_port));
  const int port = config.ca_file.empty() ? plain_port : tls_port;
  OUTBOX_RETURN_IF_ERROR(WriteConfig(dir, config, port, plain_port));
  std::unique_ptr<MosquittoBroker> broker(
      new MosquittoBroker(std::move(binary), dir, port, plain_port));
  OUTBOX_RETURN_IF_ERROR(broker->Restart());
  return broker;
}

absl::Status MosquittoBroker::Restart() {
  OUTBOX_ASSIGN_OR_RETURN(
      process_, ChildProcess::StartToFiles(
                    {binary_, "-c", dir_ + "/mosquitto.conf"},
                    dir_ + "/mosquitto.out", dir_ + "/mosquitto.err"));
  return WaitReady();
}

absl::Status MosquittoBroker::WaitReady() {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!LoopbackPortAccepts(plain_port_) ||
         (port_ != plain_port_ && !LoopbackPortAccepts(port_))) {
    if (process_->Wait(absl::Now()) != -1 || absl::Now() > deadline) {
      return absl::InternalError(
          absl::StrCat("mosquitto did not start: ", Stderr()));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::OkStatus();
}

absl::Status MosquittoBroker::Pause() { return process_->Signal(SIGSTOP); }

absl::Status MosquittoBroker::Resume() { return process_->Signal(SIGCONT); }

void MosquittoBroker::Kill() {
  if (process_ != nullptr && !process_->reaped()) process_->Kill();
}

absl::Status MosquittoBroker::Stop() {
  if (process_ == nullptr || process_->reaped()) return absl::OkStatus();
  OUTBOX_RETURN_IF_ERROR(process_->Signal(SIGTERM));
  if (process_->Wait(absl::Now() + absl::Seconds(20)) == -1) {
    return absl::InternalError("mosquitto did not exit after SIGTERM");
  }
  return absl::OkStatus();
}

std::string MosquittoBroker::Stderr() const {
  return ReadFile(dir_ + "/mosquitto.err");
}

}  // namespace outbox::recorder
