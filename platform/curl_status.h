// Copyright (c) edge-outbox authors.
//
// The one converter from libcurl error codes to absl::Status, and the rule
// that decides whether a failed request counts as "offline".

#ifndef OUTBOX_PLATFORM_CURL_STATUS_H_
#define OUTBOX_PLATFORM_CURL_STATUS_H_

#include <curl/curl.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace outbox {

// Maps a CURLcode to the absl code that tells the caller what to do next:
//   CURLE_OK                                   -> OK
//   resolve/connect failures, GOT_NOTHING,
//   SEND/RECV errors, TLS handshake failure    -> kUnavailable (retry later)
//   OPERATION_TIMEDOUT                         -> kDeadlineExceeded
//   peer verification, CA file, client cert,
//   other TLS configuration problems           -> kFailedPrecondition
//   UNSUPPORTED_PROTOCOL, URL_MALFORMAT        -> kInvalidArgument
//   OUT_OF_MEMORY                              -> kResourceExhausted
//   ABORTED_BY_CALLBACK                        -> kCancelled
//   misuse of libcurl                          -> kInternal
//   anything else                              -> kUnknown
// The message is "<context>: <curl's description> (<detail>); <what to do>".
// `context` says what was attempted (e.g. "POST https://host:443") and
// `detail` is libcurl's error buffer; neither may contain request bodies or
// header values, and this function adds none.
absl::Status FromCurl(CURLcode code, absl::string_view context,
                      absl::string_view detail = {});

// Maps a curl multi-interface error: OUT_OF_MEMORY -> kResourceExhausted,
// everything else (misuse, internal) -> kInternal.
absl::Status FromCurlMulti(CURLMcode code, absl::string_view context);

// What a finished transfer tells about how far it got.
struct TransferFacts {
  CURLcode code = CURLE_OK;
  // The server's status line and headers arrived (not a proxy's).
  bool response_received = false;
  // Bytes of request (or proxy CONNECT) were handed to the network.
  bool request_sent = false;
  // The proxy's answer to CONNECT, or 0 without a tunnel.
  long proxy_connect_code = 0;
  // CURLINFO_PROXY_ERROR, meaningful when code is CURLE_PROXY.
  long proxy_error = 0;
};

// True when the request certainly never reached the server, so that the
// attempt says something about the network rather than about the server.
// Name resolution and connect failures are offline; so is a timeout before
// anything was sent (connect, TLS handshake), and a proxy that reports it
// could not reach the server (CONNECT answered 5xx, SOCKS unreachable).
// TLS verification failures, resets and timeouts after sending, and every
// answer are not: the server, or someone claiming to be it, was reached.
bool NeverReachedServer(const TransferFacts& facts);

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_CURL_STATUS_H_
