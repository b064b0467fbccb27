// Copyright (c) edge-outbox authors.
//
// What a power cut left on the board's disk, read on the host without root:
// e2fsck on a copy of the platter (which also replays ext4's journal, as
// the next mount would), then debugfs copies the store out of the repaired
// copy so that Store::OpenReadOnly can open it. The platter itself is left
// alone: the next boot mounts what the cut left, not what e2fsck made.

#ifndef OUTBOX_TESTS_VM_IMAGE_CHECK_H_
#define OUTBOX_TESTS_VM_IMAGE_CHECK_H_

#include <string>

#include "absl/status/statusor.h"

namespace outbox::vm {

struct ImageTools {
  std::string mkfs;  // mkfs.ext4
  std::string e2fsck;
  std::string debugfs;
};

// e2fsck's verdict on one copy of the disk.
enum class FsckVerdict {
  kClean,             // exit 0: nothing to fix once the journal was replayed
  kCountsOnly,        // exit 1, and every fix was a free block or inode count:
                      // ext4 updates the superblock's counts lazily (the kernel
                      // recomputes them when it mounts after a crash), so an
                      // unclean stop leaves them stale; nothing is lost
  kExtentsShortened,  // exit 1, the free counts as above and at least one
                      // "extent tree (at level N) could be shorter.
                      // Optimize? yes": Pass 1E rewrites a valid tree
                      // that is deeper than it needs to be (ext4 does
                      // not shrink a tree as a file's extents merge);
                      // nothing was wrong
  kRepaired,          // exit 1 with any other fix: damage
  kFailed,            // exit 2 or more: not repaired, or e2fsck failed
};
const char* FsckVerdictName(FsckVerdict verdict);

struct ImageCheck {
  int fsck_exit = -1;
  FsckVerdict verdict = FsckVerdict::kFailed;
  std::string fsck_output;  // e2fsck's stdout and stderr
  std::string store;        // the store's copy: "<work>/store"
};

// The verdict for e2fsck's exit code and output.
FsckVerdict JudgeFsck(int exit_code, const std::string& output);

// Copies `platter` to `<work>/disk.img`, runs `e2fsck -fy` on the copy and
// copies /store out of it into `<work>/store` (both replaced if present).
// Errors: kInternal if a tool could not run or the copy holds no store
// (the message carries their output).
absl::StatusOr<ImageCheck> CheckImage(const ImageTools& tools,
                                      const std::string& platter,
                                      const std::string& work);

}  // namespace outbox::vm

#endif  // OUTBOX_TESTS_VM_IMAGE_CHECK_H_
