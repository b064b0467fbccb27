// Copyright (c) edge-outbox authors.

#include "outbox/log.h"

#include <iterator>
#include <vector>

namespace outbox {
namespace {

struct Named {
  LogEvent event;
  const char* name;
};

// In LogEvent's order. The names are an interface (log shippers alert on
// them; docs/metrics-and-logs.md lists them, checked by log_test): never
// rename one.
constexpr Named kEvents[] = {
    {LogEvent::kStoreOpened, "store_opened"},
    {LogEvent::kAgentStopped, "agent_stopped"},
    {LogEvent::kDestinationUnreachable, "destination_unreachable"},
    {LogEvent::kDestinationReachable, "destination_reachable"},
    {LogEvent::kDestinationPaused, "destination_paused"},
    {LogEvent::kDestinationResumed, "destination_resumed"},
    {LogEvent::kRetryScheduled, "retry_scheduled"},
    {LogEvent::kDeadLetter, "dead_letter"},
    {LogEvent::kQuarantined, "quarantined"},
    {LogEvent::kDiskFull, "disk_full"},
    {LogEvent::kDeadLettersPurged, "dead_letters_purged"},
    {LogEvent::kEventNotPending, "event_not_pending"},
    {LogEvent::kNetworkNotWatched, "network_not_watched"},
    {LogEvent::kInternalError, "internal_error"},
    {LogEvent::kLogSuppressed, "log_suppressed"},
    {LogEvent::kMetricsFileFailed, "metrics_file_failed"},
    {LogEvent::kMetricsFileRecovered, "metrics_file_recovered"},
    {LogEvent::kWorkflowCompensating, "workflow_compensating"},
    {LogEvent::kWorkflowNeedsAttention, "workflow_needs_attention"},
    {LogEvent::kDestinationRefused, "destination_refused"},
    {LogEvent::kClockUntrusted, "clock_untrusted"},
    {LogEvent::kClockTrusted, "clock_trusted"},
    {LogEvent::kNoRoute, "no_route"},
    {LogEvent::kWorkflowHeld, "workflow_held"},
    {LogEvent::kConfigReloaded, "config_reloaded"},
    {LogEvent::kConfigReloadRefused, "config_reload_refused"},
    {LogEvent::kAgentStarted, "agent_started"},
    {LogEvent::kDrained, "drained"},
    {LogEvent::kAgentExit, "agent_exit"},
    {LogEvent::kFatalError, "fatal_error"},
    {LogEvent::kEventsEvicted, "events_evicted"},
    {LogEvent::kEventsExpired, "events_expired"},
    {LogEvent::kDeadLetterFuse, "dead_letter_fuse"},
};

// Each entry sits at its enum value's index, so LogEventName is a lookup.
constexpr bool InEnumOrder() {
  for (size_t i = 0; i < std::size(kEvents); ++i) {
    if (static_cast<size_t>(kEvents[i].event) != i) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kEvents must follow LogEvent's order");
static_assert(std::size(kEvents) ==
                  static_cast<size_t>(LogEvent::kDeadLetterFuse) + 1,
              "every LogEvent needs a name");

}  // namespace

absl::string_view LogEventName(LogEvent event) {
  const size_t i = static_cast<size_t>(event);
  return i < std::size(kEvents) ? kEvents[i].name : "unknown";
}

absl::string_view LogSeverityName(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::kInfo:
      return "info";
    case LogSeverity::kWarning:
      return "warning";
    case LogSeverity::kError:
      return "error";
  }
  return "unknown";
}

std::vector<LogEvent> AllLogEvents() {
  std::vector<LogEvent> all;
  for (const Named& n : kEvents) all.push_back(n.event);
  return all;
}

}  // namespace outbox
