// Copyright (c) edge-outbox authors.
//
// HttpTransport: how the delivery agent sends HTTP requests without blocking.
//
// The agent is one thread waiting in one epoll. The transport contributes a
// single pollable fd: when it is readable the agent calls Process(), which
// advances every request as far as it can without blocking and hands back
// the finished ones. Firmware with its own main loop polls the same fd.
// Tests and firmware may supply their own implementation; the default one is
// NewCurlTransport() (libcurl).

#ifndef OUTBOX_PLATFORM_INCLUDE_OUTBOX_HTTP_TRANSPORT_H_
#define OUTBOX_PLATFORM_INCLUDE_OUTBOX_HTTP_TRANSPORT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace outbox {

// TLS settings of one request. Verification is on unless turned off
// explicitly: an outbox that trusted any certificate would hand its events to
// whoever answers.
struct TlsOptions {
  // Check the server's certificate chain against the trusted CAs.
  // Default: true.
  bool verify_peer = true;
  // Check that the server's certificate names the host in the URL.
  // Default: true.
  bool verify_host = true;
  // PEM file of CA certificates to trust. Default: empty (the system bundle).
  std::string ca_file;
  // Directory of CA certificates named by subject hash (openssl rehash).
  // Default: empty (none).
  std::string ca_dir;
  // Client certificate and private key, PEM, for mutual TLS. An empty key
  // file means the key is in the certificate file. Default: empty (none).
  std::string client_cert_file;
  std::string client_key_file;
};

// One HTTP/1.1 request. Redirects are never followed: a 3xx is an answer.
struct HttpRequest {
  // The caller's identifier, returned in HttpResult::tag.
  uint64_t tag = 0;
  // "POST", "PUT", "PATCH" or "DELETE", exactly so. The body is sent with
  // every one of them, a DELETE's too (a saga's revert may carry one).
  // Default: "POST".
  std::string method = "POST";
  // http:// or https:// only.
  std::string url;
  // Sent as given, in order. Header values (Authorization, signatures) never
  // appear in statuses or logs. No Content-Type is sent unless given here.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Limit on name resolution + TCP connect + TLS handshake. Default: 10s.
  absl::Duration connect_timeout = absl::Seconds(10);
  // Limit on the whole request, connect included. Default: 30s.
  absl::Duration total_timeout = absl::Seconds(30);
  TlsOptions tls;
  // Proxy URL ("http://host:3128", "socks5h://host:1080"). Default: empty,
  // meaning connect directly; *_proxy environment variables are ignored so
  // that a device behaves the same under every init system.
  std::string proxy;
  // Most bytes of the response body to return in HttpResult::body; memory
  // held per request stays within it. 0 discards the body (the verdict is
  // the status). Default: 0.
  size_t max_response_body = 0;
};

// The outcome of one started request.
struct HttpResult {
  uint64_t tag = 0;
  // OK when the server's status line and headers arrived; its verdict is
  // then in http_status, even if the body was cut short (by the server, a
  // timeout, or the transport's read limit): `body` holds what arrived.
  // Otherwise why no answer arrived:
  //   kUnavailable        could not resolve/connect, connection broke, TLS
  //                       handshake failed, server closed without answering
  //   kDeadlineExceeded   connect_timeout or total_timeout expired
  //   kFailedPrecondition TLS configuration or verification failed (fix the
  //                       CA/certificate settings or the server's chain)
  //   kCancelled          AbandonAll()
  //   others              see FromCurl() in platform/curl_status.h
  absl::Status transport;
  // True when the request never reached the server: name resolution failed,
  // connection refused, no route, network unreachable, timeout before the
  // request was sent (connect or TLS handshake), or the proxy could not be
  // resolved, reached, or reach the server. Being offline is not a failed
  // delivery attempt. False whenever the server may have seen the request:
  // a timeout or reset after sending, or any answer.
  bool offline = false;
  // The response status (e.g. 200, 503) when transport is OK, else 0.
  int http_status = 0;
  // The response's Retry-After value, verbatim (delta-seconds or HTTP-date),
  // or empty.
  std::string retry_after;
  // Time the transfer took, connection set-up included.
  absl::Duration elapsed;
  // The first HttpRequest::max_response_body bytes of the final response's
  // body (never a 1xx's, nor a proxy's answer to CONNECT) when transport is
  // OK; else empty. A body the server cut short is here as far as it came.
  std::string body;
  // True when max_response_body is set and more body bytes arrived than
  // `body` kept.
  bool body_truncated = false;
};

// Sends HTTP requests concurrently from one thread without blocking it.
//
// Usage: Start() requests; wait until fd() is readable (epoll/poll); call
// Process() and act on the results it appends; repeat.
//
// REQUIRES: External synchronization. Meant to be driven by one thread.
class HttpTransport {
 public:
  // Abandons requests still in flight without producing results.
  virtual ~HttpTransport() = default;

  // Begins sending `request` and returns at once: name resolution and
  // connecting happen in later Process() calls. After OK, exactly one
  // HttpResult with request.tag comes out of Process() or AbandonAll().
  // Errors (no result follows):
  //   kResourceExhausted  InFlight() is at the transport's maximum; start it
  //                       again after Process() has returned a result
  //   kInvalidArgument    URL not http(s), method not POST, PUT, PATCH or
  //                       DELETE, header name/value with CR/LF, timeout
  //                       not positive and finite
  virtual absl::Status Start(HttpRequest request) = 0;

  // A file descriptor that is readable whenever Process() has work to do
  // (socket readiness or an internal timer expiring), level-triggered. Valid
  // for the life of the transport; the caller must not read or close it.
  virtual int fd() const = 0;

  // Advances every request as far as it can go without blocking and appends
  // the finished ones to `*done`. Calling it when fd() is not readable is
  // harmless. A non-OK status (kResourceExhausted, kInternal) means the
  // transport itself faltered; requests stay in flight and results still
  // come, so the caller logs it and carries on.
  virtual absl::Status Process(std::vector<HttpResult>* done) = 0;

  // Requests started and not yet returned as results.
  virtual size_t InFlight() const = 0;

  // Stops every request in flight and appends a result with transport
  // kCancelled and offline false for each: the server may or may not have
  // received them. For shutdown; the transport stays usable.
  virtual void AbandonAll(std::vector<HttpResult>* done) = 0;
};

// Options of the libcurl transport.
struct CurlTransportOptions {
  // Most requests in flight at once; Start() beyond it fails with
  // kResourceExhausted. Bounds memory, sockets and load on the receiver.
  // Default: 8.
  size_t max_in_flight = 8;
  // Most open connections to one host; requests beyond it wait inside the
  // transport (and count as in flight). 0 means no limit besides
  // max_in_flight. Default: 0.
  size_t max_host_connections = 0;
  // Most response body bytes read per request; those past what
  // HttpRequest::max_response_body keeps are discarded, and a larger
  // max_response_body raises the limit to its own. Reading the whole body
  // keeps the connection reusable; past this limit the connection is closed
  // instead, and the result still stands. Default: 64 KiB.
  size_t max_response_body_bytes = 64 * 1024;
};

// Returns the libcurl transport: HTTP/1.1 with keep-alive connection reuse,
// TLS verification on by default.
// Errors: kInvalidArgument (max_in_flight is 0), kResourceExhausted (out of
// file descriptors or memory), kInternal (libcurl failed to initialize).
absl::StatusOr<std::unique_ptr<HttpTransport>> NewCurlTransport(
    const CurlTransportOptions& options = CurlTransportOptions());

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_INCLUDE_OUTBOX_HTTP_TRANSPORT_H_
