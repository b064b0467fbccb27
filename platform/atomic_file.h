// Copyright (c) edge-outbox authors.
//
// Replacing a file so that a reader sees the old content or the new, never
// half of it: the content goes to a temporary file in the same directory,
// which rename() then puts in place (atomic on POSIX file systems). This is
// the textfile-collector convention of Prometheus' node_exporter, for the
// agent's metrics file. Stateless; safe for concurrent use on different
// paths.

#ifndef OUTBOX_PLATFORM_ATOMIC_FILE_H_
#define OUTBOX_PLATFORM_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace outbox {

// Writes `content` to "<path>.tmp" (mode 0644: a scraper usually runs as
// another user) and renames it to `path`. Not fsync'ed: the file is
// rewritten soon, and after a power cut a scraper may see the previous
// version, or none, but never a torn one. On failure the temporary file is
// removed and `path` is as it was.
// Errors: PosixError codes of open, write and rename, the message naming
// the file ("writing metrics file /var/lib/...: No space left on device").
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view content);

// OK if `dir` is an existing directory this process may create files in.
// Errors: kNotFound ("directory D does not exist"), kFailedPrecondition
// (not a directory), kPermissionDenied (not writable), other PosixError
// codes of stat.
absl::Status CheckDirectoryWritable(const std::string& dir);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_ATOMIC_FILE_H_
