// Copyright (c) edge-outbox authors.
//
// The files a demo run writes before it starts anything: its directory, the
// receiver's secret (private to its owner, as the agent and outbox-sink
// require) and one agent configuration per till.

#ifndef OUTBOX_TOOLS_DEMO_DEMO_FILES_H_
#define OUTBOX_TOOLS_DEMO_DEMO_FILES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace outbox::demo {

// Makes `dir` an empty directory for this run. A directory an earlier run
// left (it holds the marker file) is emptied; any other non-empty one is
// refused, so a mistyped --dir never deletes someone's files.
// Errors: kFailedPrecondition (not ours: pick another --dir), PosixError
// codes of creating or removing it.
absl::Status PrepareOutputDir(const std::string& dir);

// Writes a fresh random "whsec_<base64>" secret to `path`, mode 0600 from
// the moment it exists. Errors: kPermissionDenied, kUnavailable.
absl::Status WriteSecretFile(const std::string& path);

// Where an HTTP destination of a till's agent points.
struct TillConfig {
  int port = 0;             // outbox-sink's, on 127.0.0.1
  std::string secret_path;  // WriteSecretFile's
};

// A `destinations {}` block (protobuf text format,
// proto/agent_config.proto) named `name`, posting to `path` on the sink of
// `config` with its secret; `extra` (lines such as a batch {} block) goes
// inside it.
std::string HttpDestinationText(const TillConfig& config,
                                absl::string_view name, absl::string_view path,
                                absl::string_view extra = "");

// The agent configuration for one till: `destination` (a block named
// "receiver"), every sale routed to it, short retry and probe delays so
// that the demo drains in seconds. Returns its text.
std::string TillConfigText(absl::string_view destination);

// Writes `text` to `path`. Errors: kUnavailable naming the path.
absl::Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_DEMO_FILES_H_
