// Copyright (c) edge-outbox authors.
//
// The deliberately broken variants of the store, so that crash suites can
// prove they catch what they claim to. They reach the write paths through
// one object, StoreVariant, that StoreImpl always holds and asks at each
// point a variant changes: the production one (StoreVariant itself) changes
// nothing, each method answering what the store would do anyway. The broken
// ones (MakeStoreVariant) live in store_variant.cc, apart from the code they
// break. Never set outside tests.
//
// Thread-safety: const methods only; safe for concurrent use.

#ifndef OUTBOX_LIB_STORE_VARIANT_H_
#define OUTBOX_LIB_STORE_VARIANT_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "proto/storage.pb.h"

namespace outbox {

// Which broken variants a store opened by OpenStoreWithEnv runs.
struct StoreTestOptions {
  // Commits return before the log is fsync'ed, whatever Options::sync says.
  bool skip_commit_sync = false;
  // A commit writes the caller's records and the outbox entries in two
  // separate batches (crash point kCommitBetweenSplitBatches between them).
  bool split_commit_batches = false;
  // Group commit acknowledges the writers that joined a leader's group
  // before the group's synced write, instead of after it.
  bool ack_group_before_sync = false;
  // Settling deliveries writes without the WAL (WriteOptions::disableWAL):
  // it returns OK, but only a memtable flush makes it durable, so a power
  // cut brings the events back even after a later synced write.
  bool mark_delivered_without_wal = false;
  // Settling counts a delivered event whose seq is a multiple of 16 twice
  // in delivered_total.
  bool miscount_delivered_total = false;
  // Recording an attempt writes a pending_count one too high.
  bool miscount_pending = false;
  // A write that leaves the queue empty persists a head past next_seq (in
  // memory it is right, so the next write heals it), which an open refuses
  // as inconsistent.
  bool head_past_next_when_emptied = false;
  // Open indexes each pending entry at its stored next-attempt time as if
  // the wall clock had never gone back since it was written: after the clock
  // was set back, an entry written before is due only once the clock has
  // made up the jump (years, in the soak).
  bool open_ignores_clock_back = false;
};

// The points of the write paths a variant may change. Each default is the
// store's own behaviour.
class StoreVariant {
 public:
  virtual ~StoreVariant() = default;

  // Whether a commit is synced, when Options::sync says `sync`.
  virtual bool CommitSyncs(bool sync) const { return sync; }
  // Whether commits write their records in a batch of their own, first,
  // straight under the store's lock with the writer queue empty.
  virtual bool SplitsCommits() const { return false; }
  // The queue state a group write persists when it leaves `written`.
  virtual storage::QueueState Persisted(
      const storage::QueueState& written) const {
    return written;
  }
  // Whether the followers of a group of `n` writers hear OK before the
  // group's write.
  virtual bool AcksBeforeWrite(size_t /*n*/) const { return false; }
  // Whether a settlement write (`delivered`: it marks deliveries) bypasses
  // the writer queue and the log.
  virtual bool SettlesWithoutLog(bool /*delivered*/) const { return false; }
  // delivered_total once the delivery of `seq` is counted in `counted`.
  virtual uint64_t DeliveredTotal(uint64_t /*seq*/, uint64_t counted) const {
    return counted;
  }
  // pending_count as a recorded attempt leaves it (`counted`).
  virtual uint64_t PendingAfterAttempt(uint64_t counted) const {
    return counted;
  }
  // The time open takes a pending entry scheduled at `scheduled_ms` as
  // written at, with the wall clock at `now_ms`.
  virtual int64_t WrittenAt(int64_t scheduled_ms, int64_t /*now_ms*/) const {
    return scheduled_ms;
  }
};

// The variant `test` asks for: the production one when it asks for none.
std::unique_ptr<const StoreVariant> MakeStoreVariant(
    const StoreTestOptions& test);

}  // namespace outbox

#endif  // OUTBOX_LIB_STORE_VARIANT_H_
