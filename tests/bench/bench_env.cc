// Copyright (c) edge-outbox authors.

#include "tests/bench/bench_env.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace outbox::bench {
namespace {

void ReadInt(const char* name, int* value) {
  const char* text = std::getenv(name);
  int parsed = 0;
  if (text != nullptr && absl::SimpleAtoi(text, &parsed) && parsed >= 0) {
    *value = parsed;
  }
}

absl::Duration FromTimespec(const timespec& ts) {
  return absl::Seconds(ts.tv_sec) + absl::Nanoseconds(ts.tv_nsec);
}

// The value after "<field>:" in a /proc file of such lines, or "".
std::string ProcField(const std::string& file, const std::string& field) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, field) && absl::ConsumePrefix(&rest, ":")) {
      return std::string(absl::StripAsciiWhitespace(rest));
    }
  }
  return "";
}

std::string ProcPath(pid_t pid, const char* name) {
  return pid == 0 ? absl::StrCat("/proc/self/", name)
                  : absl::StrCat("/proc/", pid, "/", name);
}

}  // namespace

Scale Scale::FromEnv() {
  Scale s;
  ReadInt("OUTBOX_BENCH_COMMITS", &s.commits);
  ReadInt("OUTBOX_BENCH_PRODUCERS", &s.producers);
  ReadInt("OUTBOX_BENCH_DRAIN_EVENTS", &s.drain_events);
  ReadInt("OUTBOX_BENCH_CELLULAR_EVENTS", &s.cellular_events);
  s.cellular_events = std::max(s.cellular_events, 1);
  ReadInt("OUTBOX_BENCH_EVENTS", &s.events);
  ReadInt("OUTBOX_BENCH_IDLE_SECONDS", &s.idle_seconds);
  ReadInt("OUTBOX_BENCH_OFFLINE_COMMITS", &s.offline_commits);
  ReadInt("OUTBOX_BENCH_OFFLINE_SECONDS", &s.offline_seconds);
  s.producers = std::max(s.producers, 1);
  const char* sizes = std::getenv("OUTBOX_BENCH_OPEN_SIZES");
  for (absl::string_view size :
       absl::StrSplit(sizes != nullptr ? sizes : "100000,1000000", ',',
                      absl::SkipWhitespace())) {
    int n = 0;
    if (absl::SimpleAtoi(size, &n) && n >= 0) s.open_sizes.push_back(n);
  }
  const char* sections = std::getenv("OUTBOX_BENCH_SECTIONS");
  if (sections != nullptr) {
    s.sections = absl::StrSplit(sections, ',', absl::SkipWhitespace());
  }
  return s;
}

std::string Scale::Describe() const {
  return absl::StrCat(
      "OUTBOX_BENCH_COMMITS=", commits, " OUTBOX_BENCH_PRODUCERS=", producers,
      " OUTBOX_BENCH_DRAIN_EVENTS=", drain_events,
      " OUTBOX_BENCH_CELLULAR_EVENTS=", cellular_events,
      " OUTBOX_BENCH_EVENTS=", events,
      " OUTBOX_BENCH_OPEN_SIZES=", absl::StrJoin(open_sizes, ","),
      " OUTBOX_BENCH_IDLE_SECONDS=", idle_seconds,
      " OUTBOX_BENCH_OFFLINE_COMMITS=", offline_commits,
      " OUTBOX_BENCH_OFFLINE_SECONDS=", offline_seconds,
      sections.empty() ? ""
                       : absl::StrCat(" OUTBOX_BENCH_SECTIONS=",
                                      absl::StrJoin(sections, ",")));
}

void Latencies::Merge(const Latencies& other) {
  us_.insert(us_.end(), other.us_.begin(), other.us_.end());
}

double Latencies::Percentile(double q) {
  if (us_.empty()) return 0;
  std::sort(us_.begin(), us_.end());
  const size_t at = static_cast<size_t>(q / 100.0 * (us_.size() - 1) + 0.5);
  return us_[std::min(at, us_.size() - 1)];
}

absl::StatusOr<std::unique_ptr<AppendFile>> AppendFile::Open(
    const std::string& path, size_t bytes) {
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  // Space reserved ahead, as RocksDB reserves its WAL's: appends then change
  // the file's size but allocate no blocks.
  fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, off_t{64} << 20);
  return std::unique_ptr<AppendFile>(new AppendFile(fd, bytes));
}

AppendFile::~AppendFile() { close(fd_); }

absl::Status AppendFile::AppendAndSync() {
  if (write(fd_, block_.data(), block_.size()) !=
          static_cast<ssize_t>(block_.size()) ||
      fdatasync(fd_) != 0) {
    return absl::UnavailableError(
        absl::StrCat("append + fdatasync: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

double ProbeDisk(const std::string& dir, size_t bytes,
                 absl::Duration duration) {
  const std::string path = dir + "/disk-probe.dat";
  absl::StatusOr<std::unique_ptr<AppendFile>> file =
      AppendFile::Open(path, bytes);
  if (!file.ok()) return 0;
  int64_t syncs = 0;
  Stopwatch wall;
  while (wall.Elapsed() < duration && (*file)->AppendAndSync().ok()) ++syncs;
  const double seconds = absl::ToDoubleSeconds(wall.Elapsed());
  file->reset();
  unlink(path.c_str());
  return syncs / seconds;
}

absl::Duration ThreadCpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return FromTimespec(ts);
}

absl::Duration ThreadCpu(pthread_t thread) {
  clockid_t clock;
  timespec ts{};
  if (pthread_getcpuclockid(thread, &clock) != 0) return absl::ZeroDuration();
  clock_gettime(clock, &ts);
  return FromTimespec(ts);
}

absl::Duration ThreadKernelCpu() {
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return absl::ZeroDuration();
  return absl::Seconds(usage.ru_stime.tv_sec) +
         absl::Microseconds(usage.ru_stime.tv_usec);
}

absl::Duration ProcessCpu() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return FromTimespec(ts);
}

absl::Duration ProcessCpu(pid_t pid) {
  std::ifstream in(ProcPath(pid, "stat"));
  std::string stat((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  // "pid (comm) state ...": the command may hold spaces; count from ')'.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return absl::ZeroDuration();
  std::vector<absl::string_view> fields = absl::StrSplit(
      absl::string_view(stat).substr(paren + 2), ' ', absl::SkipEmpty());
  int64_t utime = 0, stime = 0;  // fields 14 and 15 of stat(5), in ticks
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return absl::ZeroDuration();
  }
  return absl::Seconds(static_cast<double>(utime + stime) /
                       sysconf(_SC_CLK_TCK));
}

int64_t WriteBytes(pid_t pid) {
  int64_t bytes = -1;
  if (!absl::SimpleAtoi(ProcField(ProcPath(pid, "io"), "write_bytes"),
                        &bytes)) {
    return -1;
  }
  return bytes;
}

absl::Status SyncFiles(const std::string& dir) {
  std::error_code error;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(dir, error)) {
    if (!entry.is_regular_file()) continue;
    const std::string path = entry.path().string();
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
      const int e = errno;
      if (fd >= 0) close(fd);
      return absl::UnavailableError(
          absl::StrCat("syncing ", path, ": ", std::strerror(e)));
    }
    close(fd);
  }
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("listing ", dir, ": ", error.message()));
  }
  return absl::OkStatus();
}

int64_t StatusKib(const std::string& field, pid_t pid) {
  std::string value = ProcField(ProcPath(pid, "status"), field);
  int64_t kib = -1;
  if (!absl::SimpleAtoi(absl::StripSuffix(value, " kB"), &kib)) return -1;
  return kib;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return absl::StrCat(one, " ", five, " ", fifteen);
}

std::string FileSystemType(const std::string& path) {
  struct statfs fs {};
  if (statfs(path.c_str(), &fs) != 0) return "unknown";
  static const std::pair<long, const char*> kNames[] = {
      {EXT4_SUPER_MAGIC, "ext4"}, {TMPFS_MAGIC, "tmpfs"},
      {XFS_SUPER_MAGIC, "xfs"},   {BTRFS_SUPER_MAGIC, "btrfs"},
      {F2FS_SUPER_MAGIC, "f2fs"}, {OVERLAYFS_SUPER_MAGIC, "overlayfs"},
      {NFS_SUPER_MAGIC, "nfs"},   {0x65735546, "fuse"},
  };
  for (const auto& [magic, name] : kNames) {
    if (static_cast<long>(fs.f_type) == magic) return name;
  }
  return absl::StrCat("0x", absl::Hex(fs.f_type));
}

}  // namespace outbox::bench
