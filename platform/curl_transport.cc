// Copyright (c) edge-outbox authors.
//
// The libcurl HttpTransport: one curl multi handle driven by
// curl_multi_socket_action. curl tells us which sockets to watch
// (CURLMOPT_SOCKETFUNCTION) and when to call it back
// (CURLMOPT_TIMERFUNCTION); we keep both in one Poller, the timeout as a
// Timer, so the caller needs to watch a single fd and nothing else.

#include <curl/curl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "outbox/clock.h"
#include "outbox/http_transport.h"
#include "platform/curl_status.h"
#include "platform/curl_transfer.h"
#include "platform/poller.h"

namespace outbox {
namespace {

// curl_global_init is not safe to race with itself, and must run before any
// other curl call. It is never undone: curl_global_cleanup would pull the
// rug from under any other transport in the process.
absl::Status InitCurlOnce() {
  static std::once_flag once;
  static CURLcode rc = CURLE_OK;
  std::call_once(once, [] { rc = curl_global_init(CURL_GLOBAL_DEFAULT); });
  return FromCurl(rc, "curl_global_init");
}

class CurlTransport final : public HttpTransport {
 public:
  explicit CurlTransport(const CurlTransportOptions& options)
      : options_(options) {}
  ~CurlTransport() override;

  absl::Status Init();
  absl::Status Start(HttpRequest request) override;
  int fd() const override { return poller_->fd(); }
  absl::Status Process(std::vector<HttpResult>* done) override;
  size_t InFlight() const override { return in_flight_.size(); }
  void AbandonAll(std::vector<HttpResult>* done) override;

 private:
  static int OnSocket(CURL* easy, curl_socket_t socket, int what, void* user,
                      void* socket_user);
  static int OnTimer(CURLM* multi, long timeout_ms, void* user);

  // ValidateUrl(request), remembered per URL: an agent sends every request
  // of a destination to one URL, and parsing it is most of a check.
  absl::StatusOr<std::string> UrlTarget(const HttpRequest& request);

  // Appends the results of finished transfers and recycles their handles.
  void CollectFinished(std::vector<HttpResult>* done);
  // Takes `easy` out of the multi handle and parks it.
  void Recycle(CURL* easy);
  // Keeps `easy` for reuse (an easy handle keeps its TLS session cache,
  // which makes the next handshake to the same server cheaper), its options
  // reset: they point into a Transfer that is about to be destroyed.
  void Park(CURL* easy);

  const CurlTransportOptions options_;
  CURLM* multi_ = nullptr;
  std::unique_ptr<Poller> poller_;
  std::unique_ptr<Timer> timer_;  // armed for curl's next timeout, in poller_
  // When timer_ fires (Clock::Monotonic()); InfiniteDuration() if it is not
  // armed or has fired.
  absl::Duration timer_due_ = absl::InfiniteDuration();
  absl::flat_hash_map<CURL*, std::unique_ptr<Transfer>> in_flight_;
  std::vector<CURL*> idle_;  // options reset, not in multi_
  absl::flat_hash_map<std::string, std::string> url_targets_;
};

CurlTransport::~CurlTransport() {
  for (auto& [easy, transfer] : in_flight_) {
    curl_multi_remove_handle(multi_, easy);
    curl_easy_cleanup(easy);
  }
  in_flight_.clear();
  for (CURL* easy : idle_) curl_easy_cleanup(easy);
  // May close pooled connections through OnSocket, so the poller (a member,
  // destroyed after this body) must still be there.
  if (multi_ != nullptr) curl_multi_cleanup(multi_);
}

absl::Status CurlTransport::Init() {
  OUTBOX_RETURN_IF_ERROR(InitCurlOnce());
  OUTBOX_ASSIGN_OR_RETURN(poller_, Poller::Create());
  OUTBOX_ASSIGN_OR_RETURN(timer_, Timer::Create());
  OUTBOX_RETURN_IF_ERROR(poller_->Watch(timer_->fd(), Poller::kReadable));
  multi_ = curl_multi_init();
  if (multi_ == nullptr) return absl::InternalError("curl_multi_init failed");
  CURLMcode rc = curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &OnSocket);
  if (rc == CURLM_OK) rc = curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  if (rc == CURLM_OK) {
    rc = curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &OnTimer);
  }
  if (rc == CURLM_OK) rc = curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  if (rc == CURLM_OK) {
    rc = curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS,
                           static_cast<long>(options_.max_host_connections));
  }
  return FromCurlMulti(rc, "configuring the curl multi handle");
}

int CurlTransport::OnSocket(CURL*, curl_socket_t socket, int what, void* user,
                            void*) {
  auto* self = static_cast<CurlTransport*>(user);
  if (what == CURL_POLL_REMOVE) {
    // curl may already have closed the socket: Forget() allows for that.
    self->poller_->Forget(socket);
    return 0;
  }
  uint32_t events = 0;
  if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) {
    events |= Poller::kReadable;
  }
  if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) {
    events |= Poller::kWritable;
  }
  // -1 makes curl fail the transfers on this socket.
  return self->poller_->Watch(socket, events).ok() ? 0 : -1;
}

int CurlTransport::OnTimer(CURLM*, long timeout_ms, void* user) {
  auto* self = static_cast<CurlTransport*>(user);
  // A timer armed to fire no later than curl asks is kept, and so is one
  // curl no longer needs (-1): firing early only makes Process() call curl,
  // which then says when it wants the next call. That saves a
  // timerfd_settime per request started (8% of a busy agent's CPU).
  if (timeout_ms < 0) return 0;
  // 0: as soon as possible, which Timer::Arm keeps.
  const absl::Duration due =
      SystemClock()->Monotonic() + absl::Milliseconds(timeout_ms);
  if (self->timer_due_ <= due) return 0;
  self->timer_due_ = due;
  return self->timer_->Arm(absl::Milliseconds(timeout_ms)).ok() ? 0 : -1;
}

absl::Status CurlTransport::Start(HttpRequest request) {
  if (in_flight_.size() >= options_.max_in_flight) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "HTTP transport: ", in_flight_.size(),
        " requests already in flight (CurlTransportOptions::max_in_flight); "
        "start more after Process() returns results"));
  }
  OUTBOX_ASSIGN_OR_RETURN(const std::string target, UrlTarget(request));
  OUTBOX_RETURN_IF_ERROR(ValidateMethodHeadersAndTimeouts(request));
  auto transfer = std::make_unique<Transfer>();
  transfer->context = absl::StrCat(request.method, " ", target);
  transfer->max_body_bytes =
      std::max(options_.max_response_body_bytes, request.max_response_body);
  transfer->request = std::move(request);

  CURL* easy = nullptr;
  if (!idle_.empty()) {
    easy = idle_.back();
    idle_.pop_back();
  } else {
    easy = curl_easy_init();
    if (easy == nullptr) {
      return absl::ResourceExhaustedError("curl_easy_init: out of memory");
    }
  }
  absl::Status status = ConfigureEasy(easy, transfer.get());
  if (status.ok()) {
    status =
        FromCurlMulti(curl_multi_add_handle(multi_, easy), transfer->context);
  }
  if (!status.ok()) {
    Park(easy);
    return status;
  }
  // curl_multi_add_handle armed the timer (timeout 0), so fd() turns
  // readable and the next Process() begins the transfer.
  in_flight_.emplace(easy, std::move(transfer));
  return absl::OkStatus();
}

absl::StatusOr<std::string> CurlTransport::UrlTarget(
    const HttpRequest& request) {
  auto it = url_targets_.find(request.url);
  if (it != url_targets_.end()) return it->second;
  OUTBOX_ASSIGN_OR_RETURN(std::string target, ValidateUrl(request));
  constexpr size_t kMaxUrls = 64;  // a few per destination, bounded anyway
  if (url_targets_.size() >= kMaxUrls) url_targets_.clear();
  url_targets_.emplace(request.url, target);
  return target;
}

absl::Status CurlTransport::Process(std::vector<HttpResult>* done) {
  // The poller holds at most 16 of the ready ones; the rest stay ready
  // (level-triggered) for the next call.
  std::vector<Poller::Ready> ready;
  OUTBOX_RETURN_IF_ERROR(poller_->Wait(absl::ZeroDuration(), &ready));
  absl::Status status;
  int running = 0;
  bool timer_due = false;
  for (const Poller::Ready& r : ready) {
    if (r.fd == timer_->fd()) {
      // Clear the expiry before curl can re-arm the timer.
      timer_->Clear();
      timer_due_ = absl::InfiniteDuration();
      timer_due = true;
      continue;
    }
    int mask = 0;
    if (r.events & Poller::kReadable) mask |= CURL_CSELECT_IN;
    if (r.events & Poller::kWritable) mask |= CURL_CSELECT_OUT;
    if (r.events & Poller::kError) mask |= CURL_CSELECT_ERR;
    status.Update(
        FromCurlMulti(curl_multi_socket_action(multi_, r.fd, mask, &running),
                      "curl_multi_socket_action"));
  }
  if (timer_due) {
    status.Update(FromCurlMulti(
        curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running),
        "curl_multi_socket_action(timeout)"));
  }
  CollectFinished(done);
  return status;
}

void CurlTransport::CollectFinished(std::vector<HttpResult>* done) {
  int queued = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &queued)) {
    if (message->msg != CURLMSG_DONE) continue;
    // `message` dies with curl_multi_remove_handle; copy what we need.
    CURL* easy = message->easy_handle;
    const CURLcode code = message->data.result;
    auto it = in_flight_.find(easy);
    if (it == in_flight_.end()) continue;  // not ours: cannot happen
    done->push_back(FinishTransfer(easy, code, it->second.get()));
    Recycle(easy);
    in_flight_.erase(it);
  }
}

void CurlTransport::Recycle(CURL* easy) {
  curl_multi_remove_handle(multi_, easy);
  Park(easy);
}

void CurlTransport::Park(CURL* easy) {
  if (idle_.size() < options_.max_in_flight) {
    curl_easy_reset(easy);
    idle_.push_back(easy);
  } else {
    curl_easy_cleanup(easy);
  }
}

void CurlTransport::AbandonAll(std::vector<HttpResult>* done) {
  for (auto& [easy, transfer] : in_flight_) {
    HttpResult result;
    result.tag = transfer->request.tag;
    result.transport = absl::CancelledError(absl::StrCat(
        transfer->context,
        ": abandoned before an answer arrived; the server may or may not "
        "have received the request"));
    done->push_back(std::move(result));
    // Removing an unfinished transfer closes its connection, so no stray
    // response can be read as the answer to a later request.
    Recycle(easy);
  }
  in_flight_.clear();
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpTransport>> NewCurlTransport(
    const CurlTransportOptions& options) {
  if (options.max_in_flight == 0) {
    return absl::InvalidArgumentError(
        "CurlTransportOptions::max_in_flight must be at least 1");
  }
  auto transport = std::make_unique<CurlTransport>(options);
  OUTBOX_RETURN_IF_ERROR(transport->Init());
  return std::unique_ptr<HttpTransport>(std::move(transport));
}

}  // namespace outbox
