// Copyright (c) edge-outbox authors.

#include "tools/demo/demo_files.h"

#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace outbox::demo {
namespace {

namespace fs = std::filesystem;

constexpr char kMarker[] = ".outbox-demo";

absl::Status FsError(const std::string& what, const std::error_code& ec) {
  return absl::UnavailableError(absl::StrCat(what, ": ", ec.message()));
}

}  // namespace

absl::Status PrepareOutputDir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    if (!fs::exists(fs::path(dir) / kMarker, ec)) {
      return absl::FailedPreconditionError(absl::StrCat(
          dir, " is not empty and was not made by outbox-demo; pass another ",
          "--dir (or remove it)"));
    }
    fs::remove_all(dir, ec);
    if (ec) return FsError(absl::StrCat("cannot remove ", dir), ec);
  }
  fs::create_directories(dir, ec);
  if (ec) return FsError(absl::StrCat("cannot create ", dir), ec);
  return WriteTextFile((fs::path(dir) / kMarker).string(),
                       "made by outbox-demo; the next run replaces it\n");
}

absl::Status WriteSecretFile(const std::string& path) {
  std::random_device random;
  std::string key(24, '\0');
  for (char& c : key) c = static_cast<char>(random() & 0xff);
  std::error_code ec;
  fs::remove(path, ec);
  // Created empty, made private, then filled: the secret is never readable
  // by others, not even for a moment.
  if (!std::ofstream(path)) {
    return absl::UnavailableError(absl::StrCat("cannot create ", path));
  }
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace, ec);
  if (ec) return FsError(absl::StrCat("cannot chmod 600 ", path), ec);
  return WriteTextFile(path,
                       absl::StrCat("whsec_", absl::Base64Escape(key), "\n"));
}

std::string HttpDestinationText(const TillConfig& c, absl::string_view name,
                                absl::string_view path,
                                absl::string_view extra) {
  return absl::StrCat("destinations {\n  name: \"", name,
                      "\"\n  url: \"http://127.0.0.1:", c.port, path,
                      "\"\n  secrets_file: \"", c.secret_path,
                      "\"\n  connect_timeout: \"2s\"\n  timeout: \"5s\"\n",
                      extra, "}\n");
}

std::string TillConfigText(absl::string_view destination) {
  return absl::StrCat(
      "# Written by outbox-demo: one till's agent, delivering to the demo's\n"
      "# receiver. Short delays so that the demo drains in seconds.\n",
      destination,
      "routes { event_type: \"sale.*\" destination: \"receiver\" }\n",
      "retry { base_delay: \"50ms\" max_delay: \"500ms\" }\n",
      "agent { probe_interval_min: \"100ms\" probe_interval_max: \"500ms\" "
      "}\n");
}

absl::Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace outbox::demo
