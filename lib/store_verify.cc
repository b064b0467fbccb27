// Copyright (c) edge-outbox authors.
//
// Store::Verify: reads every entry, counter and index of the store and
// reports what disagrees. The invariants it checks are the ones the write
// paths keep (store_commit.cc, store_settle.cc, store_workflow.cc): counters
// travel in the batch that changes what they count, index keys are written
// and deleted with what they index.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "lib/codec.h"
#include "lib/features.h"
#include "lib/keys.h"
#include "lib/rocks_status.h"
#include "lib/slices.h"
#include "lib/store_impl.h"
#include "lib/workflow_rows.h"

namespace outbox {
namespace {

std::string Printable(absl::string_view key) {
  return absl::StrCat("\"", absl::CHexEscape(key), "\"");
}

bool Running(storage::WorkflowPhase phase) {
  return phase == storage::WORKFLOW_PHASE_FORWARD ||
         phase == storage::WORKFLOW_PHASE_COMPENSATING;
}

// A result row's key "r" + event id + "/" + 4-byte n, split.
bool ParseResultKey(absl::string_view key, std::string* id, uint32_t* n) {
  if (key.size() < 6 || key[0] != 'r' || key[key.size() - 5] != '/') {
    return false;
  }
  *id = std::string(key.substr(1, key.size() - 6));
  *n = 0;
  for (size_t i = key.size() - 4; i < key.size(); ++i) {
    *n = (*n << 8) | static_cast<uint8_t>(key[i]);
  }
  return true;
}

// One pass over the store, collecting what the later checks compare.
// REQUIRES: External synchronization; the handles outlive it.
class Verifier {
 public:
  Verifier(rocksdb::DB* db, const rocksdb::ReadOptions& ro,
           VerifyReport* report)
      : db_(db), ro_(ro), report_(report) {}

  void Problem(std::string what) {
    report_->problems.push_back(std::move(what));
  }

  absl::Status Meta(rocksdb::ColumnFamilyHandle* meta) {
    std::string value;
    rocksdb::Status s = db_->Get(ro_, meta, keys::kManifestKey, &value);
    if (!s.ok() && !s.IsNotFound()) return FromRocks(s, "reading the manifest");
    absl::Status d = s.ok()
                         ? DecodeStored(keys::kMetaFamily, keys::kManifestKey,
                                        value, &manifest_)
                         : absl::DataLossError("the store has no manifest");
    if (!d.ok()) Problem(std::string(d.message()));
    s = db_->Get(ro_, meta, keys::kQueueStateKey, &value);
    if (s.IsNotFound()) return absl::OkStatus();  // nothing was ever queued
    if (!s.ok()) return FromRocks(s, "reading the queue state");
    d = DecodeStored(keys::kMetaFamily, keys::kQueueStateKey, value, &state_);
    if (!d.ok()) Problem(std::string(d.message()));
    if (state_.head_seq() > state_.next_seq()) {
      Problem(absl::StrCat("queue state: head ", state_.head_seq(),
                           " is past next ", state_.next_seq()));
    }
    return absl::OkStatus();
  }

  absl::Status Pending(rocksdb::ColumnFamilyHandle* pending) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro_, pending));
    uint64_t bytes = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++report_->pending_entries;
      bytes += it->value().size();
      PendingEntry(View(it->key()), View(it->value()));
    }
    OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "reading the queue"));
    if (report_->pending_entries != state_.pending_count()) {
      Problem(absl::StrCat("queue state counts ", state_.pending_count(),
                           " pending events; ", keys::kPendingFamily, " holds ",
                           report_->pending_entries));
    }
    if (bytes != state_.pending_bytes()) {
      Problem(absl::StrCat("queue state counts ", state_.pending_bytes(),
                           " pending bytes; the entries hold ", bytes));
    }
    return absl::OkStatus();
  }

  absl::Status Dead(rocksdb::ColumnFamilyHandle* dead) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro_, dead));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++report_->dead_letters;
      const absl::string_view key = View(it->key());
      storage::DeadLetter letter;
      absl::Status d = DecodeStored(keys::kDeadFamily, Printable(key),
                                    View(it->value()), &letter);
      if (!d.ok()) {
        Problem(std::string(d.message()));
      } else if (!IsUndecodable(letter) && letter.entry().event_id() != key) {
        Problem(absl::StrCat("dead letter ", Printable(key), " holds event ",
                             Printable(letter.entry().event_id())));
      } else if (pending_ids_.contains(key)) {
        Problem(absl::StrCat("event ", key, " is both pending and dead"));
      }
    }
    OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "reading dead letters"));
    if (report_->dead_letters != state_.dead_count()) {
      Problem(absl::StrCat("queue state counts ", state_.dead_count(),
                           " dead letters; ", keys::kDeadFamily, " holds ",
                           report_->dead_letters));
    }
    return absl::OkStatus();
  }

  absl::Status Idempotency(rocksdb::ColumnFamilyHandle* idem) {
    // Each record "k"+key names its expiry entry "t"+ms+key and the reverse.
    absl::flat_hash_map<std::string, int64_t> records;
    absl::flat_hash_map<std::string, int64_t> expiries;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro_, idem));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const absl::string_view key = View(it->key());
      if (!key.empty() && key[0] == 'k') {
        ++report_->idempotency_keys;
        storage::IdempotencyRecord record;
        absl::Status d = DecodeStored(keys::kIdempotencyFamily, Printable(key),
                                      View(it->value()), &record);
        if (!d.ok()) Problem(std::string(d.message()));
        records[key.substr(1)] = d.ok() ? record.committed_unix_ms() : -1;
      } else if (auto expiry = keys::ParseIdempotencyExpiryKey(key)) {
        expiries[expiry->idempotency_key] = expiry->committed_ms;
      } else {
        Problem(absl::StrCat("unknown key ", Printable(key), " in ",
                             keys::kIdempotencyFamily));
      }
    }
    OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "reading idempotency keys"));
    for (const auto& [key, ms] : records) {
      auto e = expiries.find(key);
      if (ms >= 0 && (e == expiries.end() || e->second != ms)) {
        Problem(absl::StrCat("idempotency key ", Printable(key),
                             " has no expiry index entry at its commit time"));
      }
    }
    for (const auto& [key, ms] : expiries) {
      if (!records.contains(key)) {
        Problem(absl::StrCat("idempotency expiry index entry of ",
                             Printable(key), " points to no record"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Workflows(rocksdb::ColumnFamilyHandle* workflows);

  const storage::StoreManifest& manifest() const { return manifest_; }
  bool uses_rows() const { return !step_rows_.empty() || heads_ > 0; }

 private:
  void PendingEntry(absl::string_view key, absl::string_view value) {
    std::optional<uint64_t> seq = keys::ParseSeq(key);
    if (!seq.has_value()) {
      Problem(absl::StrCat("malformed key ", Printable(key), " in ",
                           keys::kPendingFamily));
      return;
    }
    if (*seq < state_.head_seq() || *seq >= state_.next_seq()) {
      Problem(absl::StrCat("pending entry ", keys::SeqForHumans(*seq),
                           " lies outside the queue state's [head ",
                           state_.head_seq(), ", next ", state_.next_seq(),
                           ")"));
    }
    absl::StatusOr<storage::OutboxEntry> entry =
        DecodePendingEntry(*seq, value);
    if (!entry.ok()) {
      Problem(
          absl::StrCat(entry.status().message(),
                       " (the agent quarantines it into the dead letters)"));
      return;
    }
    if (!pending_ids_.insert(entry->event_id()).second) {
      Problem(absl::StrCat("event ", entry->event_id(),
                           " is pending twice (second at seq ",
                           keys::SeqForHumans(*seq), ")"));
    }
  }

  void WorkflowState(absl::string_view id, absl::string_view value);
  void WorkflowHead(absl::string_view id, absl::string_view value);
  void WorkflowStepRow(absl::string_view key, absl::string_view value);
  void WorkflowIndex(absl::string_view key);
  void WorkflowRow(absl::string_view key);

  rocksdb::DB* const db_;
  const rocksdb::ReadOptions& ro_;
  VerifyReport* const report_;
  storage::StoreManifest manifest_;
  storage::QueueState state_;
  absl::flat_hash_set<std::string> pending_ids_;
  // Workflow states by event id: finished time (0 while running), results.
  struct StoredWorkflow {
    bool decoded = false;
    bool finished = false;
    int64_t finished_ms = 0;  // as its retention index key holds it
    uint32_t results = 0;
    bool indexed = false;
    bool rows = false;  // stored as rows (a head), not whole
  };
  absl::flat_hash_map<std::string, StoredWorkflow> workflows_;
  std::vector<std::pair<std::string, uint32_t>> rows_;
  // Step and answer rows: (event id, which row), checked against the heads.
  std::vector<std::pair<std::string, std::string>> step_rows_;
  uint64_t heads_ = 0;
  std::vector<keys::FinishedKey> finished_;
  absl::flat_hash_set<std::string> definitions_;  // ids of the "d" rows
  uint64_t needing_attention_ = 0;
};

absl::Status Verifier::Workflows(rocksdb::ColumnFamilyHandle* workflows) {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro_, workflows));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const absl::string_view key = View(it->key());
    const char kind = key.empty() ? '\0' : key[0];
    if (kind == 's') {
      WorkflowState(key.substr(1), View(it->value()));
    } else if (kind == keys::kWorkflowHeadPrefix[0]) {
      WorkflowHead(key.substr(1), View(it->value()));
    } else if (kind == keys::kWorkflowStepPrefix[0] ||
               kind == keys::kWorkflowAnswerPrefix[0]) {
      WorkflowStepRow(key, View(it->value()));
    } else if (kind == 'r') {
      ++report_->workflow_rows;
      WorkflowRow(key);
    } else if (kind == 'f') {
      WorkflowIndex(key);
    } else if (kind == keys::kWorkflowDefinitionPrefix[0]) {
      // Opaque to the store; sorted before the states that name them.
      definitions_.insert(std::string(key.substr(1)));
    } else if (kind == 'c') {
      storage::WorkflowCancel cancel;
      absl::Status d = DecodeStored(keys::kWorkflowFamily, Printable(key),
                                    View(it->value()), &cancel);
      if (!d.ok()) Problem(std::string(d.message()));
    } else {
      Problem(absl::StrCat("unknown key ", Printable(key), " in ",
                           keys::kWorkflowFamily));
    }
  }
  OUTBOX_RETURN_IF_ERROR(FromRocks(it->status(), "reading workflows"));
  for (const auto& [id, n] : rows_) {
    auto w = workflows_.find(id);
    if (w == workflows_.end()) {
      Problem(absl::StrCat("workflow result row ", n, " of ", id,
                           " has no workflow state"));
    } else if (w->second.decoded && n >= w->second.results) {
      Problem(absl::StrCat("workflow ", id, " counts ", w->second.results,
                           " result rows but row ", n, " is stored"));
    }
  }
  for (const auto& [id, what] : step_rows_) {
    auto w = workflows_.find(id);
    if (w == workflows_.end() || !w->second.rows) {
      Problem(absl::StrCat(what, " of workflow ", id, " has no head row"));
    }
  }
  for (const keys::FinishedKey& f : finished_) {
    auto w = workflows_.find(f.event_id);
    if (w != workflows_.end() && !w->second.decoded) continue;  // reported
    if (w == workflows_.end() || !w->second.finished ||
        w->second.finished_ms != f.finished_unix_ms) {
      Problem(absl::StrCat("retention index entry of workflow ", f.event_id,
                           " points to no workflow finished then"));
    } else {
      w->second.indexed = true;
    }
  }
  for (const auto& [id, w] : workflows_) {
    if (w.finished && !w.indexed) {
      Problem(absl::StrCat("finished workflow ", id,
                           " is missing from the retention index"));
    }
  }
  if (needing_attention_ != state_.workflows_needing_attention()) {
    Problem(absl::StrCat(
        "queue state counts ", state_.workflows_needing_attention(),
        " workflows needing attention; ", needing_attention_, " are stored"));
  }
  return absl::OkStatus();
}

void Verifier::WorkflowHead(absl::string_view id, absl::string_view value) {
  storage::WorkflowHead head;
  absl::Status d =
      DecodeStored(keys::kWorkflowFamily, Printable(keys::WorkflowHeadKey(id)),
                   value, &head);
  if (workflows_.contains(id)) {
    Problem(absl::StrCat("workflow ", id,
                         " is stored twice: as a state and as rows"));
  }
  if (!d.ok()) {
    ++report_->workflows;
    workflows_[id].rows = true;
    Problem(std::string(d.message()));
    return;
  }
  // The checks of a state stored whole, on the state the rows stand for.
  storage::WorkflowState state = workflow_rows::Assemble(head, {}, {});
  WorkflowState(id, Encode(state));
  workflows_[id].rows = true;
  ++heads_;
}

void Verifier::WorkflowStepRow(absl::string_view key, absl::string_view value) {
  const bool step = key[0] == keys::kWorkflowStepPrefix[0];
  std::optional<keys::RowKey> row = keys::ParseWorkflowRowKey(key);
  if (!row.has_value()) {
    Problem(absl::StrCat("malformed workflow row key ", Printable(key)));
    return;
  }
  absl::Status d;
  if (step) {
    storage::WorkflowStep decoded;
    d = DecodeStored(keys::kWorkflowFamily, Printable(key), value, &decoded);
  } else {
    storage::StepAnswer decoded;
    d = DecodeStored(keys::kWorkflowFamily, Printable(key), value, &decoded);
  }
  if (!d.ok()) Problem(std::string(d.message()));
  // Heads ("w") sort after step and answer rows: checked once all are read.
  step_rows_.emplace_back(
      row->event_id,
      absl::StrCat(step ? "step row " : "answer row ", row->step));
}

void Verifier::WorkflowState(absl::string_view id, absl::string_view value) {
  ++report_->workflows;
  storage::WorkflowState state;
  absl::Status d =
      DecodeStored(keys::kWorkflowFamily, Printable(keys::WorkflowStateKey(id)),
                   value, &state);
  StoredWorkflow& w = workflows_[id];
  if (!d.ok()) {
    Problem(std::string(d.message()));
    return;
  }
  w.decoded = true;
  w.results = state.results();
  if (!state.definition().empty() &&
      !definitions_.contains(state.definition())) {
    Problem(absl::StrCat("workflow ", id, " runs under definition ",
                         Printable(state.definition()),
                         ", which is not stored"));
  }
  if (state.phase() == storage::WORKFLOW_PHASE_NEEDS_ATTENTION) {
    ++needing_attention_;
  }
  if (Running(state.phase())) {
    if (!pending_ids_.contains(id)) {
      Problem(absl::StrCat("workflow ", id,
                           " is running but its event is not pending"));
    }
    return;
  }
  // Finished with a time: the retention index holds it (negative times as
  // 0). Without one (a completed workflow kept pending for a cancel's
  // compensation) it is not indexed.
  w.finished = state.finished_unix_ms() != 0;
  w.finished_ms = std::max<int64_t>(state.finished_unix_ms(), 0);
}

void Verifier::WorkflowIndex(absl::string_view key) {
  std::optional<keys::FinishedKey> f = keys::ParseWorkflowFinishedKey(key);
  if (!f.has_value()) {
    Problem(absl::StrCat("malformed retention index key ", Printable(key)));
    return;
  }
  finished_.push_back(*std::move(f));
}

void Verifier::WorkflowRow(absl::string_view key) {
  std::string id;
  uint32_t n = 0;
  if (!ParseResultKey(key, &id, &n)) {
    Problem(absl::StrCat("malformed result row key ", Printable(key)));
    return;
  }
  rows_.emplace_back(std::move(id), n);
}

std::vector<std::string> DescribeFeatures(const storage::StoreManifest& m) {
  std::vector<std::string> out;
  auto add = [&](const char* set, const auto& features) {
    for (const storage::StoreFeature& f : features) {
      out.push_back(absl::StrCat(set, ":", f.name(), " (first used by ",
                                 f.written_by(), ")"));
    }
  };
  add("compat", m.compat_features());
  add("ro_compat", m.ro_compat_features());
  add("incompat", m.incompat_features());
  return out;
}

}  // namespace

absl::StatusOr<VerifyReport> StoreImpl::Verify() {
  OUTBOX_RETURN_IF_ERROR(CheckOpen());
  absl::ReaderMutexLock r(&db_mu_);
  OUTBOX_RETURN_IF_ERROR(DbReady());
  // One point in time for every family. A read-only open (a RocksDB
  // secondary, which has no snapshots) sees the store as of the open anyway.
  std::optional<rocksdb::ManagedSnapshot> snapshot;
  if (!read_only_) snapshot.emplace(db_.get());
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot.has_value() ? snapshot->snapshot() : nullptr;
  ro.fill_cache = false;  // one pass: keep the cache for the agent
  VerifyReport report;
  Verifier v(db_.get(), ro, &report);
  OUTBOX_RETURN_IF_ERROR(v.Meta(meta_));
  OUTBOX_RETURN_IF_ERROR(v.Pending(pending_));
  OUTBOX_RETURN_IF_ERROR(v.Dead(dead_));
  OUTBOX_RETURN_IF_ERROR(v.Idempotency(idem_));
  if (workflows_ != nullptr) OUTBOX_RETURN_IF_ERROR(v.Workflows(workflows_));
  report.features = DescribeFeatures(v.manifest());
  if (report.workflows + report.workflow_rows > 0 &&
      !features::Has(v.manifest(), features::kWorkflows)) {
    report.features.push_back(
        "incompat:workflows (in use, not recorded yet: written before the "
        "feature sets; the next writable open records it)");
  }
  if (v.uses_rows() && !features::Has(v.manifest(), features::kWorkflowRows)) {
    // Its first batch records it: a build without the feature would start
    // these workflows again from their first step.
    v.Problem(
        "workflows are stored as rows but the manifest does not list the "
        "feature workflow_rows: builds that do not know it would misread them");
  }
  return report;
}

}  // namespace outbox
