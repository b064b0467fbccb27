// Copyright (c) edge-outbox authors.

#include "platform/curl_status.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace outbox {
namespace {

// What the user can do about `code`; empty when curl's words say enough.
absl::string_view Hint(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
      return "check the host name in the URL and the device's DNS settings";
    case CURLE_COULDNT_RESOLVE_PROXY:
      return "check the proxy host name and the device's DNS settings";
    case CURLE_COULDNT_CONNECT:
      return "check that the server (or proxy) is running and reachable "
             "from this network";
    case CURLE_OPERATION_TIMEDOUT:
      return "the network or the server is slow or down; if it is merely "
             "slow, raise connect_timeout/total_timeout";
    case CURLE_GOT_NOTHING:
      return "the server closed the connection without answering; check "
             "the server's logs";
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
      return "the connection broke; the server may or may not have received "
             "the request";
    case CURLE_SSL_CONNECT_ERROR:
      return "the TLS handshake failed; check the server's TLS setup, the "
             "client certificate and any TLS-intercepting middlebox";
    case CURLE_PEER_FAILED_VERIFICATION:
      return "the server's certificate is not trusted or does not match the "
             "host: set TlsOptions::ca_file (or ca_dir) to the CA that "
             "issued it, or fix the server's certificate chain";
    case CURLE_SSL_CACERT_BADFILE:
      return "check that TlsOptions::ca_file/ca_dir exist, are readable and "
             "hold PEM certificates";
    case CURLE_SSL_CERTPROBLEM:
      return "check TlsOptions::client_cert_file and client_key_file: "
             "readable PEM files, and the key matches the certificate";
    case CURLE_SSL_CLIENTCERT:
      return "the server requires a client certificate: set "
             "TlsOptions::client_cert_file and client_key_file";
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return "use an http:// or https:// URL";
    default:
      return {};
  }
}

absl::StatusCode CodeFor(CURLcode code) {
  switch (code) {
    case CURLE_OK:
      return absl::StatusCode::kOk;
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_AGAIN:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3:
    case CURLE_QUIC_CONNECT_ERROR:
    case CURLE_PROXY:
      return absl::StatusCode::kUnavailable;
    case CURLE_OPERATION_TIMEDOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_USE_SSL_FAILED:
      return absl::StatusCode::kFailedPrecondition;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return absl::StatusCode::kInvalidArgument;
    case CURLE_NOT_BUILT_IN:
      return absl::StatusCode::kUnimplemented;
    case CURLE_OUT_OF_MEMORY:
      return absl::StatusCode::kResourceExhausted;
    case CURLE_ABORTED_BY_CALLBACK:
      return absl::StatusCode::kCancelled;
    case CURLE_LOGIN_DENIED:
    case CURLE_AUTH_ERROR:
      return absl::StatusCode::kUnauthenticated;
    case CURLE_FAILED_INIT:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_UNKNOWN_OPTION:
    case CURLE_SETOPT_OPTION_SYNTAX:
    case CURLE_RECURSIVE_API_CALL:
    case CURLE_UNRECOVERABLE_POLL:
      return absl::StatusCode::kInternal;
    default:
      return absl::StatusCode::kUnknown;
  }
}

}  // namespace

absl::Status FromCurl(CURLcode code, absl::string_view context,
                      absl::string_view detail) {
  if (code == CURLE_OK) return absl::OkStatus();
  // A TLS 1.3 server rejects a missing client certificate only after the
  // handshake, so curl sees a failed read; OpenSSL's detail names the alert.
  if ((code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR ||
       code == CURLE_SSL_CONNECT_ERROR) &&
      absl::StrContains(detail, "alert certificate required")) {
    code = CURLE_SSL_CLIENTCERT;
  }
  std::string message = absl::StrCat(context, ": ", curl_easy_strerror(code));
  if (!detail.empty()) {
    // curl's error buffer ends in a newline for some errors.
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' ')) {
      detail.remove_suffix(1);
    }
    absl::StrAppend(&message, " (", detail, ")");
  }
  absl::string_view hint = Hint(code);
  if (!hint.empty()) absl::StrAppend(&message, "; ", hint);
  return absl::Status(CodeFor(code), message);
}

absl::Status FromCurlMulti(CURLMcode code, absl::string_view context) {
  if (code == CURLM_OK) return absl::OkStatus();
  const std::string message =
      absl::StrCat(context, ": libcurl multi: ", curl_multi_strerror(code));
  if (code == CURLM_OUT_OF_MEMORY) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

bool NeverReachedServer(const TransferFacts& facts) {
  if (facts.code == CURLE_OK || facts.response_received) return false;
  // A proxy that answered CONNECT with 502/503/504 could not reach the
  // server; 407 or 403 are the proxy's own verdict on us (configuration).
  if (facts.proxy_connect_code >= 500) return true;
  switch (facts.code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:  // refused, no route, net unreachable
      return true;
    case CURLE_OPERATION_TIMEDOUT:
      // Before the request left, the server cannot have seen it: this is a
      // resolve, connect or TLS handshake timeout, which on a lossy link
      // (MTU black hole, dead uplink) is what being offline looks like.
      return !facts.request_sent;
    case CURLE_PROXY:
      switch (facts.proxy_error) {
        case CURLPX_RESOLVE_HOST:
        case CURLPX_REPLY_CONNECTION_REFUSED:
        case CURLPX_REPLY_HOST_UNREACHABLE:
        case CURLPX_REPLY_NETWORK_UNREACHABLE:
        case CURLPX_REPLY_TTL_EXPIRED:
          return true;
        default:
          return false;
      }
    default:
      // TLS verification and handshake failures, resets, GOT_NOTHING: a
      // peer was reached and may have read the request.
      return false;
  }
}

}  // namespace outbox
