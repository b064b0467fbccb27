// Copyright (c) edge-outbox authors.

#include "tools/sink/secret_file.h"

#include <cerrno>
#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace outbox::sink {

absl::StatusOr<std::vector<WebhookSecret>> ReadSecretFile(
    const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int err = errno;
    return absl::ErrnoToStatus(err,
                               absl::StrCat("cannot open secret file ", path));
  }
  std::string content;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    content.append(buffer, n);
  }
  const bool read_error = std::ferror(file) != 0;
  std::fclose(file);
  if (read_error) {
    return absl::UnavailableError(
        absl::StrCat("error while reading secret file ", path));
  }
  std::vector<WebhookSecret> secrets;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(content, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    absl::StatusOr<WebhookSecret> secret = ParseWebhookSecret(line);
    if (!secret.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", line_number, ": ", secret.status().message()));
    }
    secrets.push_back(*std::move(secret));
  }
  if (secrets.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no secret found (want whsec_<base64> lines)"));
  }
  return secrets;
}

}  // namespace outbox::sink
