// Copyright (c) edge-outbox authors.

#include "agent/expr/revert_url.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace outbox::workflow {
namespace {

bool IsAbsolute(absl::string_view url) {
  return absl::StartsWithIgnoreCase(url, "http://") ||
         absl::StartsWithIgnoreCase(url, "https://");
}

// `url` up to its path (exclusive): "scheme://authority".
absl::string_view OriginText(absl::string_view url) {
  const size_t start = url.find("://") + 3;
  return url.substr(0, url.find_first_of("/?#", start));
}

// `url` without query and fragment, up to and including its path's last
// '/' ("http://h" gets one).
std::string Directory(absl::string_view url) {
  const size_t start = url.find("://") + 3;
  absl::string_view base = url.substr(0, url.find_first_of("?#", start));
  const size_t slash = base.rfind('/');
  if (slash < start) return absl::StrCat(base, "/");
  return std::string(base.substr(0, slash + 1));
}

// `url` without the userinfo of its authority ("user:pass@"), which a
// destination's own URL may carry.
std::string WithoutUserinfo(absl::string_view url) {
  const absl::string_view origin = OriginText(url);
  const size_t start = origin.find("://") + 3;
  const size_t at = origin.rfind('@');
  std::string out(url);
  if (at != absl::string_view::npos && at >= start) {
    out.erase(start, at + 1 - start);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> Origin(absl::string_view url) {
  if (!IsAbsolute(url)) {
    return absl::InvalidArgumentError("is not an http:// or https:// URL");
  }
  std::string origin = absl::AsciiStrToLower(OriginText(url));
  const size_t host = origin.find("://") + 3;
  if (origin.find_first_of("{}") != std::string::npos) {
    return absl::InvalidArgumentError(
        "has a placeholder in its scheme, host or port: an answer must never "
        "choose where the destination's headers and secrets go");
  }
  // Userinfo, and the backslashes and blanks parsers disagree on, could make
  // one text name two hosts (curl's and this check's): refused.
  if (origin.find_first_of("@\\ \t") != std::string::npos) {
    return absl::InvalidArgumentError(
        "has '@', a backslash or a blank before its path: write the host "
        "alone (credentials belong in the destination's headers)");
  }
  if (origin.size() == host) return absl::InvalidArgumentError("has no host");
  const bool tls = absl::StartsWith(origin, "https");
  absl::string_view default_port = tls ? ":443" : ":80";
  if (absl::EndsWith(origin, default_port)) {
    origin.resize(origin.size() - default_port.size());
  }
  return origin;
}

absl::StatusOr<std::string> ResolveRevertUrl(absl::string_view revert_url,
                                             absl::string_view destination_url,
                                             bool other_origin) {
  absl::StatusOr<std::string> home =
      Origin(IsAbsolute(destination_url) ? WithoutUserinfo(destination_url)
                                         : std::string(destination_url));
  if (!home.ok()) return home.status();
  if (IsAbsolute(revert_url)) {
    absl::StatusOr<std::string> there = Origin(revert_url);
    if (!there.ok()) return there.status();
    if (*there != *home && !other_origin) {
      return absl::InvalidArgumentError(absl::StrCat(
          "is at ", *there, ", not at its destination's origin ", *home,
          ": the destination's headers and secrets would go there. Write a "
          "path (\"/api/...\") to send to the destination's origin, or set "
          "other_origin: true if that host is meant to get them"));
    }
    return std::string(revert_url);
  }
  if (other_origin) {
    return absl::InvalidArgumentError(
        "is relative, so it stays at its destination's origin: "
        "other_origin: true applies only to an absolute http(s) URL");
  }
  const size_t colon = revert_url.find(':');
  if (absl::StartsWith(revert_url, "//") ||
      (colon != absl::string_view::npos &&
       colon < revert_url.find_first_of("/{?#"))) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", absl::CEscape(revert_url),
                     "\" is neither a path (\"/api/...\", \"cancel\") nor an "
                     "http(s) URL"));
  }
  if (absl::StartsWith(revert_url, "/")) {
    return absl::StrCat(OriginText(destination_url), revert_url);
  }
  return absl::StrCat(Directory(destination_url), revert_url);
}

}  // namespace outbox::workflow
