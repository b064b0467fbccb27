// Copyright (c) edge-outbox authors.
//
// outbox-lossy-disk: an NBD disk with a volatile write cache, for the
// virtual board's power cuts (tests/vm/README.md). This file reads the
// flags and wires WriteCache, PlatterFile and DiskServer together.

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tests/vm/disk_server.h"
#include "tests/vm/lossy_disk_os.h"
#include "tests/vm/write_cache.h"

namespace outbox::vm {
namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

constexpr char kUsage[] =
    "usage: outbox-lossy-disk --platter=IMAGE [--port=N] [--mode=M]\n"
    "                         [--keep=P] [--seed=N] [--flush-ms=T]\n"
    "                         [--honest]\n"
    "Serves IMAGE (an existing file, a multiple of 4096 bytes) as an NBD\n"
    "disk on 127.0.0.1:N (0, the default: any free port, printed) whose\n"
    "writes sit in a volatile cache until FLUSH or FUA.\n"
    "  --mode=drop|subset|reorder  what a power cut does to unflushed\n"
    "                     writes (default drop; see write_cache.h)\n"
    "  --keep=P           probability that subset/reorder keeps a block\n"
    "                     write (default 0.5)\n"
    "  --seed=N           seeds the cut draws (default: from the OS, printed)\n"
    "  --flush-ms=T       a FLUSH takes T ms (default 0): the writes stay\n"
    "                     unflushed, and meet a cut, until it is answered\n"
    "  --honest           every write is durable at once\n"
    "Signals: SIGUSR1 power cut, SIGUSR2 print counts, SIGTERM/SIGINT a last\n"
    "cut, counts and exit.\n";

struct Flags {
  std::string platter;
  int port = 0;
  WriteCacheOptions cache;
  int flush_ms = 0;
  bool help = false;
};

uint64_t RandomSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) | rd();
}

absl::Status BadFlag(const std::string& arg, const char* want) {
  return absl::InvalidArgumentError(
      absl::StrCat("bad flag ", arg, ": want ", want, " (see --help)"));
}

// Parses one "--name=value" or "--name" argument into `flags`.
absl::Status ParseFlag(const std::string& arg, Flags* flags) {
  const size_t eq = arg.find('=');
  const std::string name = arg.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
  if (name == "--help") {
    flags->help = true;
  } else if (name == "--honest") {
    flags->cache.honest = true;
  } else if (name == "--platter" && !value.empty()) {
    flags->platter = value;
  } else if (name == "--port") {
    if (!absl::SimpleAtoi(value, &flags->port) || flags->port < 0 ||
        flags->port > 65535) {
      return BadFlag(arg, "a port 0-65535");
    }
  } else if (name == "--mode") {
    absl::StatusOr<CutMode> mode = ParseCutMode(value);
    if (!mode.ok()) return mode.status();
    flags->cache.mode = *mode;
  } else if (name == "--keep") {
    double& keep = flags->cache.keep;
    if (!absl::SimpleAtod(value, &keep) || !(keep >= 0 && keep <= 1)) {
      return BadFlag(arg, "a probability 0-1");
    }
  } else if (name == "--flush-ms") {
    if (!absl::SimpleAtoi(value, &flags->flush_ms) || flags->flush_ms < 0) {
      return BadFlag(arg, "milliseconds >= 0");
    }
  } else if (name == "--seed") {
    if (!absl::SimpleAtoi(value, &flags->cache.seed)) {
      return BadFlag(arg, "an unsigned integer");
    }
  } else {
    return BadFlag(arg, "one of the flags of --help");
  }
  return absl::OkStatus();
}

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  flags.cache.seed = RandomSeed();
  for (int i = 1; i < argc; ++i) {
    absl::Status status = ParseFlag(argv[i], &flags);
    if (!status.ok()) return status;
  }
  if (!flags.help && flags.platter.empty()) {
    return absl::InvalidArgumentError("--platter=IMAGE is required");
  }
  return flags;
}

int Fail(int code, const absl::Status& status) {
  std::fprintf(stderr, "outbox-lossy-disk: %s\n",
               std::string(status.message()).c_str());
  return code;
}

int Run(int argc, char** argv) {
  absl::StatusOr<Flags> flags = ParseFlags(argc, argv);
  if (!flags.ok()) return Fail(kExitUsage, flags.status());
  if (flags->help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  absl::StatusOr<std::unique_ptr<PlatterFile>> platter =
      PlatterFile::Open(flags->platter);
  if (!platter.ok()) return Fail(kExitUsage, platter.status());
  if ((*platter)->size() % WriteCache::kBlockSize != 0) {
    return Fail(kExitUsage,
                absl::InvalidArgumentError(absl::StrCat(
                    flags->platter, " is ", (*platter)->size(),
                    " bytes, not a multiple of 4096 (truncate -s it)")));
  }
  WriteCache cache(platter->get(), flags->cache);
  absl::StatusOr<std::unique_ptr<DiskServer>> server = DiskServer::Start(
      flags->port, &cache, absl::Milliseconds(flags->flush_ms));
  if (!server.ok()) return Fail(kExitRuntime, server.status());
  absl::Status status = (*server)->Run();
  if (!status.ok()) return Fail(kExitRuntime, status);
  return 0;
}

}  // namespace
}  // namespace outbox::vm

int main(int argc, char** argv) { return outbox::vm::Run(argc, argv); }
