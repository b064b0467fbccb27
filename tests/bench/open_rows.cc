// Copyright (c) edge-outbox authors.
//
// Open time and resident memory per backlog size: the first open after the
// store was filled, then a reopen under each memory profile. Each open runs
// in a child process of its own (this program again, with --open-child), so
// that no figure carries the parent's heap or another open's. The child's
// RSS includes this program's own pages: compare with the empty store's.
// Stores are warm in the page cache: they were just written.
//
// Then the real outbox-agent, idle on each store under the small profile
// with its receiver unreachable: the resident memory a board pays to hold a
// backlog while offline, against the same agent on an empty store.

#include <signal.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "platform/child_process.h"
#include "tests/bench/bench_ops.h"
#include "tests/bench/bench_sections.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/target_command.h"

namespace outbox::bench {
namespace {

struct OpenFigures {
  double open_ms = 0;
  long peak_kib = 0;   // VmHWM after the open
  long after_kib = 0;  // VmRSS after the open
  long anon_kib = 0;   // of which RssAnon (heap, stacks): outbox-agent only
  long file_kib = 0;   // and RssFile (mapped binaries and shared libraries)
};

const char* ProfileName(Options::MemoryProfile profile) {
  return profile == Options::MemoryProfile::kSmall ? "small" : "default";
}

absl::StatusOr<OpenFigures> OpenInChild(const std::string& self,
                                        const std::string& dir,
                                        const std::string& path,
                                        Options::MemoryProfile profile) {
  OUTBOX_ASSIGN_OR_RETURN(
      sink::ExitResult child,
      sink::RunToExit(self, dir, {"--open-child", path, ProfileName(profile)},
                      absl::Minutes(10)));
  OpenFigures f;
  if (child.exit_code != 0 ||
      std::sscanf(child.out.c_str(), "%lf %ld %ld", &f.open_ms, &f.peak_kib,
                  &f.after_kib) != 3) {
    return absl::InternalError(absl::StrCat("open child for ", path,
                                            " exited with ", child.exit_code,
                                            ": ", child.err));
  }
  return f;
}

// One kind of open, in the order they run on each store.
struct OpenKind {
  const char* key;
  const char* label;
  Options::MemoryProfile profile;
};
constexpr OpenKind kKinds[] = {
    // RocksDB replays the log the fill left (up to a 64 MiB memtable) and
    // writes it to a table file: what a restart after writing costs.
    {"first", "first open after the fill (replays its log), default profile",
     Options::MemoryProfile::kDefault},
    {"default", "reopened, default profile", Options::MemoryProfile::kDefault},
    {"small", "reopened, small profile", Options::MemoryProfile::kSmall},
};

std::string Key(const OpenKind& kind, int size) {
  return absl::StrCat("open.", kind.key, ".", size);
}

void AddRow(const OpenKind& kind, int size, const OpenFigures& f,
            Table* table) {
  const std::string key = Key(kind, size);
  table->AddFigure(
      key + ".rss",
      absl::StrCat("after-open RSS (", size, " pending, ", kind.key, ")"),
      f.after_kib);
  std::vector<Ratio> ratios;
  if (size > 0) {
    ratios = {Vs(Key(kind, 0)), Ratio{key + ".rss", Key(kind, 0) + ".rss"}};
  }
  if (kind.profile == Options::MemoryProfile::kSmall) {
    ratios.push_back(Ratio{key + ".rss", Key(kKinds[1], size) + ".rss"});
  }
  table->Add(Row{key,
                 absl::StrCat("Store open, ", size, " pending: ", kind.label),
                 f.open_ms, "ms",
                 absl::StrFormat("peak RSS %.1f MiB, after open %.1f MiB "
                                 "(child process)",
                                 f.peak_kib / 1024.0, f.after_kib / 1024.0),
                 std::move(ratios)});
}

// Waits until outbox-agent has logged that its destination is unreachable
// (it opened the store, indexed it and tried), then a moment more, and
// reads its memory.
absl::StatusOr<OpenFigures> AgentIdle(const std::string& dir,
                                      const std::string& path, int size) {
  const std::string base = absl::StrCat(dir, "/agent-idle-", size);
  std::ofstream(base + ".textproto")
      << "destinations { name: \"r\" url: \"http://127.0.0.1:9/hook\" }\n"
      << "routes { event_type: \"*\" destination: \"r\" }\n"
      << "agent { memory_profile: \"small\" }\n";
  Stopwatch wall;
  OUTBOX_ASSIGN_OR_RETURN(
      std::unique_ptr<ChildProcess> agent,
      ChildProcess::StartToFiles(
          testing::TargetCommand(OUTBOX_AGENT_BINARY, {"--db", path, "--config",
                                                       base + ".textproto"}),
          base + ".out", base + ".err"));
  // An empty store gives the agent nothing to try: it is idle at once.
  const absl::Time deadline = absl::Now() + absl::Minutes(5);
  while (size > 0) {
    bool offline = false;
    for (const std::string& line : sink::ReadLines(base + ".err")) {
      offline = offline || line.find("unreachable") != std::string::npos;
    }
    if (offline) break;
    if (agent->Wait(absl::Now()) >= 0 || absl::Now() > deadline) {
      return absl::InternalError(absl::StrCat(
          "outbox-agent on ", path, " never reported its receiver offline; ",
          "its log: ", base, ".err"));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  OpenFigures f;
  f.open_ms = absl::ToDoubleMilliseconds(wall.Elapsed());
  absl::SleepFor(absl::Seconds(2));  // idle: probing only
  f.peak_kib = StatusKib("VmHWM", agent->pid());
  f.after_kib = StatusKib("VmRSS", agent->pid());
  f.anon_kib = StatusKib("RssAnon", agent->pid());
  f.file_kib = StatusKib("RssFile", agent->pid());
  OUTBOX_RETURN_IF_ERROR(agent->Signal(SIGTERM));
  if (agent->Wait(absl::Now() + absl::Seconds(30)) != 0) {
    return absl::InternalError(
        absl::StrCat("outbox-agent on ", path,
                     " did not stop cleanly; its log: ", base, ".err"));
  }
  return f;
}

void AddAgentRow(int size, const OpenFigures& f, Table* table) {
  const std::string key = absl::StrCat("agent.idle.", size);
  std::vector<Ratio> ratios;
  if (size > 0) ratios = {Vs("agent.idle.0")};
  table->Add(Row{
      key,
      absl::StrCat("outbox-agent idle RSS, ", size,
                   " pending, small profile, receiver offline"),
      f.after_kib / 1024.0, "MiB",
      absl::StrCat(
          absl::StrFormat("peak %.1f MiB; RssAnon %.1f MiB, "
                          "RssFile %.1f MiB (shared libraries)",
                          f.peak_kib / 1024.0, f.anon_kib / 1024.0,
                          f.file_kib / 1024.0),
          size == 0 ? ""
                    : absl::StrFormat("; offline reported %.0f ms after start",
                                      f.open_ms)),
      std::move(ratios)});
}

}  // namespace

absl::Status RunOpenRows(const Scale& scale, const std::string& dir,
                         const std::string& self, Table* table) {
  std::vector<int> sizes = {0};
  sizes.insert(sizes.end(), scale.open_sizes.begin(), scale.open_sizes.end());
  for (int size : sizes) {
    OUTBOX_ASSIGN_OR_RETURN(std::string path, PendingStore(dir, size));
    for (const OpenKind& kind : kKinds) {
      OUTBOX_ASSIGN_OR_RETURN(OpenFigures f,
                              OpenInChild(self, dir, path, kind.profile));
      AddRow(kind, size, f, table);
    }
    OUTBOX_ASSIGN_OR_RETURN(OpenFigures idle, AgentIdle(dir, path, size));
    AddAgentRow(size, idle, table);
  }
  return absl::OkStatus();
}

int RunOpenChild(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: outbox_bench --open-child PATH PROFILE\n");
    return 2;
  }
  const Options::MemoryProfile profile = std::string(argv[3]) == "small"
                                             ? Options::MemoryProfile::kSmall
                                             : Options::MemoryProfile::kDefault;
  Stopwatch wall;
  absl::StatusOr<std::unique_ptr<Store>> store =
      OpenBenchStore(argv[2], /*sync=*/true, profile);
  const double ms = absl::ToDoubleMilliseconds(wall.Elapsed());
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  std::printf("%f %ld %ld\n", ms, static_cast<long>(StatusKib("VmHWM")),
              static_cast<long>(StatusKib("VmRSS")));
  return (*store)->Close().ok() ? 0 : 1;
}

}  // namespace outbox::bench
