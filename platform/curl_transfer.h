// Copyright (c) edge-outbox authors.
//
// One HTTP request as a libcurl easy handle: validating the request, setting
// the handle's options, and reading the outcome once the transfer is done.
// The multi-handle and event-loop side lives in curl_transport.cc.

#ifndef OUTBOX_PLATFORM_CURL_TRANSFER_H_
#define OUTBOX_PLATFORM_CURL_TRANSFER_H_

#include <curl/curl.h>

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "outbox/http_transport.h"

namespace outbox {

// The state of one request in flight. The easy handle's options point into
// it (body, header list, callbacks' user data), so it must not move and
// must outlive the handle's membership in the multi handle.
// REQUIRES: External synchronization.
struct Transfer {
  Transfer() = default;
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  ~Transfer() { curl_slist_free_all(header_list); }

  HttpRequest request;
  // "POST https://host:port": names the target in statuses without the
  // path or query, which may carry secrets.
  std::string context;
  curl_slist* header_list = nullptr;
  size_t max_body_bytes = 0;  // read, kept or not; then the connection closes

  // Filled by the header and body callbacks while the transfer runs.
  int last_status = 0;        // from the latest status line
  bool headers_done = false;  // final (non-1xx) headers complete
  std::string retry_after;    // of the final response
  size_t body_bytes = 0;
  std::string body;  // of the final response, at most max_response_body
  bool body_truncated = false;
  char error[CURL_ERROR_SIZE] = {};
};

// Checks `request`'s URL and returns its target for statuses
// ("https://host:port"). Errors: kInvalidArgument naming the problem.
absl::StatusOr<std::string> ValidateUrl(const HttpRequest& request);

// Checks the rest of `request`: method, header names and values, timeouts.
// Errors: kInvalidArgument naming the problem (never a header value).
absl::Status ValidateMethodHeadersAndTimeouts(const HttpRequest& request);

// Sets every option of `easy` (freshly created or reset) for `*transfer`,
// whose request has passed both checks above. `transfer` must outlive the
// transfer. Errors: kResourceExhausted (out of memory), kInternal.
absl::Status ConfigureEasy(CURL* easy, Transfer* transfer);

// Appends to transfer->body what of `chunk` fits under the request's
// max_response_body, and sets body_truncated if some does not; nothing when
// that is 0. The buffer grows by doubling but stops at the limit, so a
// request never holds more than it asked for (or a short string's 30 bytes).
void KeepResponseBody(absl::string_view chunk, Transfer* transfer);

// Builds the result of `*transfer`, which `easy` finished with `code`,
// moving the response body out of it.
HttpResult FinishTransfer(CURL* easy, CURLcode code, Transfer* transfer);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_CURL_TRANSFER_H_
