// Copyright (c) edge-outbox authors.

#include "agent/config/files.h"

#include "absl/strings/match.h"
#include "platform/files.h"

namespace outbox::config_files {
namespace {

constexpr size_t kMaxConfigBytes = size_t{1} << 20;
constexpr size_t kMaxHeaderValueBytes = size_t{8} << 10;

}  // namespace

absl::StatusOr<std::string> ReadConfigText(const std::string& path) {
  ReadFileOptions options;
  options.what = "configuration file";
  options.max_bytes = kMaxConfigBytes;
  return ReadFileChecked(path, options);
}

absl::Status CheckReadable(const std::string& path, bool directory) {
  ReadFileOptions options;
  options.what = directory ? "directory" : "file";
  return directory ? CheckDirectoryReadable(path, options)
                   : CheckFileReadable(path, options);
}

absl::StatusOr<std::string> ReadHeaderValueFile(const std::string& path) {
  ReadFileOptions options;
  options.what = "value file";
  options.show_path = false;  // a value may be written where its path belongs
  options.require_private = true;
  options.max_bytes = kMaxHeaderValueBytes;
  absl::StatusOr<std::string> text = ReadFileChecked(path, options);
  if (!text.ok()) return text.status();
  std::string value = *std::move(text);
  if (absl::EndsWith(value, "\r\n")) {
    value.resize(value.size() - 2);
  } else if (absl::EndsWith(value, "\n")) {
    value.resize(value.size() - 1);
  }
  if (value.empty()) {
    return absl::InvalidArgumentError("value file is empty");
  }
  if (absl::StrContains(value, '\r') || absl::StrContains(value, '\n') ||
      absl::StrContains(value, '\0')) {
    return absl::InvalidArgumentError(
        "value file holds more than one line (or a NUL byte); a header value "
        "is one line");
  }
  return value;
}

}  // namespace outbox::config_files
