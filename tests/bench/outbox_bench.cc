// Copyright (c) edge-outbox authors.
//
// outbox_bench: the side-by-side benchmark of issue 11. One run, one disk
// (every store under one directory: $TEST_TMPDIR, which CMake points into
// the build tree), one table: each row a figure and its ratio against the
// baseline it names, all measured in this run. The scale comes from
// OUTBOX_BENCH_* environment variables (bench_env.h); the defaults are the
// full scale. It prints figures and never judges them: it fails only when
// an operation fails. Label bench (`make bench`); a tiny-scale run in the
// unit suite checks that it runs end to end.

#include <curl/curl.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tests/bench/bench_env.h"
#include "tests/bench/bench_sections.h"
#include "tests/bench/bench_table.h"
#include "tests/testing/temp_dir.h"

namespace outbox::bench {
namespace {

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, "model name")) {
      return std::string(absl::StripAsciiWhitespace(
          absl::StripLeadingAsciiWhitespace(rest).substr(1)));
    }
  }
  return "unknown CPU";
}

void PrintHeader(const Scale& scale, const std::string& dir) {
  utsname host{};
  uname(&host);
  std::printf("outbox_bench, %s\n",
              absl::FormatTime("%Y-%m-%d %H:%M:%S %Z", absl::Now(),
                               absl::LocalTimeZone())
                  .c_str());
  std::printf("machine: %u cores, %s, Linux %s\n",
              std::thread::hardware_concurrency(), CpuModel().c_str(),
              host.release);
  std::printf("stores: %s (%s)\n", dir.c_str(), FileSystemType(dir).c_str());
  std::printf("scale: %s\n", scale.Describe().c_str());
  std::printf("load average at start: %s\n\n", LoadAverage().c_str());
  std::fflush(stdout);
}

struct Section {
  const char* name;
  std::function<absl::Status()> run;
};

// Runs the sections in order, stopping at the first failure. Progress goes
// to stderr as it happens; the table comes at the end, in one piece. Before
// each section a 1 s probe of the disk (768 B appends + fdatasync) records
// how fast it was then: on a shared machine it drifts.
bool RunSections(const std::string& dir, const std::vector<Section>& sections,
                 std::vector<std::string>* timings) {
  for (const Section& section : sections) {
    const double disk = ProbeDisk(dir, 768, absl::Seconds(1));
    std::fprintf(stderr, "outbox_bench: %s ...\n", section.name);
    Stopwatch wall;
    const absl::Status s = section.run();
    timings->push_back(
        absl::StrFormat("%s %.0f s (disk %.0f fdatasync/s)", section.name,
                        absl::ToDoubleSeconds(wall.Elapsed()), disk));
    if (!s.ok()) {
      std::printf("FAILED in %s: %s\n\n", section.name, s.ToString().c_str());
      return false;
    }
  }
  return true;
}

int Main() {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  const Scale scale = Scale::FromEnv();
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  testing::TempDir dir;
  PrintHeader(scale, dir.path());
  Table table;
  const std::string& d = dir.path();
  std::vector<Section> sections = {
      {"commits", [&] { return RunCommitRows(scale, d, &table); }},
      {"acknowledgements", [&] { return RunAckRows(scale, d, &table); }},
      {"drain", [&] { return RunDrainRows(scale, d, &table); }},
      {"process", [&] { return RunProcessDrainRows(scale, d, &table); }},
      {"batch", [&] { return RunBatchRows(scale, d, &table); }},
      {"wire", [&] { return RunWireRows(scale, d, &table); }},
      {"cellular", [&] { return RunDrainTimeRows(scale, d, &table); }},
      {"churn", [&] { return RunChurnRows(scale, d, &table); }},
      {"open", [&] { return RunOpenRows(scale, d, self, &table); }},
      {"offline", [&] { return RunOfflineRows(scale, d, &table); }},
      {"ratelimit", [&] { return RunRateLimitRows(scale, d, &table); }},
      {"metrics", [&] { return RunMetricsRows(scale, d, &table); }},
      {"workflows", [&] { return RunWorkflowRows(scale, d, &table); }},
  };
  if (!scale.sections.empty()) {
    sections.erase(std::remove_if(sections.begin(), sections.end(),
                                  [&](const Section& section) {
                                    return absl::c_find(
                                               scale.sections,
                                               std::string(section.name)) ==
                                           scale.sections.end();
                                  }),
                   sections.end());
  }
  Stopwatch wall;
  std::vector<std::string> timings;
  const bool ok = RunSections(d, sections, &timings);
  table.Print(stdout);
  std::printf("\n%zu rows in %.0f s (%s); load average at end: %s\n",
              table.rows(), absl::ToDoubleSeconds(wall.Elapsed()),
              absl::StrJoin(timings, ", ").c_str(), LoadAverage().c_str());
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace outbox::bench

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--open-child") {
    return outbox::bench::RunOpenChild(argc, argv);
  }
  return outbox::bench::Main();
}
