// Copyright (c) edge-outbox authors.
//
// Where a revert is sent (issue 26). A revert goes out with its step's
// destination settings: headers, signing secrets, TLS. So that those never
// reach another origin by accident, a revert URL is written relative to the
// destination by default:
//   "/api/inventory/{id}/release"   the destination's origin (scheme, host,
//                                   port) and this path;
//   "{id}/release", "cancel"        resolved against the destination's URL
//                                   as a browser resolves a relative link
//                                   (RFC 3986 5.2: the last path segment is
//                                   replaced), query and fragment dropped;
//   "https://host/..."              absolute: it must be at the
//                                   destination's origin, unless the revert
//                                   says other_origin: true.
// The origin of an absolute URL is literal text: a placeholder in the
// scheme, host or port is refused, so an answer never picks the host.

#ifndef OUTBOX_AGENT_EXPR_REVERT_URL_H_
#define OUTBOX_AGENT_EXPR_REVERT_URL_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace outbox::workflow {

// "scheme://host[:port]" of the http(s) `url`, lowercased, the default
// port (80, 443) dropped. Errors: kInvalidArgument when `url` is not
// http(s)://, has no host, or a '{', '}', '@', backslash or blank in its
// origin.
absl::StatusOr<std::string> Origin(absl::string_view url);

// The absolute URL template `revert_url` means for a step whose
// destination is at `destination_url` (a plain http(s) URL). Errors:
// kInvalidArgument naming what to write instead: another scheme, "//host",
// a placeholder in the origin, or another origin without `other_origin`
// (or `other_origin` with a relative URL, which cannot leave the origin).
absl::StatusOr<std::string> ResolveRevertUrl(absl::string_view revert_url,
                                             absl::string_view destination_url,
                                             bool other_origin);

}  // namespace outbox::workflow

#endif  // OUTBOX_AGENT_EXPR_REVERT_URL_H_
