// Copyright (c) edge-outbox authors.

#include "tests/vm/image_check.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/testing/sink_process.h"

namespace outbox::vm {

const char* FsckVerdictName(FsckVerdict verdict) {
  switch (verdict) {
    case FsckVerdict::kClean:
      return "clean";
    case FsckVerdict::kCountsOnly:
      return "free_counts_only";
    case FsckVerdict::kExtentsShortened:
      return "extents_shortened";
    case FsckVerdict::kRepaired:
      return "repaired";
    case FsckVerdict::kFailed:
      return "failed";
  }
  return "?";
}

FsckVerdict JudgeFsck(int exit_code, const std::string& output) {
  if (exit_code == 0) return FsckVerdict::kClean;
  if (exit_code != 1) return FsckVerdict::kFailed;
  // With -y every problem is followed by "Fix? yes" (or "Clear? yes",
  // "Salvage? yes", ...): the line before each answer names the problem.
  // The extent message asks on its own line ("... could be shorter.
  // Optimize? yes").
  const std::vector<std::string> lines = absl::StrSplit(output, '\n');
  bool shortened = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!absl::EndsWith(lines[i], "? yes")) continue;
    if (absl::StrContains(lines[i], "extent tree (at level") &&
        absl::EndsWith(lines[i], "could be shorter.  Optimize? yes")) {
      shortened = true;
      continue;
    }
    const std::string& problem = i > 0 ? lines[i - 1] : lines[i];
    if (!absl::StartsWith(problem, "Free blocks count wrong") &&
        !absl::StartsWith(problem, "Free inodes count wrong")) {
      return FsckVerdict::kRepaired;
    }
  }
  return shortened ? FsckVerdict::kExtentsShortened : FsckVerdict::kCountsOnly;
}

absl::StatusOr<ImageCheck> CheckImage(const ImageTools& tools,
                                      const std::string& platter,
                                      const std::string& work) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::create_directories(work, error);
  const std::string copy = work + "/disk.img";
  ImageCheck check;
  check.store = work + "/store";
  fs::remove_all(check.store, error);
  if (!fs::copy_file(platter, copy, fs::copy_options::overwrite_existing,
                     error)) {
    return absl::InternalError(
        absl::StrCat("cannot copy ", platter, ": ", error.message()));
  }
  absl::StatusOr<sink::ExitResult> fsck =
      sink::RunToExit(tools.e2fsck, work, {"-fy", copy}, absl::Seconds(120));
  if (!fsck.ok()) return fsck.status();
  check.fsck_exit = fsck->exit_code;
  check.fsck_output = fsck->out + fsck->err;
  check.verdict = JudgeFsck(check.fsck_exit, check.fsck_output);
  // rdump writes <dir>/store; debugfs reads the image as it is, which is
  // why it runs on e2fsck's copy (journal replayed).
  absl::StatusOr<sink::ExitResult> dump = sink::RunToExit(
      tools.debugfs, work, {"-R", absl::StrCat("rdump /store ", work), copy},
      absl::Seconds(120));
  if (!dump.ok()) return dump.status();
  if (!fs::exists(check.store + "/CURRENT", error)) {
    return absl::InternalError(absl::StrCat(
        "no store on the disk after the cut; e2fsck exit ", check.fsck_exit,
        ":\n", check.fsck_output, "\ndebugfs:\n", dump->out, dump->err));
  }
  return check;
}

}  // namespace outbox::vm
