// Copyright (c) edge-outbox authors.
//
// outbox-sink: a Standard Webhooks receiver for integration tests and demos.
// See SinkUsage() (--help) for what it does; this file only wires it up.

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "platform/atomic_file.h"
#include "tools/sink/receiver.h"
#include "tools/sink/request_log.h"
#include "tools/sink/routes.h"
#include "tools/sink/sink_options.h"
#include "tools/sink/sink_server.h"
#include "webhooks/signature.h"

namespace outbox::sink {
namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

int Fail(int code, const absl::Status& status) {
  std::fprintf(stderr, "outbox-sink: %s\n",
               std::string(status.message()).c_str());
  return code;
}

// Written to a temporary name and renamed (WriteFileAtomically), so a test
// polling for the file never reads a half-written port.
absl::Status WritePortFile(const std::string& path, int port) {
  return WriteFileAtomically(path, absl::StrCat(port, "\n"));
}

uint64_t RandomSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) | rd();
}

int Run(const std::vector<std::string>& args) {
  absl::StatusOr<SinkOptions> options = ParseSinkFlags(args);
  if (!options.ok()) return Fail(kExitUsage, options.status());
  if (options->help) {
    std::fputs(SinkUsage().c_str(), stdout);
    return 0;
  }
  absl::StatusOr<std::vector<WebhookSecret>> secrets =
      ReadSecretsFile(options->secret_file);
  if (!secrets.ok()) return Fail(kExitUsage, secrets.status());
  std::optional<RouteTable> routes;
  if (!options->routes_path.empty()) {
    absl::StatusOr<RouteTable> loaded = RouteTable::Load(options->routes_path);
    if (!loaded.ok()) return Fail(kExitUsage, loaded.status());
    routes = *std::move(loaded);
  }
  absl::StatusOr<std::unique_ptr<RequestLog>> log =
      RequestLog::Open(options->log_path);
  if (!log.ok()) return Fail(kExitRuntime, log.status());

  const uint64_t seed = options->faults.seed.value_or(RandomSeed());
  const size_t secret_count = secrets->size();
  Receiver receiver(*std::move(secrets), *options, seed, log->get(),
                    routes.has_value() ? &*routes : nullptr);

  // A dropped connection makes httplib write into a shut-down socket.
  signal(SIGPIPE, SIG_IGN);
  // SIGTERM/SIGINT are taken by sigwait in one thread rather than by a
  // handler: stopping the server is not async-signal-safe. Blocked before
  // any thread exists, so every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  absl::StatusOr<std::unique_ptr<SinkServer>> server = SinkServer::Bind(
      *options,
      routes.has_value() ? routes->Methods() : std::set<std::string>(),
      &receiver);
  if (!server.ok()) return Fail(kExitRuntime, server.status());
  SinkServer* const srv = server->get();
  if (!options->port_file.empty()) {
    absl::Status written = WritePortFile(options->port_file, srv->port());
    if (!written.ok()) return Fail(kExitRuntime, written);
  }
  std::printf(
      "outbox-sink: listening on %s://%s:%d (seed %llu, %zu secret%s)\n",
      options->tls_cert.empty() ? "http" : "https",
      options->bind_address.c_str(), srv->port(),
      static_cast<unsigned long long>(seed), secret_count,
      secret_count == 1 ? "" : "s");
  std::fflush(stdout);

  absl::Notification served;
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    // Stop() does nothing until Serve() has started listening; repeat it
    // until Serve() returns, in case the signal came first.
    do {
      srv->Stop();
    } while (!served.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  });
  const bool serve_ok = srv->Serve();
  served.Notify();
  // Wakes the signal thread if Serve() ended on its own (an error).
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  if (!serve_ok) {
    return Fail(kExitRuntime, absl::UnavailableError("the server failed"));
  }
  std::printf("outbox-sink: stopped\n");
  return 0;
}

}  // namespace
}  // namespace outbox::sink

int main(int argc, char** argv) {
  return outbox::sink::Run(std::vector<std::string>(argv + 1, argv + argc));
}
