// Copyright (c) edge-outbox authors.
//
// The workflow rows of StoreImpl (feature workflow_rows, keys.h): a state
// the agent settles is written as the rows that changed since the stored
// ones (a head, one row per step, an answer row per kept answer), and the
// rows are assembled into one WorkflowState for every reader. A state still
// stored whole under "s" (by an older build, or by this one while it writes
// states) is read as it is, and replaced by rows in the batch that first
// writes rows for it.

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/codec.h"
#include "lib/keys.h"
#include "lib/rocks_status.h"
#include "lib/slices.h"
#include "lib/store_impl.h"
#include "lib/workflow_rows.h"

namespace outbox {
namespace {

// The keys starting with `prefix` ("t" + id + "/"), with `visit(index,
// value)` for each.
template <typename Visit>
absl::Status ScanIndexed(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family,
                         rocksdb::ReadOptions ro, const std::string& prefix,
                         Visit visit) {
  std::string end = prefix;
  end.back() = static_cast<char>(end.back() + 1);  // '/' + 1
  const rocksdb::Slice upper(end);
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro, family));
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    const std::optional<keys::RowKey> key =
        keys::ParseWorkflowRowKey(View(it->key()));
    if (!key.has_value()) {
      return absl::DataLossError(absl::StrCat("malformed workflow row key in ",
                                              keys::kWorkflowFamily,
                                              " (outboxctl verify)"));
    }
    OUTBOX_RETURN_IF_ERROR(visit(key->step, View(it->value())));
  }
  return FromRocks(it->status(), "reading a workflow's rows");
}

}  // namespace

absl::StatusOr<std::optional<StoreImpl::StoredRows>>
StoreImpl::ReadWorkflowRows(absl::string_view event_id, bool answers) {
  // No snapshot (an outboxctl secondary instance has none): the writers of
  // these rows hold mu_, and the agent reads them between its own writes;
  // only an outboxctl read racing the agent may see a newer head than step.
  const rocksdb::ReadOptions ro;
  std::string value;
  rocksdb::Status s =
      db_->Get(ro, workflows_, keys::WorkflowHeadKey(event_id), &value);
  if (s.IsNotFound()) return std::nullopt;
  if (!s.ok()) return FromRocks(s, "reading a workflow's head");
  StoredRows rows;
  OUTBOX_RETURN_IF_ERROR(DecodeStored(
      keys::kWorkflowFamily, absl::StrCat("the head row of ", event_id), value,
      &rows.head));
  rows.steps.resize(rows.head.steps());
  OUTBOX_RETURN_IF_ERROR(ScanIndexed(
      db_.get(), workflows_, ro, keys::WorkflowStepPrefix(event_id),
      [&](uint32_t i, absl::string_view v) -> absl::Status {
        if (i >= rows.steps.size()) rows.steps.resize(i + 1);
        return DecodeStored(keys::kWorkflowFamily,
                            absl::StrCat("step row ", i, " of ", event_id), v,
                            &rows.steps[i]);
      }));
  // Most steps keep no answer (none a reference reads): no scan for them.
  const bool any_kept = std::any_of(
      rows.steps.begin(), rows.steps.end(),
      [](const storage::WorkflowStep& s) { return s.answer_kept(); });
  if (!answers || !any_kept) return rows;
  OUTBOX_RETURN_IF_ERROR(ScanIndexed(
      db_.get(), workflows_, ro, keys::WorkflowAnswerPrefix(event_id),
      [&](uint32_t i, absl::string_view v) -> absl::Status {
        return DecodeStored(keys::kWorkflowFamily,
                            absl::StrCat("answer row ", i, " of ", event_id), v,
                            &rows.answers[i]);
      }));
  return rows;
}

absl::StatusOr<std::optional<storage::WorkflowState>>
StoreImpl::ReadAnyWorkflowState(absl::string_view event_id) {
  if (workflows_ == nullptr) return std::nullopt;
  OUTBOX_ASSIGN_OR_RETURN(std::optional<StoredRows> rows,
                          ReadWorkflowRows(event_id, /*answers=*/true));
  if (rows.has_value()) {
    return workflow_rows::Assemble(rows->head, rows->steps, rows->answers);
  }
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), workflows_,
                               keys::WorkflowStateKey(event_id), &value);
  if (s.IsNotFound()) return std::nullopt;
  if (!s.ok()) return FromRocks(s, "reading a workflow's state");
  storage::WorkflowState state;
  OUTBOX_RETURN_IF_ERROR(
      DecodeStored(keys::kWorkflowFamily, "a workflow's state", value, &state));
  return state;
}

absl::Status StoreImpl::AddWorkflowRowsLocked(
    const std::string& id, const storage::WorkflowState& state,
    rocksdb::WriteBatch* batch) {
  OUTBOX_ASSIGN_OR_RETURN(const std::optional<StoredRows> stored,
                          ReadWorkflowRows(id, /*answers=*/false));
  rocksdb::Status s;
  if (!stored.has_value()) {
    // First rows of this workflow: a state stored whole goes in this batch
    // (deleting a key that is not there costs a few bytes, not a read).
    s = batch->Delete(workflows_, keys::WorkflowStateKey(id));
  }
  const std::string head = Encode(workflow_rows::HeadOf(state));
  if (s.ok() && (!stored.has_value() || head != Encode(stored->head))) {
    s = batch->Put(workflows_, keys::WorkflowHeadKey(id), head);
  }
  const size_t before = stored.has_value() ? stored->steps.size() : 0;
  for (int i = 0; s.ok() && i < state.steps_size(); ++i) {
    const storage::WorkflowStepState& step = state.steps(i);
    const uint32_t at = static_cast<uint32_t>(i);
    const storage::WorkflowStep row = workflow_rows::StepOf(step);
    const storage::WorkflowStep* old =
        at < before ? &stored->steps[at] : nullptr;
    const std::string encoded = Encode(row);
    if (old == nullptr || encoded != Encode(*old)) {
      s = batch->Put(workflows_, keys::WorkflowStepKey(id, at), encoded);
    }
    // An answer is written once: when its step becomes done with it kept
    // (or a state stored whole becomes rows), never again while it stays.
    const bool had = old != nullptr && old->answer_kept() &&
                     (old->status() == storage::STEP_STATUS_DONE ||
                      step.status() != storage::STEP_STATUS_DONE);
    if (s.ok() && row.answer_kept() && !had) {
      storage::StepAnswer answer;
      answer.set_body(step.response());
      s = batch->Put(workflows_, keys::WorkflowAnswerKey(id, at),
                     Encode(answer));
    } else if (s.ok() && !row.answer_kept() && old != nullptr &&
               old->answer_kept()) {
      s = batch->Delete(workflows_, keys::WorkflowAnswerKey(id, at));
    }
  }
  for (size_t i = state.steps_size(); s.ok() && i < before; ++i) {
    const uint32_t at = static_cast<uint32_t>(i);
    s = batch->Delete(workflows_, keys::WorkflowStepKey(id, at));
    if (s.ok()) s = batch->Delete(workflows_, keys::WorkflowAnswerKey(id, at));
  }
  return FromRocks(s, "recording a workflow's rows");
}

absl::Status StoreImpl::AddWorkflowDeletesLocked(const std::string& id,
                                                 rocksdb::WriteBatch* batch) {
  rocksdb::Status s = batch->Delete(workflows_, keys::WorkflowStateKey(id));
  if (s.ok()) s = batch->Delete(workflows_, keys::WorkflowHeadKey(id));
  if (s.ok()) s = batch->Delete(workflows_, keys::WorkflowCancelKey(id));
  for (const std::string& prefix :
       {keys::WorkflowResultPrefix(id), keys::WorkflowStepPrefix(id),
        keys::WorkflowAnswerPrefix(id)}) {
    std::unique_ptr<rocksdb::Iterator> rows(
        db_->NewIterator(rocksdb::ReadOptions(), workflows_));
    for (rows->Seek(prefix);
         s.ok() && rows->Valid() && rows->key().starts_with(prefix);
         rows->Next()) {
      s = batch->Delete(workflows_, rows->key());
    }
    if (s.ok()) s = rows->status();
  }
  return FromRocks(s, "purging finished workflows");
}

}  // namespace outbox
