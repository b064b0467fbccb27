// Copyright (c) edge-outbox authors.
//
// The Agent a caller holds: the delivery loop (AgentImpl, agent_impl.h)
// under the configuration of the moment, replaced whole on Reload. The
// caller keeps one object and one descriptor across reloads: fd() is an
// epoll set holding the loop's own descriptor, swapped with the loop.
//
// Stop() and Interrupt() may come from another thread or a signal handler
// while Reload swaps the loop: they reach the loop through an atomic
// pointer, and Reload waits for any call under way before it destroys the
// old loop (a handler on the agent's own thread has returned before Reload
// goes on, so the wait never blocks on it). A Stop() that finds no loop is
// passed to the next one.

#include "outbox/agent.h"

#include <sys/epoll.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/agent_impl.h"
#include "base/status_macros.h"
#include "outbox/clock.h"
#include "platform/poller.h"

namespace outbox {
namespace {

AgentStats Add(AgentStats a, const AgentStats& b) {
  a.requests += b.requests;
  a.delivered += b.delivered;
  a.retries_scheduled += b.retries_scheduled;
  a.dead_lettered += b.dead_lettered;
  a.offline_results += b.offline_results;
  a.quarantined += b.quarantined;
  a.refused_results += b.refused_results;
  a.offline = b.offline;  // the running loop's
  a.in_flight = b.in_flight;
  return a;
}

bool SameClass(const EventClass& a, const EventClass& b) {
  return a.name == b.name && a.event_types == b.event_types &&
         a.priority == b.priority &&
         a.max_pending_events == b.max_pending_events &&
         a.max_pending_bytes == b.max_pending_bytes && a.on_full == b.on_full &&
         a.evictable == b.evictable && a.fiscal == b.fiscal &&
         a.keep_evicted == b.keep_evicted && a.expire_after == b.expire_after;
}

// A configuration that names classes must name the ones the store enforces
// (they are store options, fixed while it is open): otherwise an operator
// would read limits and priorities in the file that nothing applies.
// Whichever names them, the store enforces its classes: a workflow whose
// events fall in an evictable one is refused here too, when the
// configuration names no classes (the loader refuses it when it does).
absl::Status CheckClasses(const AgentConfig& config, const Store& store) {
  const std::vector<EventClass>& stored = store.event_classes();
  OUTBOX_RETURN_IF_ERROR(CheckWorkflowsNotEvictable(stored, config.workflows));
  if (config.classes.empty() ||
      std::equal(config.classes.begin(), config.classes.end(), stored.begin(),
                 stored.end(), SameClass)) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "the configuration's classes differ from the ", stored.size(),
      " the store was opened with (Options::event_classes): the store "
      "enforces them at every commit, so open it with the configuration's "
      "(outbox::LoadEventClasses), restarting the program that opens it"));
}

absl::StatusOr<AgentConfig> ReadConfig(const std::string& path,
                                       const std::string& text,
                                       const Store& store) {
  OUTBOX_ASSIGN_OR_RETURN(AgentConfig config,
                          !path.empty()
                              ? LoadAgentConfig(path)
                              : ParseAgentConfig(text, "config_text"));
  OUTBOX_RETURN_IF_ERROR(CheckClasses(config, store));
  return config;
}

class ReloadableAgent final : public Agent {
 public:
  ReloadableAgent(Store* store, AgentOptions options,
                  const AgentTestOptions& test)
      : store_(store),
        log_(std::move(options.log)),
        clock_(options.clock != nullptr ? options.clock : SystemClock()),
        watch_network_(options.watch_network),
        shutdown_grace_(options.shutdown_grace),
        test_(test),
        own_transport_(options.transport != nullptr),
        first_transport_(std::move(options.transport)) {}

  ~ReloadableAgent() override {
    live_.store(nullptr);
    while (users_.load() != 0) {
      // A Stop() or Interrupt() on another thread, a few instructions long.
    }
  }

  absl::Status Start(AgentConfig config) {
    OUTBOX_ASSIGN_OR_RETURN(poller_, Poller::Create());
    return Install(std::move(config), std::move(first_transport_));
  }

  absl::Status Run() override {
    OUTBOX_RETURN_IF_ERROR(Running());
    return impl_->Run();
  }
  absl::StatusOr<uint64_t> Drain() override {
    OUTBOX_RETURN_IF_ERROR(Running());
    return impl_->Drain();
  }
  using Agent::RunOnce;
  absl::Status RunOnce(absl::Time deadline) override {
    OUTBOX_RETURN_IF_ERROR(Running());
    return impl_->RunOnce(deadline);
  }
  int fd() const override { return poller_->fd(); }
  void Stop() override {
    stop_requested_.store(true);
    Signal(&AgentImpl::Stop);
  }
  void Interrupt() override {
    interrupts_.fetch_add(1);
    Signal(&AgentImpl::Interrupt);
  }
  absl::Status ResumeDestination(absl::string_view name) override {
    OUTBOX_RETURN_IF_ERROR(Running());
    return impl_->ResumeDestination(name);
  }
  AgentStats stats() const override {
    return impl_ != nullptr ? Add(before_, impl_->stats()) : before_;
  }
  absl::Status Reload(const std::string& config_path,
                      const std::string& config_text) override;

 private:
  absl::Status Running() const {
    if (impl_ != nullptr) return absl::OkStatus();
    return absl::FailedPreconditionError(
        "the agent has no configuration running: a reload could not set up "
        "the new one nor the old one again (see its error)");
  }
  // Calls `f` on the loop, if there is one, safely against Retire().
  void Signal(void (AgentImpl::*f)()) {
    users_.fetch_add(1);
    if (AgentImpl* impl = live_.load()) (impl->*f)();
    users_.fetch_sub(1);
  }
  absl::Status Install(AgentConfig config,
                       std::unique_ptr<HttpTransport> transport);
  // Stops sending to the running loop (REQUIRES: stopped) and destroys it,
  // keeping its counters; returns its transport when it was the caller's.
  std::unique_ptr<HttpTransport> Retire();
  void Log(LogSeverity severity, LogEvent event, std::string message) const {
    if (!log_) return;
    LogRecord record;
    record.time = clock_->Now();
    record.severity = severity;
    record.event = event;
    record.message = std::move(message);
    log_(record);
  }

  Store* const store_;
  const std::function<void(const LogRecord&)> log_;
  Clock* const clock_;
  const bool watch_network_;
  const absl::Duration shutdown_grace_;
  const AgentTestOptions test_;
  // The caller gave the transport: each loop takes it over from the last
  // (else each makes its own, sized by its configuration's max_in_flight).
  const bool own_transport_;
  std::unique_ptr<HttpTransport> first_transport_;

  std::unique_ptr<Poller> poller_;  // fd(): holds the loop's descriptor
  std::unique_ptr<AgentImpl> impl_;
  AgentConfig config_;  // impl_'s, to set up again if a reload fails
  std::atomic<AgentImpl*> live_{nullptr};
  std::atomic<int> users_{0};  // Signal() calls under way
  std::atomic<bool> stop_requested_{false};
  // Interrupt() calls so far: one that comes while Reload lets the old loop
  // finish is passed to the new one (the old loop no longer returns for it).
  std::atomic<uint64_t> interrupts_{0};
  AgentStats before_;  // counters of the loops retired
};

absl::Status ReloadableAgent::Install(
    AgentConfig config, std::unique_ptr<HttpTransport> transport) {
  AgentOptions options;
  options.transport = std::move(transport);
  options.watch_network = watch_network_;
  options.clock = clock_;
  options.log = log_;
  options.shutdown_grace = shutdown_grace_;
  AgentConfig kept = config;
  OUTBOX_ASSIGN_OR_RETURN(impl_, AgentImpl::Create(store_, std::move(options),
                                                   std::move(config), test_));
  absl::Status watched = poller_->Watch(impl_->fd(), EPOLLIN);
  if (!watched.ok()) {
    impl_.reset();
    return watched;
  }
  config_ = std::move(kept);
  live_.store(impl_.get());
  // A Stop() that came while there was no loop.
  if (stop_requested_.load()) impl_->Stop();
  // A caller that polls fd() runs the new loop's first round at once: its
  // due events, retries and the requests the last loop abandoned.
  impl_->Wake();
  return absl::OkStatus();
}

std::unique_ptr<HttpTransport> ReloadableAgent::Retire() {
  if (impl_ == nullptr) return nullptr;
  live_.store(nullptr);
  while (users_.load() != 0) {
    // A Stop() or Interrupt() on another thread, a few instructions long.
  }
  std::unique_ptr<HttpTransport> transport =
      own_transport_ ? impl_->TakeTransport() : nullptr;
  before_ = Add(before_, impl_->stats());
  poller_->Forget(impl_->fd());
  impl_.reset();
  return transport;
}

absl::Status ReloadableAgent::Reload(const std::string& config_path,
                                     const std::string& config_text) {
  OUTBOX_RETURN_IF_ERROR(Running());
  absl::StatusOr<AgentConfig> config =
      ReadConfig(config_path, config_text, *store_);
  if (!config.ok()) {
    Log(LogSeverity::kError, LogEvent::kConfigReloadRefused,
        absl::StrCat("reload: ", config.status().ToString(),
                     "; going on with the configuration already running"));
    return config.status();
  }
  // The requests in flight finish under the configuration they started
  // with; what is still out after the grace is sent again later.
  const uint64_t interrupts = interrupts_.load();
  impl_->Stop();
  const absl::Status stopped = impl_->RunUntilStopped();
  if (!stopped.ok()) {
    Log(LogSeverity::kError, LogEvent::kInternalError,
        absl::StrCat("reload: the old configuration's loop failed while it "
                     "stopped: ",
                     stopped.ToString(),
                     "; its unsettled events stay pending"));
  }
  std::unique_ptr<HttpTransport> transport = Retire();
  AgentConfig old = config_;
  absl::Status installed = Install(*std::move(config), std::move(transport));
  if (!installed.ok()) {
    Log(LogSeverity::kError, LogEvent::kConfigReloadRefused,
        absl::StrCat("reload: ", installed.ToString(),
                     "; going on with the configuration that ran before"));
    // The transport went with the failed loop (a caller's transport cannot
    // be recovered from it): the old configuration gets a new one.
    absl::Status back = Install(std::move(old), nullptr);
    if (!back.ok()) stop_requested_.store(true);
    if (back.ok() && interrupts_.load() != interrupts) impl_->Interrupt();
    return installed;
  }
  if (interrupts_.load() != interrupts) impl_->Interrupt();
  Log(LogSeverity::kInfo, LogEvent::kConfigReloaded,
      absl::StrCat(
          "reload: delivering with ",
          config_path.empty() ? "the new configuration text" : config_path,
          ", credential files read again"));
  // The old loop's own last error (a store write it could not make while
  // stopping), if any: the new loop runs all the same.
  return stopped;
}

}  // namespace

absl::StatusOr<std::vector<EventClass>> LoadEventClasses(
    const std::string& config_path) {
  OUTBOX_ASSIGN_OR_RETURN(AgentConfig config, LoadAgentConfig(config_path));
  return std::move(config.classes);
}

absl::Status LoadStoreOptions(const std::string& config_path,
                              Options* options) {
  OUTBOX_ASSIGN_OR_RETURN(AgentConfig config, LoadAgentConfig(config_path));
  options->event_classes = std::move(config.classes);
  options->memory_profile = config.agent.memory_profile;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Agent>> Agent::Create(Store* store,
                                                     AgentOptions options) {
  return CreateAgentForTest(store, std::move(options), AgentTestOptions());
}

absl::StatusOr<std::unique_ptr<Agent>> CreateAgentForTest(
    Store* store, AgentOptions options, const AgentTestOptions& test) {
  if (store == nullptr) {
    return absl::InvalidArgumentError("Agent::Create: store is null");
  }
  OUTBOX_ASSIGN_OR_RETURN(
      AgentConfig config,
      ReadConfig(options.config_path, options.config_text, *store));
  auto agent =
      std::make_unique<ReloadableAgent>(store, std::move(options), test);
  OUTBOX_RETURN_IF_ERROR(agent->Start(std::move(config)));
  return std::unique_ptr<Agent>(std::move(agent));
}

}  // namespace outbox
