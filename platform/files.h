// Copyright (c) edge-outbox authors.
//
// Reading small files a user hands the programs (configuration, secrets,
// header values) safely: a FIFO or device given as a path is refused at
// once instead of blocking in open() or read(), the checks look at the file
// actually opened (fstat on the descriptor, not stat on the name, which
// another process could swap in between), a file meant to be private to its
// owner is refused if group or others can reach it, and a file far larger
// than it should be is not read into memory.
// Stateless; safe for concurrent use.

#ifndef OUTBOX_PLATFORM_FILES_H_
#define OUTBOX_PLATFORM_FILES_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace outbox {

// What ReadFileChecked() requires of a file, and how its messages name it.
struct ReadFileOptions {
  // What the file is, as messages call it ("secrets file"). Default: "file".
  std::string what = "file";
  // If true, messages name the file "<what> <path>"; if false, by `what`
  // alone, for a file whose path may be a secret written in the wrong place.
  // Default: true.
  bool show_path = true;
  // If true, the file must be accessible to its owner only (mode & 077 == 0):
  // anyone who can read a secret can use it, and anyone who can write it can
  // redirect trust, so like ssh with private keys the file is refused rather
  // than warned about. Default: false.
  bool require_private = false;
  // Refuse a file longer than this. Default: 1 MiB.
  size_t max_bytes = size_t{1} << 20;
};

// The whole content of `path`, which must be a regular file meeting
// `options`. Errors (messages name the file as `options` says, never its
// content):
//   kNotFound            "<name> does not exist";
//   kPermissionDenied    this process may not read it;
//   kFailedPrecondition  not a regular file ("<name> is not a regular
//                        file"), or accessible to group or others when it
//                        must be private (the message says the chmod 600);
//   kInvalidArgument     larger than options.max_bytes;
//   other PosixError codes of open, fstat and read.
absl::StatusOr<std::string> ReadFileChecked(const std::string& path,
                                            const ReadFileOptions& options);

// OK if ReadFileChecked(path, options) would open `path` (it exists, is a
// regular file this process may read, and is private if it must be);
// reads none of it. Errors: as ReadFileChecked's, but for the size.
absl::Status CheckFileReadable(const std::string& path,
                               const ReadFileOptions& options);

// OK if `path` is a directory this process may open for reading (options:
// its name in messages; the rest is ignored). Errors: kNotFound,
// kPermissionDenied, kFailedPrecondition (not a directory), other PosixError
// codes of open.
absl::Status CheckDirectoryReadable(const std::string& path,
                                    const ReadFileOptions& options);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_FILES_H_
