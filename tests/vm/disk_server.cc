// Copyright (c) edge-outbox authors.

#include "tests/vm/disk_server.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "tests/vm/lossy_disk_os.h"

namespace outbox::vm {
namespace {

// One line on stdout, flushed: the harness waits for these lines.
void PrintLine(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DiskServer>> DiskServer::Start(
    int port, WriteCache* cache, absl::Duration flush_latency) {
  absl::StatusOr<ScopedFd> signals =
      SignalsAsFd({SIGUSR1, SIGUSR2, SIGTERM, SIGINT});
  if (!signals.ok()) return signals.status();
  int bound_port = 0;
  absl::StatusOr<ScopedFd> listener = ListenOnLoopback(port, &bound_port);
  if (!listener.ok()) return listener.status();
  absl::StatusOr<std::unique_ptr<Poller>> poller = Poller::Create();
  if (!poller.ok()) return poller.status();
  absl::Status status = (*poller)->Watch(signals->get(), Poller::kReadable);
  if (status.ok())
    status = (*poller)->Watch(listener->get(), Poller::kReadable);
  if (!status.ok()) return status;
  return std::unique_ptr<DiskServer>(
      new DiskServer(cache, *std::move(poller), *std::move(listener),
                     *std::move(signals), bound_port, flush_latency));
}

absl::Status DiskServer::Run() {
  const WriteCacheOptions& options = cache_->options();
  PrintLine(absl::StrFormat(
      "listening 127.0.0.1:%d size=%d mode=%s keep=%g seed=%d honest=%d", port_,
      cache_->size(), CutModeName(options.mode), options.keep, options.seed,
      options.honest ? 1 : 0));
  std::vector<Poller::Ready> ready;
  while (true) {
    const absl::Duration timeout =
        session_ != nullptr && session_->flushing()
            ? std::max(absl::ZeroDuration(),
                       session_->flush_due() - absl::Now())
            : absl::InfiniteDuration();
    absl::Status status = poller_->Wait(timeout, &ready);
    if (!status.ok()) return status;
    bool signalled = false;
    for (const Poller::Ready& r : ready) signalled |= r.fd == signals_.get();
    if (signalled) {
      // Nothing else this round: a cut may have closed the session whose
      // readiness was reported.
      absl::StatusOr<bool> go_on = HandleSignals();
      if (!go_on.ok()) return go_on.status();
      if (!*go_on) return absl::OkStatus();
      continue;
    }
    status = FinishFlushIfDue();
    if (!status.ok()) return status;
    for (const Poller::Ready& r : ready) {
      if (r.fd == listener_.get()) status = Accept();
      if (session_ != nullptr && r.fd == session_->fd()) status = Serve();
      if (!status.ok()) return status;
    }
  }
}

absl::StatusOr<bool> DiskServer::HandleSignals() {
  while (const int signal = TakeSignal(signals_.get())) {
    absl::Status status;
    switch (signal) {
      case SIGUSR1:
        status = Cut();
        break;
      case SIGUSR2:
        PrintCounts();
        break;
      default:  // SIGTERM, SIGINT: the disk loses power for good.
        status = Cut();
        if (status.ok()) PrintCounts();
        if (!status.ok()) return status;
        return false;
    }
    if (!status.ok()) return status;
  }
  return true;
}

absl::Status DiskServer::Cut() {
  // The board and its disk lose power together: a request still in flight
  // is never answered.
  absl::Status status = EndSession();
  if (!status.ok()) return status;
  absl::StatusOr<CutReport> report = cache_->Cut();
  if (!report.ok()) return report.status();
  PrintLine(absl::StrFormat("cut %d mode=%s unflushed=%d kept=%d dropped=%d",
                            cache_->counts().cuts,
                            CutModeName(cache_->options().mode),
                            report->unflushed, report->kept, report->dropped));
  return absl::OkStatus();
}

void DiskServer::PrintCounts() const {
  const DiskCounts& c = cache_->counts();
  PrintLine(absl::StrFormat(
      "counts reads=%d writes=%d fua_writes=%d flushes=%d trims=%d cuts=%d "
      "kept=%d dropped=%d connections=%d unflushed=%d",
      c.reads, c.writes, c.fua_writes, c.flushes, c.trims, c.cuts, c.kept,
      c.dropped, connections_, cache_->unflushed()));
}

absl::Status DiskServer::Accept() {
  if (session_ != nullptr) return absl::OkStatus();
  absl::StatusOr<ScopedFd> socket = AcceptConnection(listener_.get());
  if (!socket.ok()) {
    // A client that gave up between poll and accept: wait for the next.
    std::fprintf(stderr, "outbox-lossy-disk: %s\n",
                 std::string(socket.status().message()).c_str());
    return absl::OkStatus();
  }
  ++connections_;
  absl::StatusOr<std::unique_ptr<NbdSession>> session =
      NbdSession::Start(*std::move(socket), cache_, flush_latency_);
  if (!session.ok()) return absl::OkStatus();  // the client is gone already
  // One client at a time: the next connection waits in the backlog.
  poller_->Forget(listener_.get());
  session_ = *std::move(session);
  return poller_->Watch(session_->fd(), Poller::kReadable);
}

absl::Status DiskServer::Serve() {
  absl::StatusOr<bool> go_on = session_->Step();
  if (go_on.ok() && *go_on) {
    // Requests are answered in order: the next waits in the socket until
    // the held FLUSH is done.
    if (session_->flushing()) poller_->Forget(session_->fd());
    return absl::OkStatus();
  }
  // A client killed with its board just disconnects; anything else is
  // worth a line for whoever debugs the harness.
  if (!go_on.ok() && !absl::IsUnavailable(go_on.status())) {
    std::fprintf(stderr, "outbox-lossy-disk: connection closed: %s\n",
                 std::string(go_on.status().message()).c_str());
  }
  return EndSession();
}

absl::Status DiskServer::FinishFlushIfDue() {
  if (session_ == nullptr || !session_->flushing() ||
      absl::Now() < session_->flush_due()) {
    return absl::OkStatus();
  }
  absl::Status status = session_->FinishFlush();
  if (!status.ok()) return EndSession();  // the client is gone
  return poller_->Watch(session_->fd(), Poller::kReadable);
}

absl::Status DiskServer::EndSession() {
  if (session_ == nullptr) return absl::OkStatus();
  poller_->Forget(session_->fd());
  session_.reset();
  return poller_->Watch(listener_.get(), Poller::kReadable);
}

}  // namespace outbox::vm
