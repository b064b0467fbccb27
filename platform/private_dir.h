// Copyright (c) edge-outbox authors.
//
// Directories only their owner may enter. A store's directory holds every
// sale and payload in files RocksDB creates with the umask's mode (0644
// under the usual 022), so the directory's own mode is what keeps them
// private: like ssh with a private key, a directory that group or others can
// reach is refused rather than warned about, and a new one is made 0700
// whatever the umask.
// Stateless; safe for concurrent use.

#ifndef OUTBOX_PLATFORM_PRIVATE_DIR_H_
#define OUTBOX_PLATFORM_PRIVATE_DIR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace outbox {

// Creates the directory `path` (its parent must exist) with mode 0700, or,
// if it exists already, sets its mode to 0700. The mode is set explicitly
// after mkdir(), so the umask cannot leave it wider (or narrower). Errors:
// kFailedPrecondition (exists and is not a directory), and PosixError codes
// of mkdir and chmod (kPermissionDenied for a directory of another user).
absl::Status MakePrivateDirectory(const std::string& path);

// The permission bits (mode & 07777) of the directory at `path`, following
// symbolic links. Errors: kNotFound, kFailedPrecondition (not a directory),
// other PosixError codes of stat.
absl::StatusOr<unsigned> DirectoryMode(const std::string& path);

// OK if the directory at `path` gives group and others no access at all
// (mode & 077 == 0). Otherwise kFailedPrecondition, naming it as
// "<what> '<path>'", its mode, and the chmod that fixes it; or DirectoryMode's
// errors.
absl::Status CheckDirectoryPrivate(const std::string& path,
                                   absl::string_view what);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_PRIVATE_DIR_H_
