// Copyright (c) edge-outbox authors.
//
// The file-system side of agent/config/config.cc: reading the configuration
// text and header value files, and checking that TLS files exist, each with the
// rules of platform/files.h (secrets files: ReadSecretsFile in
// webhooks/signature.h). Internal to outbox_agent_config. Messages
// name paths (except those of header value files), never file contents.
// Stateless; safe for concurrent use.

#ifndef OUTBOX_AGENT_CONFIG_FILES_H_
#define OUTBOX_AGENT_CONFIG_FILES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace outbox::config_files {

// The whole of a configuration file (at most 1 MiB).
// Errors: kNotFound, kPermissionDenied, kFailedPrecondition (not a regular
// file), kInvalidArgument (too large), other PosixError codes.
absl::StatusOr<std::string> ReadConfigText(const std::string& path);

// The value of a header kept out of the configuration (`header_files`): the
// whole file (at most 8 KiB) less one final "\n" or "\r\n", which must leave
// one non-empty line; a regular file only its owner can access. Messages call
// it "value file" and never name the path: a value written where its path
// belongs would otherwise be echoed into logs.
// Errors: kNotFound, kPermissionDenied, kFailedPrecondition (accessible to
// group/others, or not a regular file), kInvalidArgument (empty, several
// lines, file larger than 8 KiB), other PosixError codes.
absl::StatusOr<std::string> ReadHeaderValueFile(const std::string& path);

// OK if `path` is a readable regular file (or, when `directory`, a
// directory). Errors: kNotFound, kPermissionDenied, kFailedPrecondition (not
// a regular file, or not a directory), other PosixError codes.
absl::Status CheckReadable(const std::string& path, bool directory);

}  // namespace outbox::config_files

#endif  // OUTBOX_AGENT_CONFIG_FILES_H_
