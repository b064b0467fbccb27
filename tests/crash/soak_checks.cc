// Copyright (c) edge-outbox authors.
//
// SoakModel::Check: the soak's invariant, checked against a reopened store
// and the receiver's log. Order matters: transactions left in doubt by the
// cut are settled first (present or absent), because the other checks judge
// events by the state of their transaction.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "agent/retry/retry_policy.h"
#include "tests/crash/soak_model.h"
#include "tests/crash/soak_records.h"

namespace outbox::testing {
namespace {

constexpr size_t kListAll = SIZE_MAX;

}  // namespace

uint64_t SoakModel::Check(Store* store, const DiskState& disk,
                          const std::vector<ReceivedRequest>& log,
                          size_t rolling, std::vector<Violation>* out) {
  resolved_absent_.clear();
  resolved_committed_.clear();
  absl::StatusOr<std::vector<PendingEvent>> pending =
      store->ListPending(kListAll);
  absl::StatusOr<std::vector<DeadLetter>> dead =
      store->ListDeadLetters(kListAll);
  if (!pending.ok() || !dead.ok()) {
    out->push_back({ViolationKind::kUnexpectedError,
                    absl::StrCat("listing the reopened store failed: ",
                                 pending.status().ToString(), " / ",
                                 dead.status().ToString())});
    return 0;
  }
  StoreView view{store, {}, {}};
  for (const PendingEvent& e : *pending) view.pending[e.id] = &e;
  for (const DeadLetter& d : *dead) view.dead[d.event.id] = &d;

  uint64_t checked = CheckStoredCounters(disk, out);
  ResolveInDoubt(view, out);
  checked += CheckReceipts(log, out);
  // Before the acks: they count the workflows' deliveries, and learn which
  // results the reopened store shows.
  checked += workflows_.CheckStored(
      store,
      [&view](const std::string& id) {
        return view.pending.contains(id) ? WorkflowModel::Where::kPending
               : view.dead.contains(id)  ? WorkflowModel::Where::kDead
                                         : WorkflowModel::Where::kGone;
      },
      log.size(), rolling, &acks_, out);
  checked += acks_.Check(disk, log, workflows_.deliveries(), out);
  checked += CheckStoredEvents(view, out);
  checked += CheckOpenTxns(view, out);
  checked += CheckSettledTxns(view, rolling, out);
  return checked;
}

// The counters are written in the same batches as the entries they count,
// so no cut can make them disagree. Judged on what was persisted, before
// the store's open recounts pending_count and pending_bytes.
uint64_t SoakModel::CheckStoredCounters(const DiskState& disk,
                                        std::vector<Violation>* out) {
  const storage::QueueState& q = disk.queue;
  uint64_t bytes = 0;
  for (const DiskState::Pending& p : disk.pending) {
    bytes += p.bytes;
    if (p.seq < q.head_seq() || p.seq >= q.next_seq()) {
      out->push_back({ViolationKind::kStoredCountersWrong,
                      absl::StrCat("pending seq ", p.seq, " (event ", p.id,
                                   ") lies outside the persisted [head ",
                                   q.head_seq(), ", next ", q.next_seq(),
                                   "): no reader of the store sees it")});
    }
  }
  if (q.pending_count() != disk.pending.size() || q.pending_bytes() != bytes ||
      q.dead_count() != disk.dead.size()) {
    out->push_back(
        {ViolationKind::kStoredCountersWrong,
         absl::StrCat("persisted queue state says ", q.pending_count(),
                      " pending (", q.pending_bytes(), " bytes) and ",
                      q.dead_count(), " dead; the store holds ",
                      disk.pending.size(), " (", bytes, " bytes) and ",
                      disk.dead.size())});
  }
  return disk.pending.size() + 1;
}

SoakModel::Presence SoakModel::Look(const StoreView& view, const ModelTxn& txn,
                                    std::vector<Violation>* out) {
  Presence p;
  for (const std::string& key : txn.record_keys) {
    absl::StatusOr<std::string> value = view.store->Get(kSoakTable, key);
    if (value.ok()) {
      ++p.records;
      if (*value != txn.record_value) {
        out->push_back(
            {ViolationKind::kEventChanged,
             absl::StrCat("record ", key, " of ", Describe(txn), " holds '",
                          *value, "', not '", txn.record_value, "'")});
      }
    } else if (!absl::IsNotFound(value.status())) {
      out->push_back({ViolationKind::kUnexpectedError,
                      absl::StrCat("reading record ", key, ": ",
                                   value.status().ToString())});
    }
  }
  for (const Txn::EmittedEvent& e : txn.txn.events()) {
    const ModelEvent& event = events_[e.id];
    // A workflow event leaves as delivered once its workflow says so.
    const bool delivered =
        event.workflow ? workflows_.LeftAsDelivered(e.id) : event.acked;
    if (view.Holds(e.id)) {
      ++p.in_store;
      ++p.accounted;
    } else if (delivered || event.purge_allowed) {
      ++p.accounted;
    }
  }
  return p;
}

void SoakModel::ResolveInDoubt(const StoreView& view,
                               std::vector<Violation>* out) {
  for (size_t index : in_doubt_) {
    ModelTxn& t = txns_[index];
    if (t.state != ModelTxn::State::kInDoubt) continue;
    const Presence p = Look(view, t, out);
    if (p.records == 0 && p.in_store == 0) {
      t.state = ModelTxn::State::kAbsent;
      resolved_absent_.push_back(index);
      settled_.push_back(index);  // must stay absent unless committed again
      continue;
    }
    // Present: then all of it, with every event still pending (nothing can
    // have sent an event whose commit failed before the cut).
    if (p.records != t.record_keys.size() ||
        p.in_store != t.txn.events().size()) {
      out->push_back(
          {p.records > 0 && p.in_store < t.txn.events().size()
               ? ViolationKind::kRecordWithoutEvent
               : ViolationKind::kEventWithoutRecord,
           absl::StrCat("failed commit of ", Describe(t), " left ", p.records,
                        " of ", t.record_keys.size(), " records and ",
                        p.in_store, " of ", t.txn.events().size(), " events")});
      t.state = ModelTxn::State::kCommitted;  // reported; not judged again
      continue;
    }
    t.state = ModelTxn::State::kCommitted;
    open_.push_back(index);
    if (!t.txn.idempotency_key().empty()) {
      MakeOwner(index, out);
      resolved_committed_.push_back(index);
    }
    OnCommitted(index);
  }
  in_doubt_.clear();
}

void SoakModel::CheckSent(const ReceivedRequest& r, const ModelTxn& t,
                          std::vector<Violation>* out) const {
  if (t.state == ModelTxn::State::kDuplicate) {
    out->push_back({ViolationKind::kIdempotencyBroken,
                    absl::StrCat("receiver got request ", r.webhook_id,
                                 " of the duplicate ", Describe(t))});
  } else if (t.state != ModelTxn::State::kCommitted) {
    out->push_back({ViolationKind::kUncommittedEventSent,
                    absl::StrCat("receiver got request ", r.webhook_id, " of ",
                                 Describe(t))});
  }
}

// A step's request is the event's payload; a revert's is built from it.
void SoakModel::CheckWorkflowReceipt(const ReceivedRequest& r,
                                     const WorkflowModel::Request& request,
                                     std::vector<Violation>* out) {
  const ModelEvent& event = events_[request.event_id];
  const ModelTxn& t = txns_[event.txn];
  CheckSent(r, t, out);
  if (!request.revert && r.body != t.txn.events()[event.index].event.payload) {
    out->push_back(
        {ViolationKind::kEventChanged,
         absl::StrCat("step ", kSoakWorkflow[request.step].name,
                      " of workflow event ", request.event_id, " arrived (",
                      r.arrival, ") with another body")});
  }
  workflows_.OnReceipt(r, request, acks_, out);
}

uint64_t SoakModel::CheckReceipts(const std::vector<ReceivedRequest>& log,
                                  std::vector<Violation>* out) {
  uint64_t checked = 0;
  for (; log_seen_ < log.size(); ++log_seen_, ++checked) {
    const ReceivedRequest& r = log[log_seen_];
    if (const WorkflowModel::Request* request =
            workflows_.FindRequest(r.webhook_id)) {
      CheckWorkflowReceipt(r, *request, out);
      continue;
    }
    auto it = events_.find(r.webhook_id);
    if (it == events_.end()) {
      out->push_back(
          {ViolationKind::kUncommittedEventSent,
           absl::StrCat("receiver got unknown event id '", r.webhook_id,
                        "' (arrival ", r.arrival, ")")});
      continue;
    }
    ModelEvent& event = it->second;
    const ModelTxn& t = txns_[event.txn];
    CheckSent(r, t, out);
    const Event& sent = t.txn.events()[event.index].event;
    if (r.body != sent.payload) {
      out->push_back({ViolationKind::kEventChanged,
                      absl::StrCat("event ", r.webhook_id, " arrived (",
                                   r.arrival, ") with another body")});
    }
    if (r.answer == Answer::kOk) event.acked = true;
    if (event.first_received) continue;
    event.first_received = true;
    if (sent.ordering_key.empty()) continue;
    const std::pair<uint64_t, size_t> position(t.commit_order, event.index);
    auto [last, inserted] =
        last_first_receipt_.emplace(sent.ordering_key, position);
    if (inserted) continue;
    if (last->second >= position) {
      out->push_back(
          {ViolationKind::kOrderBroken,
           absl::StrCat("event ", r.webhook_id, " (commit #", position.first,
                        ") first arrived after an event of ordering key ",
                        sent.ordering_key, " committed later (commit #",
                        last->second.first, ")")});
    } else {
      last->second = position;
    }
  }
  return checked;
}

uint64_t SoakModel::CheckStoredEvents(const StoreView& view,
                                      std::vector<Violation>* out) {
  uint64_t checked = 0;
  auto check = [&](const std::string& id, const std::string& payload,
                   const std::string& ordering_key, const char* where) {
    ++checked;
    auto it = events_.find(id);
    if (it == events_.end()) {
      out->push_back(
          {ViolationKind::kResurrected,
           absl::StrCat(where, " event ", id, " was never emitted")});
      return;
    }
    ModelEvent& event = it->second;
    event.purge_allowed = false;  // the purge is over and it is still there
    const ModelTxn& t = txns_[event.txn];
    if (t.state == ModelTxn::State::kDuplicate) {
      out->push_back({ViolationKind::kIdempotencyBroken,
                      absl::StrCat(where, " event ", id, " belongs to the ",
                                   Describe(t))});
    } else if (t.state != ModelTxn::State::kCommitted) {
      out->push_back({ViolationKind::kResurrected,
                      absl::StrCat(where, " event ", id, " of ", Describe(t))});
    } else if (t.settled) {
      out->push_back({ViolationKind::kResurrected,
                      absl::StrCat(where, " event ", id, " of ", Describe(t),
                                   " is back after it was delivered")});
    }
    const Event& emitted = t.txn.events()[event.index].event;
    if (payload != emitted.payload || ordering_key != emitted.ordering_key) {
      out->push_back({ViolationKind::kEventChanged,
                      absl::StrCat(where, " event ", id, " of ", Describe(t),
                                   " differs from what was committed")});
    }
    // Both or neither, from the store's own contents: the records the
    // payload names are there and name this event.
    for (const std::string& key : RecordKeysOfPayload(payload)) {
      absl::StatusOr<std::string> value = view.store->Get(kSoakTable, key);
      const std::vector<std::string> ids =
          value.ok() ? EventIdsOfRecord(*value) : std::vector<std::string>();
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
        out->push_back(
            {ViolationKind::kEventWithoutRecord,
             absl::StrCat(where, " event ", id, " of ", Describe(t),
                          ": its record ", key, " is ",
                          value.ok() ? "someone else's" : "missing")});
      }
    }
  };
  for (const auto& [id, e] : view.pending) {
    check(id, e->payload, e->ordering_key, "pending");
  }
  for (const auto& [id, d] : view.dead) {
    check(id, d->event.payload, d->event.ordering_key, "dead");
    // A workflow's dead letter follows its workflow (CheckStored).
    if (!workflows_.IsWorkflowEvent(id)) CheckGaveUp(*d, out);
  }
  return checked;
}

// The agent gives up on an event only as its retry policy says: after
// max_attempts attempts, or once the receiver rejected it for good (an
// answer that retrying cannot change). In the soak the retry age never
// decides it, whatever the wall clock did: each gap between attempts counts
// at most the longest wait the policy schedules (NextRetryAge), one second.
void SoakModel::CheckGaveUp(const DeadLetter& dead,
                            std::vector<Violation>* out) const {
  const PendingEvent& e = dead.event;
  if (static_cast<int>(e.attempts) >= max_attempts_ ||
      Classify(e.last_http_status) == DeliveryOutcome::kDeadLetter) {
    return;
  }
  out->push_back({ViolationKind::kGaveUpEarly,
                  absl::StrCat("event ", e.id, " was dead-lettered after ",
                               e.attempts, " attempt(s) of the ", max_attempts_,
                               " its policy allows, last HTTP status ",
                               e.last_http_status, ": ", dead.reason)});
}

uint64_t SoakModel::CheckOpenTxns(const StoreView& view,
                                  std::vector<Violation>* out) {
  uint64_t checked = 0;
  std::vector<size_t> still_open;
  for (size_t index : open_) {
    ModelTxn& t = txns_[index];
    checked += t.txn.events().size();
    const Presence p = Look(view, t, out);
    if (t.state == ModelTxn::State::kDuplicate) {
      if (p.records > 0) {
        out->push_back(
            {ViolationKind::kIdempotencyBroken,
             absl::StrCat("the ", Describe(t), " wrote its records")});
      }
      t.settled = true;
      settled_.push_back(index);
      continue;
    }
    const size_t records = t.record_keys.size();
    const size_t events = t.txn.events().size();
    if (p.records == records && p.accounted == events) {
      if (p.in_store == 0) {
        t.settled = true;
        settled_.push_back(index);
      } else {
        still_open.push_back(index);
      }
      continue;
    }
    ViolationKind kind;
    if (p.records == 0 && p.in_store == 0) {
      kind = ViolationKind::kLostCommit;
    } else if (p.records == records) {
      kind = ViolationKind::kRecordWithoutEvent;
    } else if (p.accounted == events || p.in_store > 0) {
      kind = ViolationKind::kEventWithoutRecord;
    } else {
      kind = ViolationKind::kRecordWithoutEvent;
    }
    out->push_back(
        {kind,
         absl::StrCat(Describe(t), t.acknowledged ? ", acknowledged," : "",
                      " has ", p.records, " of ", records, " records; of its ",
                      events, " events ", p.in_store, " are in the store and ",
                      p.accounted - p.in_store, " were delivered or purged")});
    still_open.push_back(index);
  }
  open_ = std::move(still_open);
  return checked;
}

uint64_t SoakModel::CheckSettledTxns(const StoreView& view, size_t rolling,
                                     std::vector<Violation>* out) {
  uint64_t checked = 0;
  const size_t n = std::min(rolling, settled_.size());
  for (size_t i = 0; i < n; ++i) {
    const ModelTxn& t = txns_[settled_[rolling_next_++ % settled_.size()]];
    // A retried absent transaction may be in doubt or open again: those
    // checks cover it.
    const bool committed = t.state == ModelTxn::State::kCommitted;
    if ((committed && !t.settled) || t.state == ModelTxn::State::kInDoubt) {
      continue;
    }
    checked += t.txn.events().size();
    const Presence p = Look(view, t, out);
    if (!committed) {
      if (p.records > 0) {
        out->push_back(
            {t.state == ModelTxn::State::kDuplicate
                 ? ViolationKind::kIdempotencyBroken
                 : ViolationKind::kResurrected,
             absl::StrCat("the ", Describe(t), " has records in the store")});
      }
    } else if (p.records != t.record_keys.size()) {
      out->push_back(
          {ViolationKind::kLostCommit,
           absl::StrCat("delivered ", Describe(t), " lost ",
                        t.record_keys.size() - p.records, " record(s)")});
    }
  }
  return checked;
}

}  // namespace outbox::testing
