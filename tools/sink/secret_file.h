// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_TOOLS_SINK_SECRET_FILE_H_
#define OUTBOX_TOOLS_SINK_SECRET_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/webhook_signature.h"

namespace outbox::sink {

// Reads Standard Webhooks secrets, one `whsec_<base64>` per line; blank lines
// and lines starting with '#' are skipped, surrounding whitespace ignored.
// Errors (messages name the file and line, never a secret):
//   kNotFound / kPermissionDenied / kUnavailable - the file cannot be read;
//   kInvalidArgument - a line is not a valid secret, or there is none.
absl::StatusOr<std::vector<WebhookSecret>> ReadSecretFile(
    const std::string& path);

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_SECRET_FILE_H_
