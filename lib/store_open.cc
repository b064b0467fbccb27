// Copyright (c) edge-outbox authors.
//
// Opening a store: checking that the path holds an outbox store of a schema
// we know, with the tables the caller names, and loading the queue state.

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "lib/bounded_iterator.h"
#include "lib/codec.h"
#include "lib/entry_scan.h"
#include "lib/features.h"
#include "lib/keys.h"
#include "lib/rocks_options.h"
#include "lib/rocks_status.h"
#include "lib/schema.h"
#include "lib/slices.h"
#include "lib/store_impl.h"
#include "lib/store_path.h"
#include "platform/posix_error.h"
#include "platform/private_dir.h"

namespace outbox {
namespace {

constexpr const char* kOwnFamilies[] = {keys::kMetaFamily, keys::kPendingFamily,
                                        keys::kDeadFamily,
                                        keys::kIdempotencyFamily};

absl::Status ValidateTables(const std::vector<std::string>& tables) {
  absl::flat_hash_set<std::string> seen;
  for (const std::string& t : tables) {
    const bool valid_chars = std::all_of(t.begin(), t.end(), [](char c) {
      return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-';
    });
    if (t.empty() || t.size() > 64 || !valid_chars) {
      return absl::InvalidArgumentError(
          absl::StrCat("Options::tables: invalid table name '", t,
                       "' (use 1..64 characters of [A-Za-z0-9_.-])"));
    }
    if (t == rocksdb::kDefaultColumnFamilyName ||
        absl::StartsWith(t, keys::kReservedPrefix)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Options::tables: table name '", t, "' is reserved (\"default\" ",
          "and names starting with \"", keys::kReservedPrefix, "\")"));
    }
    if (!seen.insert(t).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Options::tables: table '", t, "' is listed twice"));
    }
  }
  return absl::OkStatus();
}

// Whether every column family of the database at `path` is empty: the state
// a first Store::Open leaves when it is cut off after CURRENT but before it
// finished creating the store's column families and its manifest.
absl::StatusOr<bool> AllFamiliesEmpty(
    const rocksdb::DBOptions& db_options, const std::string& path,
    const std::vector<std::string>& families) {
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& f : families) {
    descriptors.emplace_back(f, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(
      ReadWithoutWriting(db_options), path, descriptors, &handles, &raw);
  if (!s.ok()) return FromRocks(s, absl::StrCat("reading '", path, "'"));
  std::unique_ptr<rocksdb::DB> db(raw);
  bool empty = true;
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), h));
    it->SeekToFirst();
    if (it->Valid() || !it->status().ok()) empty = false;
  }
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
  return empty;
}

// Whether the database at `path`, which lacks one of the store's own column
// families (`missing`), is a first Store::Open cut off while it created them
// (every family empty: finish creating it) or something to refuse.
absl::StatusOr<bool> IsUnfinishedCreate(
    const rocksdb::DBOptions& db_options, const std::string& path,
    const std::vector<std::string>& families, const char* missing,
    bool read_only, bool create_if_missing) {
  OUTBOX_ASSIGN_OR_RETURN(const bool empty,
                          AllFamiliesEmpty(db_options, path, families));
  if (empty && !read_only && create_if_missing) return true;
  if (empty && read_only) {
    return absl::NotFoundError(absl::StrCat("no outbox store at '", path,
                                            "' (its creation never finished)"));
  }
  if (std::find(families.begin(), families.end(), keys::kMetaFamily) ==
      families.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", path,
        "' is a RocksDB database but not an outbox store (it has no ",
        keys::kMetaFamily, " column family)"));
  }
  // Recreating it empty would hide lost events.
  return absl::DataLossError(
      absl::StrCat("outbox store '", path, "' has lost its ", missing,
                   " column family; restore the store from a backup"));
}

// Every record table of the store must be named by the caller: its data
// would otherwise be silently unreachable.
absl::Status CheckCallerTables(const std::string& path,
                               const std::vector<std::string>& families,
                               const std::vector<std::string>& tables) {
  for (const std::string& f : families) {
    if (f == rocksdb::kDefaultColumnFamilyName ||
        absl::StartsWith(f, keys::kReservedPrefix)) {
      continue;
    }
    if (std::find(tables.begin(), tables.end(), f) == tables.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "outbox store '", path, "' has table '", f,
          "' which Options::tables does not list; add it to "
          "Options::tables (tables are never dropped implicitly)"));
    }
  }
  return absl::OkStatus();
}

// When the entry's due time was written; entries from before
// scheduled_unix_ms have their last attempt or, failing that, their commit.
int64_t ScheduledAt(const EntryIndexFields& entry) {
  if (entry.scheduled_unix_ms != 0) return entry.scheduled_unix_ms;
  if (entry.last_attempt_unix_ms != 0) return entry.last_attempt_unix_ms;
  return entry.created_unix_ms;
}

// True if the entry's due time was set after its commit: by an attempt or a
// replay.
bool Rescheduled(const EntryIndexFields& entry) {
  return entry.attempts > 0 || ScheduledAt(entry) != entry.created_unix_ms;
}

bool IsRecordTable(const std::string& family) {
  return family != rocksdb::kDefaultColumnFamilyName &&
         !absl::StartsWith(family, keys::kReservedPrefix);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const Options& options,
                                                   const std::string& path) {
  return OpenStoreWithEnv(options, path, rocksdb::Env::Default());
}

absl::StatusOr<std::unique_ptr<Store>> Store::OpenReadOnly(
    const Options& options, const std::string& path) {
  return OpenStoreWithEnv(options, path, rocksdb::Env::Default(),
                          /*read_only=*/true);
}

absl::StatusOr<std::vector<std::string>> Store::ListTables(
    const std::string& path) {
  rocksdb::Env* env = rocksdb::Env::Default();
  OUTBOX_ASSIGN_OR_RETURN(const StorePath found, InspectStorePath(env, path));
  if (found.kind != StorePath::Kind::kDatabase) {
    return absl::NotFoundError(absl::StrCat("no outbox store at '", path, "'"));
  }
  std::vector<std::string> families;
  rocksdb::Status s =
      rocksdb::DB::ListColumnFamilies(MakeDbOptions(env), path, &families);
  if (!s.ok()) return FromRocks(s, absl::StrCat("reading '", path, "'"));
  std::vector<std::string> tables;
  for (const std::string& f : families) {
    if (IsRecordTable(f)) tables.push_back(f);
  }
  return tables;
}

absl::StatusOr<std::unique_ptr<Store>> OpenStoreWithEnv(
    const Options& options, const std::string& path, rocksdb::Env* env,
    bool read_only, const StoreTestOptions& test) {
  if (!read_only) OUTBOX_RETURN_IF_ERROR(ValidateTables(options.tables));
  if (options.max_pending_events == 0 || options.max_pending_bytes == 0) {
    return absl::InvalidArgumentError(
        "Options::max_pending_events and max_pending_bytes must be > 0");
  }
  OUTBOX_ASSIGN_OR_RETURN(EventClasses classes,
                          EventClasses::Make(options.event_classes));
  std::unique_ptr<StoreImpl> store(
      new StoreImpl(options, std::move(classes), path, read_only, test));
  {
    absl::MutexLock l(&store->mu_);
    absl::WriterMutexLock w(&store->db_mu_);
    OUTBOX_RETURN_IF_ERROR(store->OpenDb(env));
    // Only now may a close write: one refused halfway (damage, a newer
    // schema) must leave every file as it found it.
    store->opened_ = true;
  }
  return std::unique_ptr<Store>(std::move(store));
}

absl::Status StoreImpl::OpenDb(rocksdb::Env* env) {
  env_ = env;
  OUTBOX_ASSIGN_OR_RETURN(bool fresh, PreparePath());
  const RocksMemory memory = MakeRocksMemory(options_.memory_profile);
  rocksdb::DBOptions db_options = MakeDbOptions(env, memory);
  std::vector<std::string> families;
  if (!fresh) {
    OUTBOX_ASSIGN_OR_RETURN(fresh, ReadFamilies(db_options, &families));
  }
  // RocksDB's files are as readable as the umask makes them (0644 usually):
  // the directory is what keeps every event private to its owner. A new
  // store's is made 0700 before RocksDB writes into it, whatever the umask.
  OUTBOX_RETURN_IF_ERROR(fresh ? MakePrivateDirectory(path_)
                               : CheckDirectoryPrivate(path_, "outbox store"));
  // A writable RocksDB open writes files before anything can be read: the
  // feature sets are checked first, so that a store this library must not
  // write is refused unchanged. (A read-only open writes nothing into the
  // store; LoadOrCreateManifest checks for it.)
  if (!fresh && !read_only_) {
    OUTBOX_RETURN_IF_ERROR(CheckFeaturesBeforeWriting(db_options));
  }
  OUTBOX_RETURN_IF_ERROR(OpenRocks(db_options, memory, families));
  OUTBOX_RETURN_IF_ERROR(LoadOrCreateManifest(fresh, families));
  OUTBOX_RETURN_IF_ERROR(LoadQueueState());
  return RebuildIndex();
}

absl::StatusOr<bool> StoreImpl::PreparePath() {
  OUTBOX_ASSIGN_OR_RETURN(const StorePath found, InspectStorePath(env_, path_));
  if (found.kind == StorePath::Kind::kDatabase) return false;
  if (!options_.create_if_missing || read_only_) {
    return absl::NotFoundError(
        absl::StrCat("no outbox store at '", path_,
                     "' (Options::create_if_missing is false)"));
  }
  OUTBOX_RETURN_IF_ERROR(PrepareNewStorePath(env_, path_, found));
  return true;
}

absl::StatusOr<bool> StoreImpl::ReadFamilies(
    const rocksdb::DBOptions& db_options, std::vector<std::string>* families) {
  rocksdb::Status s =
      rocksdb::DB::ListColumnFamilies(db_options, path_, families);
  if (!s.ok()) return FromRocks(s, absl::StrCat("reading '", path_, "'"));
  for (const char* own : kOwnFamilies) {
    if (std::find(families->begin(), families->end(), own) == families->end()) {
      return IsUnfinishedCreate(db_options, path_, *families, own, read_only_,
                                options_.create_if_missing);
    }
  }
  if (read_only_) return false;
  OUTBOX_RETURN_IF_ERROR(CheckCallerTables(path_, *families, options_.tables));
  return false;
}

absl::Status StoreImpl::OpenRocks(rocksdb::DBOptions db_options,
                                  const RocksMemory& memory,
                                  const std::vector<std::string>& families) {
  // Open every family the store has plus any new table of the caller's;
  // create_missing_column_families creates only those new tables, since
  // ReadFamilies checked that the store has all of its own.
  absl::flat_hash_set<std::string> wanted(families.begin(), families.end());
  wanted.insert(rocksdb::kDefaultColumnFamilyName);
  for (const char* own : kOwnFamilies) wanted.insert(own);
  if (!read_only_) {
    wanted.insert(options_.tables.begin(), options_.tables.end());
    // Families added by later versions: a writer creates them in an older
    // store (a reader opens what the store has).
    wanted.insert(keys::kWorkflowFamily);
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : wanted) {
    descriptors.emplace_back(name, MakeFamilyOptions(name, memory));
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s;
  if (read_only_) {
    OUTBOX_RETURN_IF_ERROR(MakeSecondaryDir());
    // A secondary instance is RocksDB's supported way to read a store that
    // another process writes; it keeps every table file open (-1) so that
    // files the writer compacts away stay readable until we close.
    db_options.max_open_files = -1;
    s = rocksdb::DB::OpenAsSecondary(db_options, path_, secondary_dir_,
                                     descriptors, &handles_, &raw);
  } else {
    s = rocksdb::DB::Open(db_options, path_, descriptors, &handles_, &raw);
  }
  if (!s.ok()) return FromRocks(s, absl::StrCat("opening '", path_, "'"));
  db_.reset(raw);
  if (read_only_) {
    s = db_->TryCatchUpWithPrimary();
    if (!s.ok()) return FromRocks(s, "catching up with the store's writer");
  }
  BindHandles();
  return absl::OkStatus();
}

void StoreImpl::BindHandles() {
  for (rocksdb::ColumnFamilyHandle* h : handles_) {
    const std::string& name = h->GetName();
    if (name == keys::kMetaFamily) meta_ = h;
    if (name == keys::kPendingFamily) pending_ = h;
    if (name == keys::kDeadFamily) dead_ = h;
    if (name == keys::kIdempotencyFamily) idem_ = h;
    if (name == keys::kWorkflowFamily) workflows_ = h;
    // A reader sees every table; a writer the ones its Options name.
    const bool is_table =
        read_only_ ? IsRecordTable(name)
                   : std::find(options_.tables.begin(), options_.tables.end(),
                               name) != options_.tables.end();
    if (is_table) tables_[name] = h;
  }
}

absl::Status StoreImpl::LoadOrCreateManifest(
    bool fresh, const std::vector<std::string>& existing_families) {
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), meta_, keys::kManifestKey, &value);
  storage::StoreManifest manifest;
  if (s.ok()) {
    OUTBOX_RETURN_IF_ERROR(
        DecodeStored(keys::kMetaFamily, keys::kManifestKey, value, &manifest));
    OUTBOX_RETURN_IF_ERROR(
        features::CheckOpenable(manifest, path_, /*writable=*/!read_only_));
    // Checked against the families that existed before this open: a table
    // the caller still names would otherwise be recreated empty.
    for (const std::string& t : manifest.tables()) {
      if (std::find(existing_families.begin(), existing_families.end(), t) ==
          existing_families.end()) {
        return absl::DataLossError(
            absl::StrCat("table '", t, "' recorded in outbox store '", path_,
                         "' has disappeared; restore the store from a backup"));
      }
    }
  } else if (s.IsNotFound()) {
    // A power cut between creating the families and writing the manifest
    // leaves a store without one. That is a fresh store only if nothing
    // else was ever written; otherwise the manifest was lost.
    if (!fresh) {
      std::string queue;
      rocksdb::Status q =
          db_->Get(rocksdb::ReadOptions(), meta_, keys::kQueueStateKey, &queue);
      if (!q.IsNotFound()) {
        return absl::DataLossError(
            absl::StrCat("outbox store '", path_, "' has lost its manifest"));
      }
    }
    manifest.set_schema_version(kBaseSchemaVersion);
    manifest.set_created_by(kLibraryVersion);
    manifest.set_created_unix_ms(ToStoredMillis(Now()));
  } else {
    return FromRocks(s, "reading the store manifest");
  }

  // Record tables the manifest does not know yet (new store, or tables added
  // to Options::tables since), and features used before they were recorded.
  bool changed = !s.ok();
  if (!read_only_) {
    OUTBOX_ASSIGN_OR_RETURN(const bool added,
                            AddFeaturesInUseLocked(&manifest));
    changed = changed || added;
  }
  for (const std::string& t : options_.tables) {
    if (std::find(manifest.tables().begin(), manifest.tables().end(), t) ==
        manifest.tables().end()) {
      manifest.add_tables(t);
      changed = true;
    }
  }
  // What a batch that first uses a feature rewrites (FeaturesFirstUsedLocked).
  manifest_ = manifest;
  if (!changed || read_only_) return absl::OkStatus();
  rocksdb::WriteOptions wo;
  wo.sync = true;  // the manifest is what makes this directory a store
  return FromRocks(db_->Put(wo, meta_, keys::kManifestKey, Encode(manifest)),
                   "writing the store manifest");
}

absl::Status StoreImpl::LoadQueueState() {
  std::string value;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), meta_, keys::kQueueStateKey, &value);
  storage::QueueState state;
  if (s.ok()) {
    OUTBOX_RETURN_IF_ERROR(
        DecodeStored(keys::kMetaFamily, keys::kQueueStateKey, value, &state));
  } else if (!s.IsNotFound()) {
    return FromRocks(s, "reading the queue state");
  }
  if (state.head_seq() > state.next_seq()) {
    return absl::DataLossError(
        absl::StrCat("outbox queue state is inconsistent (head ",
                     state.head_seq(), " > next ", state.next_seq(), ")"));
  }
  // No pending key may lie at or past next: the state and the entries are
  // written in the same batches, so anything there is corruption. (Looking
  // from next upwards never meets the tombstones deliveries leave below.)
  BoundedIterator it(db_.get(), pending_, keys::Seq(state.next_seq()),
                     std::string(9, '\xff'));
  if (it->Valid()) {
    return absl::DataLossError(absl::StrCat(
        "outbox queue state is behind its entries (pending key ",
        it->key().ToString(true), ", next seq ", state.next_seq(), ")"));
  }
  if (!it->status().ok()) return FromRocks(it->status(), "checking the queue");
  state_ = state;
  clock_mark_ms_.store(state.wall_clock_mark_unix_ms());
  store_clock_.Start(state.store_clock_ms(), state.wall_clock_mark_unix_ms());
  // What is on disk: a reopen after a full disk may have counted more since.
  store_clock_persisted_ms_ = state.store_clock_ms();
  return absl::OkStatus();
}

absl::Status StoreImpl::MakeSecondaryDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(
      tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/outbox-reader-XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return PosixError(
        absl::StrCat("cannot create a scratch directory for a read-only open (",
                     pattern, "; set TMPDIR to a writable directory)"),
        errno);
  }
  secondary_dir_ = pattern;
  return absl::OkStatus();
}

absl::Status StoreImpl::RebuildIndex() {
  // Read once, front to back: no need to keep these blocks cached.
  BoundedIterator it(db_.get(), pending_, keys::Seq(state_.head_seq()),
                     keys::Seq(state_.next_seq()), /*fill_cache=*/false);
  uint64_t count = 0, bytes = 0;
  const int64_t now_ms = ToStoredMillis(Now());
  const int64_t index_now = IndexNow();
  // Filled only for an entry the scan leaves to the full decoder; one
  // message for the whole open, not one built per entry.
  storage::OutboxEntry decoded;
  for (; it->Valid(); it->Next()) {
    ++count;
    bytes += it->value().size();
    std::optional<uint64_t> seq = keys::ParseSeq(View(it->key()));
    if (!seq.has_value()) {
      return absl::DataLossError(absl::StrCat("malformed key ",
                                              it->key().ToString(true), " in ",
                                              keys::kPendingFamily));
    }
    absl::StatusOr<EntryIndexFields> entry =
        ReadIndexFields(*seq, View(it->value()), &decoded);
    if (!entry.ok()) {
      index_.AddUndecodable(*seq, entry.status());
      continue;
    }
    // After the clock went back, how long the device was off is unknown: a
    // retry (or a replay) is due at once, since its wait has most likely
    // passed; a new event keeps its deliver_after delay, a business rule.
    const ClockBack clock_back =
        Rescheduled(*entry) ? ClockBack::kDueNow : ClockBack::kKeepDelay;
    const int64_t written_ms = variant_->WrittenAt(ScheduledAt(*entry), now_ms);
    IndexEntryLocked(*seq, entry->ordering_key, entry->destination, entry->type,
                     IndexDueAt(entry->next_attempt_unix_ms, written_ms,
                                clock_back, now_ms, index_now),
                     it->value().size());
  }
  if (!it->status().ok()) {
    return FromRocks(it->status(), "reading the queue");
  }
  // The stored counters travel with every batch and so should agree; if an
  // entry was damaged or rewritten outside the store they may not, and what
  // is actually stored is what the capacity limits must see.
  state_.set_pending_count(count);
  state_.set_pending_bytes(bytes);
  tail_ = state_;
  return absl::OkStatus();
}

}  // namespace outbox
