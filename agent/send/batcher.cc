// Copyright (c) edge-outbox authors.
//
// Batcher (batcher.h): a round's due events for batching destinations,
// packed into NDJSON requests.

#include "agent/send/batcher.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "agent/send/batch_request.h"
#include "base/status_macros.h"

namespace outbox {

Batcher::Batcher(Store* store, const AgentConfig& config) : store_(store) {
  for (const Destination& d : config.destinations) {
    if (d.batch.enabled) extra_ = std::max(extra_, d.batch.max_events - 1);
  }
}

void Batcher::Queue(PendingEvent event, const Destination& destination) {
  for (auto& [d, heads] : heads_) {
    if (d == &destination) {
      heads.push_back(std::move(event));
      return;
    }
  }
  heads_.emplace_back(&destination, std::vector<PendingEvent>());
  heads_.back().second.push_back(std::move(event));
}

absl::StatusOr<std::vector<PendingEvent>> Batcher::RunOf(
    Port* port, PendingEvent head, const Destination& destination,
    absl::Time now) {
  const size_t room = destination.batch.max_events - 1;
  std::vector<PendingEvent> run;
  std::vector<PendingEvent> followers;
  if (!head.ordering_key.empty() && room > 0) {
    OUTBOX_ASSIGN_OR_RETURN(followers, store_->KeyFollowers(head, room));
  }
  run.push_back(std::move(head));
  for (PendingEvent& f : followers) {
    // The run ends at the first that may not ride: it waits its turn behind
    // this batch.
    OUTBOX_ASSIGN_OR_RETURN(const bool rides,
                            port->MayRide(f, destination, now));
    if (!rides) break;
    run.push_back(std::move(f));
  }
  return run;
}

absl::StatusOr<absl::Time> Batcher::SendAll(Port* port, absl::Time now,
                                            absl::Time steady) {
  std::vector<std::pair<const Destination*, std::vector<PendingEvent>>> all;
  all.swap(heads_);
  absl::Time hold_until = absl::InfiniteFuture();
  for (auto& [destination, heads] : all) {
    OUTBOX_RETURN_IF_ERROR(
        SendTo(port, *destination, std::move(heads), now, steady, &hold_until));
  }
  return hold_until;
}

absl::Status Batcher::SendTo(Port* port, const Destination& destination,
                             std::vector<PendingEvent> heads, absl::Time now,
                             absl::Time steady, absl::Time* hold_until) {
  const BatchSettings& limits = destination.batch;
  std::vector<PendingEvent> batch;
  // The lines of `batch`, each built once: measured to pack it, then sent.
  std::string body;
  for (PendingEvent& head : heads) {
    if (port->Full()) return absl::OkStatus();
    OUTBOX_ASSIGN_OR_RETURN(std::vector<PendingEvent> run,
                            RunOf(port, std::move(head), destination, now));
    std::vector<std::string> lines;
    lines.reserve(run.size());
    for (const PendingEvent& e : run) lines.push_back(BatchLine(e));
    size_t fit = LinesThatFit(lines, batch.size(), body.size(),
                              limits.max_events, limits.max_bytes);
    if (fit == 0) {  // full: send it and start the next with this run
      if (!port->SendBatch(std::move(batch), std::move(body), destination,
                           now)) {
        return absl::OkStatus();
      }
      batch.clear();
      body.clear();
      fit = LinesThatFit(lines, 0, 0, limits.max_events, limits.max_bytes);
    }
    // The rest of a run that does not fit waits for this batch's answer.
    for (size_t i = 0; i < fit; ++i) {
      body += lines[i];
      batch.push_back(std::move(run[i]));
    }
  }
  if (batch.empty() || port->Full()) return absl::OkStatus();
  const absl::Time held =
      HoldUntil(batch, body.size(), destination, now, steady);
  if (held != absl::InfinitePast()) {
    *hold_until = std::min(*hold_until, held);
    return absl::OkStatus();
  }
  port->SendBatch(std::move(batch), std::move(body), destination, now);
  return absl::OkStatus();
}

absl::Time Batcher::HoldUntil(const std::vector<PendingEvent>& batch,
                              size_t bytes, const Destination& destination,
                              absl::Time now, absl::Time steady) {
  const BatchSettings& limits = destination.batch;
  if (limits.max_wait <= absl::ZeroDuration() ||
      batch.size() >= limits.max_events || bytes >= limits.max_bytes ||
      batch.front().attempts > 0) {
    return absl::InfinitePast();
  }
  // Measured from the first event's commit (wall clock; a clock set back
  // makes the age negative, which waits at most max_wait).
  const absl::Duration age =
      std::max(now - batch.front().created, absl::ZeroDuration());
  if (age >= limits.max_wait) return absl::InfinitePast();
  return steady + (limits.max_wait - age);
}

}  // namespace outbox
