// Copyright (c) edge-outbox authors.
//
// The broken variants of StoreTestOptions, each where it breaks the store.

#include "lib/store_variant.h"

#include <memory>

namespace outbox {
namespace {

class BrokenStore final : public StoreVariant {
 public:
  explicit BrokenStore(const StoreTestOptions& test) : test_(test) {}

  bool CommitSyncs(bool sync) const override {
    return sync && !test_.skip_commit_sync;
  }
  bool SplitsCommits() const override { return test_.split_commit_batches; }
  storage::QueueState Persisted(
      const storage::QueueState& written) const override {
    storage::QueueState persisted = written;
    if (test_.head_past_next_when_emptied && written.pending_count() == 0) {
      persisted.set_head_seq(written.next_seq() + 1);
    }
    return persisted;
  }
  bool AcksBeforeWrite(size_t n) const override {
    return test_.ack_group_before_sync && n > 1;
  }
  bool SettlesWithoutLog(bool delivered) const override {
    return test_.mark_delivered_without_wal && delivered;
  }
  uint64_t DeliveredTotal(uint64_t seq, uint64_t counted) const override {
    return test_.miscount_delivered_total && seq % 16 == 0 ? counted + 1
                                                           : counted;
  }
  uint64_t PendingAfterAttempt(uint64_t counted) const override {
    return test_.miscount_pending ? counted + 1 : counted;
  }
  int64_t WrittenAt(int64_t scheduled_ms, int64_t now_ms) const override {
    return test_.open_ignores_clock_back ? now_ms : scheduled_ms;
  }

 private:
  const StoreTestOptions test_;
};

// Every flag of StoreTestOptions, so that a variant added there is named
// here too (or the store would run it as the production one).
static_assert(sizeof(StoreTestOptions) == 8,
              "name the new StoreTestOptions flag in AnyBroken");
bool AnyBroken(const StoreTestOptions& t) {
  return t.skip_commit_sync || t.split_commit_batches ||
         t.ack_group_before_sync || t.mark_delivered_without_wal ||
         t.miscount_delivered_total || t.miscount_pending ||
         t.head_past_next_when_emptied || t.open_ignores_clock_back;
}

}  // namespace

std::unique_ptr<const StoreVariant> MakeStoreVariant(
    const StoreTestOptions& test) {
  if (!AnyBroken(test)) return std::make_unique<StoreVariant>();
  return std::make_unique<BrokenStore>(test);
}

}  // namespace outbox
