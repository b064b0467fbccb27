// Copyright (c) edge-outbox authors.
//
// The agent's loop for destinations that take batches (Destination::batch):
// the round's due events bound for one are grouped into NDJSON requests
// (batch_request.h) instead of one request each.
//
// FIFO per ordering key: a keyed event due now heads its key, and the events
// queued behind it (Store::KeyFollowers) ride in the same request, in order,
// as far as they go to the same destination. A key's run is never split
// across two requests in flight: what does not fit waits for this batch to
// be settled, and so cannot overtake it. Each event of a batch is then
// settled as the one answer says (HandleResult): a 2xx delivers them all.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/agent_impl.h"
#include "agent/send/batch_request.h"
#include "base/status_macros.h"
#include "lib/crash_points.h"

namespace outbox {

void AgentImpl::QueueForBatch(PendingEvent event,
                              const Destination& destination) {
  for (auto& [d, heads] : batch_heads_) {
    if (d == &destination) {
      heads.push_back(std::move(event));
      return;
    }
  }
  batch_heads_.emplace_back(&destination, std::vector<PendingEvent>());
  batch_heads_.back().second.push_back(std::move(event));
}

absl::StatusOr<std::vector<PendingEvent>> AgentImpl::RunOf(
    PendingEvent head, const Destination& destination, absl::Time now) {
  const size_t room = destination.batch.max_events - 1;
  std::vector<PendingEvent> run;
  std::vector<PendingEvent> followers;
  if (!head.ordering_key.empty() && room > 0) {
    OUTBOX_ASSIGN_OR_RETURN(followers, store_->KeyFollowers(head, room));
  }
  run.push_back(std::move(head));
  for (PendingEvent& f : followers) {
    // The run ends where the key's next event goes elsewhere, is a
    // workflow's, or may not be sent yet (deliver_after): it waits its turn
    // behind this batch.
    absl::StatusOr<const Destination*> to =
        Route(config_, f.type, f.destination);
    if (!to.ok() || *to != &destination || f.next_attempt > now ||
        definitions_.MayBeWorkflow(f.type, f.destination)) {
      break;
    }
    if (definitions_.MustRead(f.type, f.destination)) {
      // A workflow state written before definitions were kept: not a line
      // of a batch (the head was read the same way in StartDueEvents).
      OUTBOX_ASSIGN_OR_RETURN(std::optional<WorkflowRecord> record,
                              ReadWorkflowRecord(f.id));
      if (record.has_value() && !record->state.empty()) break;
    }
    run.push_back(std::move(f));
  }
  return run;
}

absl::Status AgentImpl::SendBatches(absl::Time now, absl::Time steady) {
  std::vector<std::pair<const Destination*, std::vector<PendingEvent>>> all;
  all.swap(batch_heads_);
  for (auto& [destination, heads] : all) {
    OUTBOX_RETURN_IF_ERROR(
        SendBatchesTo(*destination, std::move(heads), now, steady));
  }
  return absl::OkStatus();
}

absl::Status AgentImpl::SendBatchesTo(const Destination& destination,
                                      std::vector<PendingEvent> heads,
                                      absl::Time now, absl::Time steady) {
  const BatchSettings& limits = destination.batch;
  std::vector<PendingEvent> batch;
  // The lines of `batch`, each built once: measured to pack it, then sent.
  std::string body;
  const size_t max = static_cast<size_t>(config_.agent.max_in_flight);
  for (PendingEvent& head : heads) {
    if (in_flight_.size() >= max) return absl::OkStatus();  // full
    OUTBOX_ASSIGN_OR_RETURN(std::vector<PendingEvent> run,
                            RunOf(std::move(head), destination, now));
    std::vector<std::string> lines;
    lines.reserve(run.size());
    for (const PendingEvent& e : run) lines.push_back(BatchLine(e));
    size_t fit = LinesThatFit(lines, batch.size(), body.size(),
                              limits.max_events, limits.max_bytes);
    if (fit == 0) {  // full: send it and start the next with this run
      if (!SendBatch(std::move(batch), std::move(body), destination, now))
        return absl::OkStatus();
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
  if (batch.empty() || in_flight_.size() >= max ||
      HoldForMore(batch, body.size(), destination, now, steady)) {
    return absl::OkStatus();
  }
  SendBatch(std::move(batch), std::move(body), destination, now);
  return absl::OkStatus();
}

bool AgentImpl::HoldForMore(const std::vector<PendingEvent>& batch,
                            size_t bytes, const Destination& destination,
                            absl::Time now, absl::Time steady) {
  const BatchSettings& limits = destination.batch;
  if (limits.max_wait <= absl::ZeroDuration() ||
      batch.size() >= limits.max_events || bytes >= limits.max_bytes ||
      batch.front().attempts > 0) {
    return false;
  }
  // Measured from the first event's commit (wall clock; a clock set back
  // makes the age negative, which waits at most max_wait).
  const absl::Duration age =
      std::max(now - batch.front().created, absl::ZeroDuration());
  if (age >= limits.max_wait) return false;
  next_due_ = std::min(next_due_, steady + (limits.max_wait - age));
  return true;
}

bool AgentImpl::SendBatch(std::vector<PendingEvent> batch, std::string body,
                          const Destination& destination, absl::Time now) {
  // Even one event goes as a batch: the receiver asked for that format.
  if (!RateAllows(destination, Steady())) return false;  // a later round
  const int64_t count = static_cast<int64_t>(batch.size());
  const int64_t bytes = static_cast<int64_t>(body.size());
  const uint64_t tag = next_tag_++;
  std::vector<const PendingEvent*> events;
  for (const PendingEvent& e : batch) events.push_back(&e);
  HttpRequest request =
      BuildBatchRequest(events, std::move(body), destination, now, tag);
  internal::CrashPoint(internal::kAgentBeforeSend);
  absl::Status started = http_->StartRequest(std::move(request));
  if (absl::IsResourceExhausted(started)) return false;  // next round
  if (!started.ok()) {
    // Refused by the transport itself: sending it again cannot help (as
    // for one event, Send()).
    for (PendingEvent& e : batch) {
      DeadLetterUnsent(std::move(e), AgentMetrics::DeadReason::kUnsendable,
                       absl::StrCat("cannot be sent: ", started.message()));
    }
    return true;
  }
  ++stats_.requests;
  RateTook(destination, count, bytes);
  const bool probe = reachability_.OnSend(destination.name);
  for (const PendingEvent& e : batch) in_flight_seqs_.insert(e.seq);
  PendingEvent head = std::move(batch[0]);
  batch.erase(batch.begin());
  in_flight_.emplace(tag, InFlight{std::move(head), &destination, probe,
                                   nullptr, std::move(batch)});
  return true;
}

void AgentImpl::SettleBatchRest(InFlight* flight, const SendResult& result,
                                absl::Time now) {
  for (PendingEvent& e : flight->batch_rest) {
    const Decision d =
        Decide(result, e, flight->destination->retry, now, bitgen_);
    if (d.kind == Decision::Kind::kDeadLetter) {
      dead_reasons_[e.seq] = d.rejected ? AgentMetrics::DeadReason::kRejected
                                        : AgentMetrics::DeadReason::kGaveUp;
    }
    settled_.push_back(SettlementFor(d, std::move(e), now));
  }
  flight->batch_rest.clear();
}

}  // namespace outbox
