// Copyright (c) edge-outbox authors.

#include "tests/crash/soak_disk.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "lib/codec.h"
#include "lib/keys.h"
#include "lib/rocks_options.h"
#include "lib/rocks_status.h"
#include "lib/slices.h"
#include "rocksdb/db.h"

namespace outbox::testing {
namespace {

// Opens `path` read-only with the column families read here (RocksDB lets a
// read-only open name a subset); fills `handles`.
absl::StatusOr<std::unique_ptr<rocksdb::DB>> OpenRaw(
    rocksdb::Env* env, const std::string& path,
    std::vector<rocksdb::ColumnFamilyHandle*>* handles) {
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const char* f :
       {rocksdb::kDefaultColumnFamilyName.c_str(), keys::kMetaFamily,
        keys::kPendingFamily, keys::kDeadFamily}) {
    descriptors.emplace_back(f, MakeFamilyOptions(f));
  }
  rocksdb::DB* raw = nullptr;
  // The store's own options: the same WAL recovery mode decides which
  // writes survived the cut.
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(MakeDbOptions(env), path,
                                                   descriptors, handles, &raw);
  if (!s.ok()) return FromRocks(s, "opening the store read-only");
  return std::unique_ptr<rocksdb::DB>(raw);
}

absl::Status ReadFamilies(rocksdb::DB* db,
                          const std::vector<rocksdb::ColumnFamilyHandle*>& hs,
                          DiskState* disk) {
  for (rocksdb::ColumnFamilyHandle* h : hs) {
    const std::string& name = h->GetName();
    if (name == keys::kMetaFamily) {
      std::string value;
      rocksdb::Status s =
          db->Get(rocksdb::ReadOptions(), h, keys::kQueueStateKey, &value);
      if (s.ok()) {
        absl::Status decoded =
            DecodeStored(name, keys::kQueueStateKey, value, &disk->queue);
        if (!decoded.ok()) return decoded;
      } else if (!s.IsNotFound()) {
        return FromRocks(s, "reading the queue state");
      }
      continue;
    }
    const bool pending = name == keys::kPendingFamily;
    if (!pending && name != keys::kDeadFamily) continue;
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), h));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (!pending) {
        disk->dead.push_back(it->key().ToString());
        disk->ids.insert(disk->dead.back());
        continue;
      }
      DiskState::Pending p;
      p.seq = keys::ParseSeq(View(it->key())).value_or(UINT64_MAX);
      p.bytes = it->value().size();
      absl::StatusOr<storage::OutboxEntry> entry =
          DecodePendingEntry(p.seq, View(it->value()));
      if (entry.ok()) {
        p.id = entry->event_id();
        disk->ids.insert(p.id);
      }
      disk->pending.push_back(std::move(p));
    }
    if (!it->status().ok()) return FromRocks(it->status(), name);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DiskState> ReadDiskState(rocksdb::Env* env,
                                        const std::string& path) {
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  absl::StatusOr<std::unique_ptr<rocksdb::DB>> db =
      OpenRaw(env, path, &handles);
  if (!db.ok()) return db.status();
  DiskState disk;
  absl::Status read = ReadFamilies(db->get(), handles, &disk);
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    (*db)->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  }
  if (!read.ok()) {
    return absl::Status(read.code(), absl::StrCat("reading '", path,
                                                  "' raw: ", read.message()));
  }
  return disk;
}

}  // namespace outbox::testing
