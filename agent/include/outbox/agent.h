// Copyright (c) edge-outbox authors.
//
// Agent: the single-threaded delivery agent. It takes due events from a
// Store and POSTs them to their destinations (Standard Webhooks headers,
// signed), marks them delivered, schedules retries, dead-letters what cannot
// be delivered, and goes quiet while the device is offline.

#ifndef OUTBOX_AGENT_INCLUDE_OUTBOX_AGENT_H_
#define OUTBOX_AGENT_INCLUDE_OUTBOX_AGENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "outbox/clock.h"
#include "outbox/http_transport.h"
#include "outbox/log.h"
#include "outbox/store.h"

namespace outbox {

struct AgentOptions {
  // The configuration (protobuf text format; see agent/config/testdata/
  // agent.textproto): a file path, or the text itself when config_path is
  // empty. Relative paths inside resolve against the file's directory (the
  // working directory for text). One of the two is required.
  std::string config_path;
  std::string config_text;

  // Sends the requests. Default (nullptr): libcurl, with the configured
  // max_in_flight.
  std::unique_ptr<HttpTransport> transport;

  // If true, Linux netlink link/address/route notifications make the agent
  // probe unreachable destinations at once; without them (or where netlink is
  // forbidden) it probes on a backoff timer only. Default: true.
  bool watch_network = true;

  // Time source. Borrowed; must outlive the agent. Default: system clock.
  Clock* clock = nullptr;

  // Receives one record per noteworthy thing (outbox/log.h): one per state
  // change (a destination unreachable, reachable, paused by a 410, resumed;
  // a dead letter; a full disk; the store opened at start, the agent
  // stopped) and one per failed attempt that will be retried. Events held
  // for an unreachable destination make one record, not one each. Never
  // payloads, never secrets. Called on the agent's thread (from Create(),
  // then from Run/Drain/RunOnce/ResumeDestination), so it must not call the
  // agent back. Default: discard.
  std::function<void(const LogRecord& record)> log;

  // How long Stop() lets requests already in flight finish; after that they
  // are abandoned (left pending, resent later with the same id).
  // Default: 5 seconds.
  absl::Duration shutdown_grace = absl::Seconds(5);
};

// Counters since the agent was created.
struct AgentStats {
  uint64_t requests = 0;   // HTTP requests started
  uint64_t delivered = 0;  // 2xx answers marked delivered
  uint64_t retries_scheduled = 0;
  uint64_t dead_lettered = 0;
  // Requests that never reached the receiver, or whose TLS verification
  // failed (nothing was sent): not attempts.
  uint64_t offline_results = 0;
  uint64_t quarantined = 0;  // undecodable entries moved to dead letters
  // Answers that refused the device, not the event (HTTP 401/403, not
  // authorized): not attempts, the events stay pending.
  uint64_t refused_results = 0;
  bool offline = false;    // every destination is unreachable now
  uint64_t in_flight = 0;  // requests started and not answered yet, now
};

// The delivery agent. One thread drives it: either Run() until Stop(), or a
// firmware main loop that polls fd() and calls RunOnce().
//
// Thread-safety: REQUIRES external synchronization, except Stop(), which any
// thread (or a signal handler) may call at any time.
//
// Delivery is at least once: an event whose 2xx answer was received but not
// yet marked delivered when the power went is sent again, with the same
// webhook-id / Idempotency-Key, after the restart.
class Agent {
 public:
  // Loads the configuration and prepares the agent for `store` (borrowed;
  // must outlive the agent). Errors: the configuration's (kInvalidArgument,
  // kNotFound, kFailedPrecondition for a world-readable secrets file, ...),
  // or the transport's.
  static absl::StatusOr<std::unique_ptr<Agent>> Create(Store* store,
                                                       AgentOptions options);

  virtual ~Agent() = default;

  // Delivers until Stop(). Returns OK after a clean stop; an error only when
  // the agent cannot go on (the store refuses writes, epoll fails).
  virtual absl::Status Run() = 0;

  // Delivers until nothing is due and nothing is in flight (events waiting
  // for a retry time or for an unreachable destination stay pending; events
  // a rate limit holds are due, and it waits for them), or until Stop().
  // Returns the number of events still pending.
  virtual absl::StatusOr<uint64_t> Drain() = 0;

  // For a firmware main loop: waits until there is work (fd() readable) or
  // until `deadline`, whichever comes first, then does all work that is
  // ready: finished requests, new due events, timers, and returns. The agent
  // arms its own timer, so polling fd() and calling RunOnce() whenever it is
  // readable is enough. RunOnce() never waits.
  virtual absl::Status RunOnce(absl::Time deadline) = 0;
  absl::Status RunOnce() { return RunOnce(absl::InfinitePast()); }

  // Readable when RunOnce() has work (it aggregates the transport's sockets,
  // the store's commit wake-up, the retry timer and network changes).
  virtual int fd() const = 0;

  // Asks Run()/Drain() to return: in-flight requests get
  // AgentOptions::shutdown_grace to finish, then are abandoned. Safe from any
  // thread and from a signal handler.
  virtual void Stop() = 0;

  // Asks Run() to return OK after the round under way, without stopping:
  // requests in flight go on, and Run() may be called again to continue.
  // For a process that must act on the agent's thread, as outbox-agent does
  // to re-read its configuration on SIGHUP. Safe from any thread and from a
  // signal handler.
  virtual void Interrupt() = 0;

  // Replaces the configuration, as outbox-agent does on SIGHUP, for
  // firmware that runs the agent in its own process: `config_path` (a file)
  // or, when it is empty, `config_text`, as in AgentOptions; the other
  // options stay. The new configuration and every file it names are read
  // and checked in full first: if anything is wrong, the running
  // configuration goes on, a config_reload_refused record says why, and
  // the error is returned (the codes of Create). Otherwise the requests in
  // flight finish under the configuration they started with (within
  // shutdown_grace; any still out then are sent again later, under the
  // same ids), and the agent goes on with the new one (config_reloaded):
  // fd() stays the same descriptor and stats() keep counting. A workflow
  // already running finishes under the definition it started with, and
  // the events of a type the new configuration does not route are held,
  // not dead-lettered. Blocks until the requests in flight are done.
  // REQUIRES: called on the agent's thread, with Run() not running (call
  // Interrupt() first, as outbox-agent does).
  // Errors, besides the configuration's: those of a new transport, poller
  // or broker connection (the old configuration then goes on if it can
  // still be set up again; else the agent is stopped), or a store error the
  // old loop met while it stopped (the new one runs all the same).
  virtual absl::Status Reload(const std::string& config_path,
                              const std::string& config_text) = 0;

  // Starts sending to a destination paused by an HTTP 410 again.
  // Errors: kNotFound for an unknown destination.
  virtual absl::Status ResumeDestination(absl::string_view name) = 0;

  virtual AgentStats stats() const = 0;
};

// The event classes (`classes { }`) of the configuration file at
// `config_path`, checked, for Options::event_classes: a program that reads
// its agent's configuration from a file opens its store with them, since
// the store enforces them at commit. Agent::Create and Reload refuse a
// configuration that names classes other than the store's. Errors: those of
// reading the configuration (see AgentOptions).
absl::StatusOr<std::vector<EventClass>> LoadEventClasses(
    const std::string& config_path);

// Sets the store options that the configuration file at `config_path`
// names, as outbox-agent opens its store with them: event_classes (see
// LoadEventClasses) and memory_profile (`agent { memory_profile }`). The
// other fields of `*options` are left as they are. Errors: those of
// reading the configuration (see AgentOptions); `*options` is then
// unchanged.
absl::Status LoadStoreOptions(const std::string& config_path, Options* options);

}  // namespace outbox

#endif  // OUTBOX_AGENT_INCLUDE_OUTBOX_AGENT_H_
