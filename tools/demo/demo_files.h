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

// What a till's agent is pointed at.
struct TillConfig {
  int port = 0;             // the receiver's, on 127.0.0.1
  std::string secret_path;  // WriteSecretFile's
};

// The agent configuration (protobuf text format, proto/agent_config.proto)
// for one till: every event to the receiver, short retry and probe delays
// so that the demo drains in seconds. Returns its text.
std::string TillConfigText(const TillConfig& config);

// Writes `text` to `path`. Errors: kUnavailable naming the path.
absl::Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_DEMO_FILES_H_
