// Copyright (c) edge-outbox authors.
//
// The workflow writes of StoreImpl: the state and result rows the agent's
// workflow engine settles with an event, Txn::Cancel's records, resuming a
// dead-lettered workflow, and the retention of finished ones. The store
// knows a workflow's phase only where the queue depends on it: a completed
// workflow that is cancelled must be queued again, and a replay must not
// run a compensated workflow's steps a second time.

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/bounded_iterator.h"
#include "lib/codec.h"
#include "lib/keys.h"
#include "lib/proto_peek.h"
#include "lib/queue_state.h"
#include "lib/rocks_status.h"
#include "lib/slices.h"
#include "lib/store_impl.h"
#include "lib/workflow_rows.h"

namespace outbox {
namespace {

bool IsFinished(storage::WorkflowPhase phase) {
  return phase == storage::WORKFLOW_PHASE_COMPLETED ||
         phase == storage::WORKFLOW_PHASE_COMPENSATED ||
         phase == storage::WORKFLOW_PHASE_NEEDS_ATTENTION;
}

absl::Status NoWorkflowFamily() {
  return absl::FailedPreconditionError(
      "this store predates workflows and is open read-only: open it for "
      "writing once (e.g. run the agent) to add the workflow table");
}

// The keys of the workflow table that start with the one-character
// `prefix` ("d", "s"): [prefix, the next character).
BoundedIterator KeysStartingWith(rocksdb::DB* db,
                                 rocksdb::ColumnFamilyHandle* workflows,
                                 absl::string_view prefix) {
  return BoundedIterator(db, workflows, std::string(prefix),
                         std::string(1, static_cast<char>(prefix[0] + 1)));
}

// `old`, a stored state being replaced or deleted, no longer counts among
// the workflows needing attention.
void Uncount(const storage::WorkflowState& old, storage::QueueState* next) {
  if (old.phase() == storage::WORKFLOW_PHASE_NEEDS_ATTENTION) {
    next->set_workflows_needing_attention(
        queue_state::SaturatingSub(next->workflows_needing_attention(), 1));
  }
}

// What AddWorkflowWritesLocked reads of a state without decoding it.
struct StatePeek {
  storage::WorkflowPhase phase = storage::WORKFLOW_PHASE_UNSPECIFIED;
  int64_t finished_unix_ms = 0;
  bool rows = false;
};

absl::StatusOr<StatePeek> PeekState(const Settlement& st) {
  using S = storage::WorkflowState;
  constexpr int kFields[] = {
      S::kPhaseFieldNumber, S::kFinishedUnixMsFieldNumber, S::kRowsFieldNumber};
  uint64_t values[] = {0, 0, 0};
  if (!PeekVarints(st.workflow_state, kFields, absl::MakeSpan(values))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "event ", st.event.id, ": the workflow state does not decode"));
  }
  StatePeek peek;
  peek.phase = static_cast<storage::WorkflowPhase>(values[0]);
  peek.finished_unix_ms = static_cast<int64_t>(values[1]);
  peek.rows = values[2] != 0;
  return peek;
}

// A cancel was stored before the write that sets step `step`'s sent mark:
// the step will not be sent (the agent sees the cancel first), so the state
// is written without the mark, and compensation does not resend a step that
// never went out.
void DropMark(int32_t step, storage::WorkflowState* state) {
  if (step < state->steps_size()) state->mutable_steps(step)->set_sent(false);
}

}  // namespace

absl::StatusOr<std::optional<storage::WorkflowState>>
StoreImpl::ReadWorkflowStateLocked(absl::string_view event_id) {
  return ReadAnyWorkflowState(event_id);
}

absl::Status StoreImpl::AddWorkflowWritesLocked(
    const Settlement& st, const storage::OutboxEntry& stored,
    Settlement::Kind* kind, rocksdb::WriteBatch* batch,
    storage::QueueState* next) {
  if (workflows_ == nullptr) return NoWorkflowFamily();
  const std::string& id = st.event.id;
  for (size_t i = 0; i < st.workflow_results.size(); ++i) {
    const uint32_t n = st.first_result + static_cast<uint32_t>(i);
    OUTBOX_RETURN_IF_ERROR(
        FromRocks(batch->Put(workflows_, keys::WorkflowResultKey(id, n),
                             st.workflow_results[i]),
                  "recording a workflow step's result"));
  }
  if (!st.workflow_definition.empty()) {
    OUTBOX_RETURN_IF_ERROR(FromRocks(
        batch->Put(workflows_,
                   keys::WorkflowDefinitionKey(st.workflow_definition_id),
                   st.workflow_definition),
        "keeping a workflow definition"));
  }
  if (st.workflow_state.empty()) return absl::OkStatus();
  // Most steps write the state exactly as the agent encoded it: only its
  // phase, finish time and format are read (peeked), and it is decoded only
  // where the store changes it (a cancel under a sent mark, a completion)
  // or writes it as rows.
  OUTBOX_ASSIGN_OR_RETURN(const StatePeek peek, PeekState(st));
  std::optional<storage::WorkflowState> state;
  auto decoded = [&]() -> absl::StatusOr<storage::WorkflowState*> {
    if (!state.has_value() &&
        !state.emplace().ParseFromString(st.workflow_state)) {
      return absl::InvalidArgumentError(
          absl::StrCat("event ", id, ": the workflow state does not decode"));
    }
    return &*state;
  };
  if (st.workflow_marked_step >= 0 &&
      peek.phase == storage::WORKFLOW_PHASE_FORWARD) {
    // Under mu_, ordered with Txn::Cancel's write: a cancel stored now is
    // seen by the agent's next read, before it would send the step.
    OUTBOX_ASSIGN_OR_RETURN(const bool cancelled, CancelStoredLocked(id));
    if (cancelled) {
      OUTBOX_ASSIGN_OR_RETURN(storage::WorkflowState * s, decoded());
      DropMark(st.workflow_marked_step, s);
    }
  }
  int64_t finished_unix_ms = peek.finished_unix_ms;
  if (peek.phase == storage::WORKFLOW_PHASE_COMPLETED &&
      *kind == Settlement::Kind::kDelivered) {
    OUTBOX_ASSIGN_OR_RETURN(const bool cancelled, CancelStoredLocked(id));
    OUTBOX_ASSIGN_OR_RETURN(storage::WorkflowState * s, decoded());
    if (cancelled) {
      // A cancel committed while the last step was in flight: keep the
      // event so that the agent compensates it (a cancel committed after
      // this write finds COMPLETED and queues it again instead).
      *kind = Settlement::Kind::kStepDone;
      s->set_finished_unix_ms(0);
      finished_unix_ms = 0;
    } else {
      *s->mutable_entry() = stored;
    }
  }
  const bool leaves = *kind != Settlement::Kind::kStepDone &&
                      *kind != Settlement::Kind::kAttempt;
  if (leaves && peek.phase == storage::WORKFLOW_PHASE_NEEDS_ATTENTION) {
    next->set_workflows_needing_attention(next->workflows_needing_attention() +
                                          1);
  }
  const bool finishing =
      leaves && IsFinished(peek.phase) && finished_unix_ms != 0;
  if (finishing) {
    // Indexed for retention by its wall-clock finish time, as builds
    // before the store clock read it.
    OUTBOX_RETURN_IF_ERROR(FromRocks(
        batch->Put(workflows_, keys::WorkflowFinishedKey(finished_unix_ms, id),
                   ""),
        "recording a finished workflow"));
  }
  if (peek.rows || state.has_value()) {
    OUTBOX_ASSIGN_OR_RETURN(storage::WorkflowState * s, decoded());
    return PutDecodedStateLocked(id, finishing, s, batch);
  }
  std::string value = st.workflow_state;  // as the agent encoded it
  if (finishing) {
    // Stamped with the store clock's time, which retention measures its
    // age by, without decoding the state.
    AppendVarintField(storage::WorkflowState::kFinishedStoreClockMsFieldNumber,
                      static_cast<uint64_t>(store_clock_.NowMs()), &value);
  }
  return FromRocks(batch->Put(workflows_, keys::WorkflowStateKey(id), value),
                   "recording a workflow's state");
}

absl::Status StoreImpl::PutDecodedStateLocked(const std::string& id,
                                              bool finishing,
                                              storage::WorkflowState* state,
                                              rocksdb::WriteBatch* batch) {
  if (finishing) state->set_finished_store_clock_ms(store_clock_.NowMs());
  if (state->rows()) return AddWorkflowRowsLocked(id, *state, batch);
  return FromRocks(
      batch->Put(workflows_, keys::WorkflowStateKey(id), Encode(*state)),
      "recording a workflow's state");
}

absl::StatusOr<bool> StoreImpl::CancelStoredLocked(absl::string_view event_id) {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), workflows_,
                               keys::WorkflowCancelKey(event_id), &value);
  if (s.IsNotFound()) return false;
  if (!s.ok()) return FromRocks(s, "reading a workflow's cancel");
  return true;
}

absl::StatusOr<std::vector<Txn::CancelOp>> StoreImpl::CancelsByIdLocked(
    const Txn& txn) {
  std::vector<Txn::CancelOp> out;
  for (const Txn::CancelOp& c : txn.cancels()) {
    if (!c.by_key) {
      out.push_back(c);
      continue;
    }
    std::string value;
    rocksdb::Status s =
        db_->Get(rocksdb::ReadOptions(), idem_,
                 keys::IdempotencyRecordKey(c.idempotency_key), &value);
    if (s.IsNotFound()) {
      return absl::NotFoundError(absl::StrCat(
          "Txn::CancelByIdempotencyKey: no commit with the idempotency key \"",
          absl::CEscape(c.idempotency_key),
          "\" is remembered (keys are kept for Options::idempotency_window, "
          "then purged); nothing was committed: cancel by the event id "
          "(Txn::Cancel, outboxctl cancel)"));
    }
    if (!s.ok()) return FromRocks(s, "reading the idempotency key to cancel");
    storage::IdempotencyRecord record;
    OUTBOX_RETURN_IF_ERROR(DecodeStored(keys::kIdempotencyFamily,
                                        "an idempotency key", value, &record));
    if (record.event_ids().empty()) {
      return absl::NotFoundError(absl::StrCat(
          "Txn::CancelByIdempotencyKey: the commit with the idempotency key "
          "\"",
          absl::CEscape(c.idempotency_key),
          "\" emitted no event, so there is no workflow to cancel; nothing "
          "was committed"));
    }
    for (const std::string& id : record.event_ids()) {
      Txn::CancelOp& op = out.emplace_back(c);
      op.event_id = id;
    }
  }
  return out;
}

absl::Status StoreImpl::AddCancelsLocked(const Txn& txn, absl::Time now,
                                         CommitBatch* commit) {
  if (workflows_ == nullptr) return NoWorkflowFamily();
  OUTBOX_ASSIGN_OR_RETURN(const std::vector<Txn::CancelOp> cancels,
                          CancelsByIdLocked(txn));
  absl::flat_hash_set<std::string> seen;
  for (const Txn::CancelOp& c : cancels) {
    if (!seen.insert(c.event_id).second) continue;  // twice in one Txn
    OUTBOX_ASSIGN_OR_RETURN(const bool cancelled,
                            CancelStoredLocked(c.event_id));
    if (cancelled) continue;  // the first cancel wins
    storage::WorkflowCancel record;
    record.set_reason(c.reason);
    record.set_unix_ms(ToStoredMillis(now));
    OUTBOX_RETURN_IF_ERROR(FromRocks(
        commit->batch.Put(workflows_, keys::WorkflowCancelKey(c.event_id),
                          Encode(record)),
        "recording a cancel"));
    commit->cancelled.push_back(c.event_id);
    OUTBOX_ASSIGN_OR_RETURN(const std::optional<storage::WorkflowState> state,
                            ReadWorkflowStateLocked(c.event_id));
    // None: pending and not started, or unknown.
    if (!state.has_value() ||
        state->phase() != storage::WORKFLOW_PHASE_COMPLETED ||
        !state->has_entry()) {
      continue;  // still pending (the agent sees the cancel), or compensated
    }
    // Completed and gone from the queue: queue it again so that the agent
    // reverts its steps. It is no longer finished, so retention keeps it.
    storage::OutboxEntry& entry = commit->requeued.emplace_back(state->entry());
    queue_state::ResetForQueue(commit->after.next_seq(), ToStoredMillis(now),
                               &entry);
    const std::string pending = Encode(entry);
    queue_state::Append(pending.size(), &commit->after);
    OUTBOX_RETURN_IF_ERROR(queue_state::CheckCapacity(
        commit->after, options_,
        absl::StrCat("queueing cancelled workflow ", c.event_id)));
    rocksdb::Status put =
        commit->batch.Put(pending_, keys::Seq(entry.seq()), pending);
    if (put.ok()) {
      put = commit->batch.Delete(
          workflows_,
          keys::WorkflowFinishedKey(state->finished_unix_ms(), c.event_id));
    }
    OUTBOX_RETURN_IF_ERROR(FromRocks(put, "queueing a cancelled workflow"));
    commit->events.push_back({entry.seq(), entry.ordering_key(), entry.type(),
                              entry.destination(), entry.next_attempt_unix_ms(),
                              static_cast<uint32_t>(pending.size())});
  }
  return absl::OkStatus();
}

absl::StatusOr<WorkflowRecord> StoreImpl::GetWorkflow(
    absl::string_view event_id) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::ReaderMutexLock r(&db_mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  WorkflowRecord record;
  if (workflows_ == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no workflow stored for event ", event_id));
  }
  OUTBOX_ASSIGN_OR_RETURN(std::optional<StoredRows> rows,
                          ReadWorkflowRows(event_id, /*answers=*/true));
  rocksdb::Status s;
  if (rows.has_value()) {
    record.state =
        Encode(workflow_rows::Assemble(rows->head, rows->steps, rows->answers));
  } else {
    s = db_->Get(rocksdb::ReadOptions(), workflows_,
                 keys::WorkflowStateKey(event_id), &record.state);
    if (!s.ok() && !s.IsNotFound()) {
      return FromRocks(s, "reading a workflow's state");
    }
  }
  std::string value;
  s = db_->Get(rocksdb::ReadOptions(), workflows_,
               keys::WorkflowCancelKey(event_id), &value);
  if (s.ok()) {
    storage::WorkflowCancel cancel;
    OUTBOX_RETURN_IF_ERROR(
        DecodeStored(keys::kWorkflowFamily, "a cancel", value, &cancel));
    record.cancelled = true;
    record.cancel_reason = cancel.reason();
    record.cancelled_at = FromStoredMillis(cancel.unix_ms());
  } else if (!s.IsNotFound()) {
    return FromRocks(s, "reading a workflow's cancel");
  }
  if (record.state.empty() && !record.cancelled) {
    return absl::NotFoundError(
        absl::StrCat("no workflow stored for event ", event_id));
  }
  return record;
}

absl::StatusOr<std::vector<std::string>> StoreImpl::ListWorkflowResults(
    absl::string_view event_id, size_t limit) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::ReaderMutexLock r(&db_mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  std::vector<std::string> rows;
  if (workflows_ == nullptr) return rows;
  const std::string prefix = keys::WorkflowResultPrefix(event_id);
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions(), workflows_));
  for (it->Seek(prefix); it->Valid() && rows.size() < limit; it->Next()) {
    if (!it->key().starts_with(prefix)) break;
    rows.push_back(it->value().ToString());
  }
  OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "listing workflow results"));
  return rows;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
StoreImpl::ListWorkflowDefinitions() {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::ReaderMutexLock r(&db_mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  std::vector<std::pair<std::string, std::string>> definitions;
  if (workflows_ == nullptr) return definitions;
  BoundedIterator it =
      KeysStartingWith(db_.get(), workflows_, keys::kWorkflowDefinitionPrefix);
  for (; it->Valid(); it->Next()) {
    definitions.emplace_back(std::string(View(it->key()).substr(1)),
                             it->value().ToString());
  }
  OUTBOX_RETURN_IF_ERROR(
      FromRocks(it->status(), "listing workflow definitions"));
  return definitions;
}

absl::StatusOr<std::vector<std::string>> StoreImpl::PurgeWorkflowDefinitions(
    const std::vector<std::string>& keep) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  OUTBOX_ASSIGN_OR_RETURN(std::vector<std::string> unused,
                          UnnamedDefinitions(keep));
  if (unused.empty()) return unused;
  // Found without mu_, so commits went on meanwhile. No write can have come
  // to name one since: a state names its own definition (already named) or
  // the configuration's (kept), and retry-step a dead letter's own.
  absl::MutexLock l(&mu_);
  SerialWrite serial(this);
  OUTBOX_RETURN_IF_ERROR(WritableLocked());
  rocksdb::WriteBatch batch;
  for (const std::string& id : unused) {
    OUTBOX_RETURN_IF_ERROR(
        FromRocks(batch.Delete(workflows_, keys::WorkflowDefinitionKey(id)),
                  "purging workflow definitions"));
  }
  OUTBOX_RETURN_IF_ERROR(
      WriteLocked(batch, tail_, "purging workflow definitions", options_.sync));
  return unused;
}

absl::StatusOr<std::vector<std::string>> StoreImpl::UnnamedDefinitions(
    const std::vector<std::string>& keep) {
  absl::ReaderMutexLock r(&db_mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  std::vector<std::string> unused;
  if (workflows_ == nullptr) return unused;
  const absl::flat_hash_set<std::string> kept(keep.begin(), keep.end());
  absl::flat_hash_set<std::string> candidates;
  {
    BoundedIterator it = KeysStartingWith(db_.get(), workflows_,
                                          keys::kWorkflowDefinitionPrefix);
    for (; it->Valid(); it->Next()) {
      std::string id(View(it->key()).substr(1));
      if (!kept.contains(id)) candidates.insert(std::move(id));
    }
    OUTBOX_RETURN_IF_ERROR(
        FromRocks(it->status(), "listing workflow definitions"));
  }
  // Every stored workflow, whole ("s") or as rows (its head, "w"), names
  // the definition it runs under: read until each candidate is named. The
  // oldest workflows come first (event ids are time-ordered), and they are
  // the ones an old definition has, so this usually stops at once.
  const std::pair<absl::string_view, int> named_by[] = {
      {"s", storage::WorkflowState::kDefinitionFieldNumber},
      {keys::kWorkflowHeadPrefix,
       storage::WorkflowHead::kDefinitionFieldNumber}};
  for (const auto& [prefix, field] : named_by) {
    BoundedIterator it = KeysStartingWith(db_.get(), workflows_, prefix);
    for (; it->Valid() && !candidates.empty(); it->Next()) {
      candidates.erase(PeekBytes(View(it->value()), field));
    }
    OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "reading workflows"));
  }
  unused.assign(candidates.begin(), candidates.end());
  std::sort(unused.begin(), unused.end());
  return unused;
}

absl::StatusOr<bool> StoreImpl::HasWorkflowStates() {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::ReaderMutexLock r(&db_mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  if (workflows_ == nullptr) return false;
  // Heads of workflows written as rows; states stored whole ("s").
  for (absl::string_view prefix : {keys::kWorkflowHeadPrefix, "s"}) {
    BoundedIterator it = KeysStartingWith(db_.get(), workflows_, prefix);
    const bool found = it->Valid();
    OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "looking for workflows"));
    if (found) return true;
  }
  return false;
}

absl::Status StoreImpl::RetryWorkflow(absl::string_view event_id,
                                      absl::string_view state) {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  storage::WorkflowState decoded;
  if (!decoded.ParseFromString(std::string(state))) {
    return absl::InvalidArgumentError(
        "RetryWorkflow: the workflow state does not decode");
  }
  {
    absl::MutexLock l(&mu_);
    OUTBOX_RETURN_IF_ERROR(ReplayLocked(event_id, &decoded));
  }
  Wake();
  return absl::OkStatus();
}

absl::Status StoreImpl::AddRetriedStateLocked(
    const std::string& event_id,
    const std::optional<storage::WorkflowState>& old,
    const storage::WorkflowState& state, rocksdb::WriteBatch* batch,
    storage::QueueState* next) {
  if (workflows_ == nullptr) return NoWorkflowFamily();
  if (old.has_value()) {
    Uncount(*old, next);
    if (old->finished_unix_ms() != 0) {
      OUTBOX_RETURN_IF_ERROR(FromRocks(
          batch->Delete(workflows_, keys::WorkflowFinishedKey(
                                        old->finished_unix_ms(), event_id)),
          "resuming a workflow"));
    }
  }
  if (state.rows()) return AddWorkflowRowsLocked(event_id, state, batch);
  return FromRocks(
      batch->Put(workflows_, keys::WorkflowStateKey(event_id), Encode(state)),
      "resuming a workflow");
}

absl::StatusOr<size_t> StoreImpl::AddFinishedPurgeLocked(
    const FinishedCutoff& cutoff, size_t max, std::string* from,
    rocksdb::WriteBatch* batch, storage::QueueState* next) {
  const std::string end = keys::WorkflowFinishedKey(cutoff.wall_ms, "");
  rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, workflows_));
  size_t purged = 0;
  for (it->Seek(from->empty() ? keys::kWorkflowFinishedPrefix : *from);
       it->Valid() && purged < max; it->Next()) {
    const std::optional<keys::FinishedKey> key = keys::ParseWorkflowFinishedKey(
        absl::string_view(it->key().data(), it->key().size()));
    if (!key.has_value()) continue;
    OUTBOX_ASSIGN_OR_RETURN(const std::optional<storage::WorkflowState> old,
                            ReadWorkflowStateLocked(key->event_id));
    if (old.has_value() && !cutoff.Passed(*old)) continue;  // kept: young
    if (old.has_value()) Uncount(*old, next);
    rocksdb::Status s = batch->Delete(workflows_, it->key());
    OUTBOX_RETURN_IF_ERROR(FromRocks(s, "purging finished workflows"));
    OUTBOX_RETURN_IF_ERROR(AddWorkflowDeletesLocked(key->event_id, batch));
    ++purged;
  }
  OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "listing finished workflows"));
  *from = it->Valid() ? it->key().ToString() : "";
  return purged;
}

bool StoreImpl::FinishedCutoff::Passed(
    const storage::WorkflowState& state) const {
  // States finished before the store clock existed have only the agent's
  // wall-clock time: compared with the earlier of the two clocks.
  return state.finished_store_clock_ms() > 0
             ? state.finished_store_clock_ms() < store_ms
             : state.finished_unix_ms() < earlier_ms;
}

absl::StatusOr<size_t> StoreImpl::PurgeFinishedWorkflows(
    absl::Duration older_than) {
  if (older_than < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a finished-workflow purge needs an age >= 0, not ",
                     absl::FormatDuration(older_than)));
  }
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  // The retention index is keyed by the agent's wall-clock finish times (as
  // builds before the store clock read it): read only its part old by the
  // wall clock, and of that delete only what is old by the store clock too.
  // A wall clock set ahead reaches everything and deletes nothing early.
  const int64_t age_ms = absl::ToInt64Milliseconds(older_than);
  const int64_t wall_ms = ToStoredMillis(Now());
  const int64_t store_ms = store_clock_.NowMs();
  const FinishedCutoff cutoff{wall_ms - age_ms, store_ms - age_ms,
                              std::min(wall_ms, store_ms) - age_ms};
  // Bounded batches, so a purge after a long time never builds one huge
  // write; each is applied before the next is read, from where it stopped.
  constexpr size_t kPerBatch = 512;
  size_t total = 0;
  std::string from;
  while (true) {
    absl::MutexLock l(&mu_);
    SerialWrite serial(this);
    OUTBOX_RETURN_IF_ERROR(WritableLocked());
    if (workflows_ == nullptr) return NoWorkflowFamily();
    rocksdb::WriteBatch batch;
    storage::QueueState next = tail_;
    OUTBOX_ASSIGN_OR_RETURN(
        const size_t n,
        AddFinishedPurgeLocked(cutoff, kPerBatch, &from, &batch, &next));
    if (n > 0) {
      OUTBOX_RETURN_IF_ERROR(WriteLocked(
          batch, next, "purging finished workflows", options_.sync));
    }
    total += n;
    if (from.empty()) return total;
  }
}

}  // namespace outbox
