// Copyright (c) edge-outbox authors.

#include "platform/curl_transfer.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "platform/curl_status.h"
#include "platform/http_token.h"

namespace outbox {
namespace {

// Any valid Retry-After (delta-seconds or a 29-character HTTP-date) fits;
// a longer value is garbage and is dropped rather than stored.
constexpr size_t kMaxRetryAfterLength = 64;

struct CurlUrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};

// Reads one part of a parsed URL, or "" when it is absent.
std::string UrlPart(CURLU* url, CURLUPart part, unsigned int flags) {
  char* value = nullptr;
  if (curl_url_get(url, part, &value, flags) != CURLUE_OK) return "";
  std::string result(value);
  curl_free(value);
  return result;
}

// CR or LF in a value would let it inject headers of its own.
bool IsValidHeaderValue(absl::string_view value) {
  return value.find_first_of(absl::string_view("\r\n\0", 3)) ==
         absl::string_view::npos;
}

bool IsValidTimeout(absl::Duration d) {
  return d > absl::ZeroDuration() && d != absl::InfiniteDuration();
}

// curl reads 0 as "no timeout", so a sub-millisecond limit rounds up.
// curl takes `long` milliseconds, which is 32 bits on armhf: clamp there
// (about 24.8 days) rather than let a long timeout wrap negative.
long TimeoutMs(absl::Duration d) {
  const int64_t ms = std::max<int64_t>(1, absl::ToInt64Milliseconds(d));
  return static_cast<long>(
      std::min<int64_t>(ms, std::numeric_limits<long>::max()));
}

bool HasHeader(const HttpRequest& request, absl::string_view name) {
  return std::any_of(
      request.headers.begin(), request.headers.end(),
      [name](const auto& h) { return absl::EqualsIgnoreCase(h.first, name); });
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t length = size * count;
  if (t->headers_done) return length;  // trailers: not the verdict
  absl::string_view line(data, length);
  if (absl::StartsWith(line, "HTTP/")) {
    // A new status line: a 1xx, or the final response after one.
    t->retry_after.clear();
    t->last_status = 0;
    const size_t space = line.find(' ');
    int status = 0;
    if (space != absl::string_view::npos &&
        absl::SimpleAtoi(line.substr(space + 1, 3), &status)) {
      t->last_status = status;
    }
    return length;
  }
  line = absl::StripAsciiWhitespace(line);
  if (line.empty()) {
    if (t->last_status >= 200) t->headers_done = true;
    return length;
  }
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return length;
  if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(line.substr(0, colon)),
                             "Retry-After")) {
    absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (value.size() <= kMaxRetryAfterLength)
      t->retry_after = std::string(value);
  }
  return length;
}

// Only the final response's body gets here: a 1xx has none, and curl reads
// a proxy's CONNECT answer itself. Returning less than was offered makes
// curl stop with CURLE_WRITE_ERROR and close the connection.
size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t length = size * count;
  KeepResponseBody(absl::string_view(data, length), t);
  t->body_bytes += length;
  return t->body_bytes > t->max_body_bytes ? 0 : length;
}

bool IsAllowedMethod(absl::string_view method) {
  for (absl::string_view allowed : {"POST", "PUT", "PATCH", "DELETE"}) {
    if (method == allowed) return true;
  }
  return false;
}

}  // namespace

void KeepResponseBody(absl::string_view chunk, Transfer* transfer) {
  const size_t limit = transfer->request.max_response_body;
  if (limit == 0) return;
  std::string& body = transfer->body;
  const size_t kept = std::min(chunk.size(), limit - body.size());
  if (kept < chunk.size()) transfer->body_truncated = true;
  if (body.size() + kept > body.capacity()) {
    // Doubling, capped at the limit. reserve() on a grown string may round
    // up to twice its capacity; on an empty one it allocates what is asked.
    std::string grown;
    grown.reserve(
        std::min(limit, std::max(2 * body.capacity(), body.size() + kept)));
    grown.append(body);
    body.swap(grown);
  }
  body.append(chunk.data(), kept);
}

absl::StatusOr<std::string> ValidateUrl(const HttpRequest& request) {
  // The URL itself stays out of messages: its query may carry a token.
  std::unique_ptr<CURLU, CurlUrlDeleter> url(curl_url());
  if (url == nullptr)
    return absl::ResourceExhaustedError("curl_url: no memory");
  const CURLUcode rc =
      curl_url_set(url.get(), CURLUPART_URL, request.url.c_str(), 0);
  if (rc != CURLUE_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("HttpRequest::url (tag ", request.tag,
                     ") is not a valid URL: ", curl_url_strerror(rc)));
  }
  const std::string scheme = UrlPart(url.get(), CURLUPART_SCHEME, 0);
  if (scheme != "http" && scheme != "https") {
    return absl::InvalidArgumentError(
        absl::StrCat("HttpRequest::url (tag ", request.tag, ") has scheme '",
                     scheme, "'; use an http:// or https:// URL"));
  }
  return absl::StrCat(scheme, "://", UrlPart(url.get(), CURLUPART_HOST, 0), ":",
                      UrlPart(url.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT));
}

absl::Status ValidateMethodHeadersAndTimeouts(const HttpRequest& request) {
  if (!IsAllowedMethod(request.method)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HttpRequest::method (tag ", request.tag, ") is '",
        absl::CHexEscape(request.method), "'; use POST, PUT, PATCH or DELETE"));
  }
  for (const auto& [name, value] : request.headers) {
    if (!IsHttpToken(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "HttpRequest::headers (tag ", request.tag,
          ") has an invalid header name (empty, or with spaces, colons or "
          "control characters)"));
    }
    if (!IsValidHeaderValue(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("HttpRequest::headers (tag ", request.tag,
                       "): the value of '", name, "' contains CR, LF or NUL"));
    }
  }
  if (!IsValidTimeout(request.connect_timeout) ||
      !IsValidTimeout(request.total_timeout)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HttpRequest (tag ", request.tag,
        "): connect_timeout and total_timeout must be positive and finite"));
  }
  return absl::OkStatus();
}

absl::Status ConfigureEasy(CURL* easy, Transfer* transfer) {
  const HttpRequest& r = transfer->request;
  for (const auto& [name, value] : r.headers) {
    // curl drops a header given as "Name:"; "Name;" sends it empty.
    const std::string line = value.empty() ? absl::StrCat(name, ";")
                                           : absl::StrCat(name, ": ", value);
    curl_slist* list = curl_slist_append(transfer->header_list, line.c_str());
    if (list == nullptr)
      return absl::ResourceExhaustedError("curl_slist: no memory");
    transfer->header_list = list;
  }
  // Suppress curl's defaults: "Expect: 100-continue" costs a round trip (or
  // a one-second stall on servers that ignore it), and a made-up
  // form-urlencoded Content-Type would misdescribe the body.
  for (const char* suppressed : {"Expect", "Content-Type"}) {
    if (HasHeader(r, suppressed)) continue;
    const std::string line = absl::StrCat(suppressed, ":");
    curl_slist* list = curl_slist_append(transfer->header_list, line.c_str());
    if (list == nullptr)
      return absl::ResourceExhaustedError("curl_slist: no memory");
    transfer->header_list = list;
  }

  CURLcode rc = CURLE_OK;
  auto set = [&](CURLoption option, auto value) {
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, option, value);
  };
  set(CURLOPT_ERRORBUFFER, transfer->error);
  set(CURLOPT_URL, r.url.c_str());
  set(CURLOPT_PROTOCOLS_STR, "http,https");
  set(CURLOPT_NOSIGNAL, 1L);  // a process-wide SIGALRM is not ours to use
  set(CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  set(CURLOPT_FOLLOWLOCATION, 0L);
  set(CURLOPT_USERAGENT, "edge-outbox");
  // POST with its fields sends the body (and Content-Length) whatever the
  // method; CUSTOMREQUEST only renames the request line's method.
  set(CURLOPT_POST, 1L);
  set(CURLOPT_CUSTOMREQUEST, r.method.c_str());
  set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  set(CURLOPT_POSTFIELDS, r.body.data());  // not copied: Transfer owns it
  set(CURLOPT_HTTPHEADER, transfer->header_list);
  set(CURLOPT_CONNECTTIMEOUT_MS, TimeoutMs(r.connect_timeout));
  set(CURLOPT_TIMEOUT_MS, TimeoutMs(r.total_timeout));
  set(CURLOPT_SSL_VERIFYPEER, r.tls.verify_peer ? 1L : 0L);
  set(CURLOPT_SSL_VERIFYHOST, r.tls.verify_host ? 2L : 0L);
  if (!r.tls.ca_file.empty()) set(CURLOPT_CAINFO, r.tls.ca_file.c_str());
  if (!r.tls.ca_dir.empty()) set(CURLOPT_CAPATH, r.tls.ca_dir.c_str());
  if (!r.tls.client_cert_file.empty()) {
    set(CURLOPT_SSLCERT, r.tls.client_cert_file.c_str());
  }
  if (!r.tls.client_key_file.empty()) {
    set(CURLOPT_SSLKEY, r.tls.client_key_file.c_str());
  }
  // "" turns proxies off, environment variables included.
  set(CURLOPT_PROXY, r.proxy.c_str());
  // A proxy's CONNECT answer must not reach OnHeader, which would take its
  // "200 Connection established" for the server's response.
  set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
  set(CURLOPT_HEADERFUNCTION, &OnHeader);
  set(CURLOPT_HEADERDATA, static_cast<void*>(transfer));
  set(CURLOPT_WRITEFUNCTION, &OnBody);
  set(CURLOPT_WRITEDATA, static_cast<void*>(transfer));
  return FromCurl(rc, absl::StrCat(transfer->context, ": setting options"));
}

HttpResult FinishTransfer(CURL* easy, CURLcode code, Transfer* transfer) {
  HttpResult result;
  result.tag = transfer->request.tag;
  curl_off_t total_us = 0;
  if (curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &total_us) == CURLE_OK) {
    result.elapsed = absl::Microseconds(total_us);
  }
  long response_code = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response_code);
  if (code == CURLE_OK || (transfer->headers_done && response_code > 0)) {
    // The verdict arrived; a body cut short (our limit, a reset, a timeout)
    // does not change it.
    result.http_status = static_cast<int>(response_code);
    result.retry_after = transfer->retry_after;
    result.body = std::move(transfer->body);
    result.body_truncated = transfer->body_truncated;
    return result;
  }
  TransferFacts facts;
  facts.code = code;
  long request_size = 0;
  curl_easy_getinfo(easy, CURLINFO_REQUEST_SIZE, &request_size);
  facts.request_sent = request_size > 0;
  curl_easy_getinfo(easy, CURLINFO_HTTP_CONNECTCODE, &facts.proxy_connect_code);
  curl_easy_getinfo(easy, CURLINFO_PROXY_ERROR, &facts.proxy_error);
  result.offline = NeverReachedServer(facts);
  std::string detail = transfer->error;
  if (facts.proxy_connect_code != 0 && facts.proxy_connect_code != 200) {
    absl::StrAppend(&detail, detail.empty() ? "" : "; ",
                    "the proxy answered CONNECT with ",
                    facts.proxy_connect_code);
  }
  result.transport = FromCurl(code, transfer->context, detail);
  return result;
}

}  // namespace outbox
