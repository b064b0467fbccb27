// Copyright (c) edge-outbox authors.
//
// LogRecord: one thing the delivery agent reports (AgentOptions::log), with
// a stable, machine-readable event name beside the human message, so that a
// log shipper can alert on `destination_unreachable` or count `dead_letter`
// without parsing English. Records never carry payloads or secrets.

#ifndef OUTBOX_AGENT_INCLUDE_OUTBOX_LOG_H_
#define OUTBOX_AGENT_INCLUDE_OUTBOX_LOG_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace outbox {

enum class LogSeverity { kInfo, kWarning, kError };

// What happened. Each value has a stable name (LogEventName), which is what
// logs and their readers use; names are never reused for something else.
enum class LogEvent {
  // The agent, at start: the store it delivers from, with its pending
  // events and dead letters.
  kStoreOpened,
  // The agent stopped after Stop(); requests still in flight were abandoned
  // (they stay pending).
  kAgentStopped,
  // A request to a destination never reached its receiver: its events are
  // held (one line, not one per event) and probed on a backoff timer.
  kDestinationUnreachable,
  // The first answer after kDestinationUnreachable.
  kDestinationReachable,
  // HTTP 410: nothing more is sent to the destination until it is resumed.
  kDestinationPaused,
  kDestinationResumed,  // Agent::ResumeDestination
  // An attempt failed and the event is due again later.
  kRetryScheduled,
  // An event will not be sent again: moved to the dead letters (reason in
  // the message).
  kDeadLetter,
  // A pending entry that cannot be decoded was moved to the dead letters.
  kQuarantined,
  // A store write failed with kResourceExhausted: deliveries pause.
  kDiskFull,
  // Dead letters older than dead_letter_retention were deleted.
  kDeadLettersPurged,
  // The agent settled an event that was no longer pending (removed by
  // another writer): nothing to update.
  kEventNotPending,
  // Netlink cannot be watched: unreachable destinations are probed on the
  // timer only.
  kNetworkNotWatched,
  // The transport or the agent's timer reported an error; the agent goes on.
  kInternalError,
  // Records of one kind about one destination beyond the first few a minute
  // (retry_scheduled, dead_letter) were not written one by one: how many, and
  // over how long. Written when the next such record comes after that
  // minute, or when the agent stops.
  kLogSuppressed,
  // The agent's metrics_file could not be written (full disk, directory
  // gone); delivery goes on and the write is retried every interval. Once.
  kMetricsFileFailed,
  // The metrics_file written again after kMetricsFileFailed.
  kMetricsFileRecovered,
  // A workflow step failed for good, or the workflow was cancelled: its
  // completed steps are being reverted, last first.
  kWorkflowCompensating,
  // A workflow's revert failed for good (or could not be built): it is
  // dead-lettered and nothing more runs until an operator resumes it.
  kWorkflowNeedsAttention,
  // The receiver refused the device rather than the event (HTTP 401 or 403,
  // an MQTT or Kafka authorization error): the destination's events are
  // held, not dead-lettered, and one probe at a time retries. Once per
  // spell; kDestinationReachable ends it.
  kDestinationRefused,
  // The wall clock is behind the newest time the store has seen by more
  // than clock_tolerance (or not synchronized, with
  // require_synchronized_clock): destinations that time-stamp (HTTP,
  // Kafka) hold their events. Once per spell.
  kClockUntrusted,
  // The clock passed the store's mark again: delivery resumes.
  kClockTrusted,
  // No route of the configuration takes an event's type (or the event
  // names a destination it lacks): every event of that type is held, none
  // dead-lettered, until the agent is reloaded or restarted. Once per type.
  kNoRoute,
  // A workflow's definition cannot be used (a stored destination's file is
  // gone, or its state names no definition and the configuration has no
  // workflow for its type): every event of its type is held until the
  // agent is reloaded or restarted. Once per type.
  kWorkflowHeld,
  // Written by Agent::Reload (outbox-agent's SIGHUP): the configuration and
  // credential files were read again and the agent runs with them (requests
  // in flight finished under the old ones), or the new ones were refused
  // and the old go on (why in the message).
  kConfigReloaded,
  kConfigReloadRefused,
  // Written by outbox-agent itself, not the library: delivering started,
  // a --drain-and-exit finished, the counters at exit, a fatal error.
  kAgentStarted,
  kDrained,
  kAgentExit,
  kFatalError,
  // Events of a class with on_full drop_oldest were evicted by commits (or
  // expired by the class's expire_after): how many since the last such
  // record, with the class counts. At most one record per check (10 s), so
  // a burst is one line.
  kEventsEvicted,
  kEventsExpired,
  // A destination's receiver dead-lettered dead_letter_fuse events in a row
  // with the same answer (a 400 to everything, say): its events are held,
  // not dead-lettered, and one probe at a time retries, until a delivery
  // (kDestinationReachable ends it). Once per spell.
  kDeadLetterFuse,  // the last one (log.cc checks that each has a name)
};

// The stable name of `event`, e.g. "destination_unreachable".
absl::string_view LogEventName(LogEvent event);
// "info", "warning" or "error".
absl::string_view LogSeverityName(LogSeverity severity);
// Every LogEvent, in declaration order (for readers that list them, and
// the check that docs/metrics-and-logs.md names them all).
std::vector<LogEvent> AllLogEvents();

// One log line's content. Plain value; no synchronization needed.
struct LogRecord {
  absl::Time time;  // wall clock of the agent's Clock
  LogSeverity severity = LogSeverity::kInfo;
  LogEvent event = LogEvent::kInternalError;
  std::string event_id;     // the event's id, if it is about one; else ""
  std::string destination;  // the destination's name, if any; else ""
  // For humans: what happened and what follows. Never payloads, never
  // secrets, never header values.
  std::string message;
};

}  // namespace outbox

#endif  // OUTBOX_AGENT_INCLUDE_OUTBOX_LOG_H_
