// Copyright (c) edge-outbox authors.
//
// WriteCache: the model of a disk's volatile write cache, the part of
// outbox-lossy-disk that decides what a power cut loses. It does what the
// block-layer contract allows a disk to do, and no more:
//   - a write is acknowledged once it is in the cache; reads see it at once;
//   - FLUSH makes every write acknowledged before it durable;
//   - a FUA write is durable when acknowledged;
//   - anything else may or may not reach the platter before the power goes,
//     in any order.
//
// The cache tracks 4 KiB blocks (kBlockSize). A block is the unit a cut
// keeps or loses: a write is never torn inside a block, but a write that
// spans several blocks may be torn between them. 4 KiB is the physical
// sector of 4Kn and 512e disks and of flash pages, and the block of ext4 and
// the page the guest's page cache writes back; a 512-byte unit would tear
// inside every ext4 block, which only a 512n disk may do. Writes need no
// alignment: a partial-block write merges into the block's latest content.
//
// Each write of a block adds a version of that block (its whole content
// after the write) to the cache. At a Cut() the unflushed versions meet the
// cut mode:
//   kDrop     every unflushed version is lost; the platter stays as the last
//             flush left it.
//   kSubset   each dirty block survives, with its latest version, with
//             probability `keep`, or keeps its platter content. Blocks
//             written in one order survive in another: a later write to one
//             block is kept while an earlier write to another is lost, and a
//             multi-block write is torn.
//   kReorder  each version survives on its own with probability `keep`; a
//             block ends with its last surviving version. On top of what
//             kSubset does, an older unflushed version of a block may survive
//             while the newer one is lost (the disk wrote v1 to the platter
//             early and lost v2 from the cache).
// With `honest`, every write goes straight to the platter and a cut loses
// nothing.
//
// Draws come from one seeded std::mt19937_64 in block order, so a seed and
// the same writes give the same platter.
// REQUIRES: External synchronization.

#ifndef OUTBOX_TESTS_VM_WRITE_CACHE_H_
#define OUTBOX_TESTS_VM_WRITE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/vm/lossy_disk_os.h"

namespace outbox::vm {

enum class CutMode { kDrop, kSubset, kReorder };

// "drop", "subset", "reorder".
const char* CutModeName(CutMode mode);
// Errors: kInvalidArgument naming the accepted modes.
absl::StatusOr<CutMode> ParseCutMode(absl::string_view name);

struct WriteCacheOptions {
  // If true, every write is durable at once: the disk has no volatile
  // cache, for comparison. Default: false.
  bool honest = false;
  // What a Cut() does to the unflushed writes. Default: kDrop.
  CutMode mode = CutMode::kDrop;
  // The probability that one draw of kSubset or kReorder keeps what it
  // draws for. Default: 0.5.
  double keep = 0.5;
  // Seeds the draws. Default: 0.
  uint64_t seed = 0;
};

// What one Cut() did, in block writes (one per 4 KiB block a write touched).
struct CutReport {
  uint64_t unflushed = 0;
  uint64_t kept = 0;
  uint64_t dropped = 0;
};

// Everything the disk was asked to do, for the soak's report.
struct DiskCounts {
  uint64_t reads = 0;
  uint64_t writes = 0;      // write requests, FUA ones included
  uint64_t fua_writes = 0;  // of which with FUA
  uint64_t flushes = 0;
  uint64_t trims = 0;
  uint64_t cuts = 0;
  uint64_t kept = 0;     // unflushed block writes kept at cuts, summed
  uint64_t dropped = 0;  // unflushed block writes lost at cuts, summed
};

class WriteCache {
 public:
  static constexpr size_t kBlockSize = 4096;

  // `platter` must outlive the cache.
  WriteCache(PlatterFile* platter, const WriteCacheOptions& options);
  WriteCache(const WriteCache&) = delete;
  WriteCache& operator=(const WriteCache&) = delete;

  uint64_t size() const { return platter_->size(); }
  const WriteCacheOptions& options() const { return options_; }
  const DiskCounts& counts() const { return counts_; }
  // Block writes not yet durable.
  uint64_t unflushed() const;

  // Replaces `*out` with `length` bytes at `offset`, unflushed writes
  // included. Errors: kInvalidArgument past the end; the platter's.
  absl::Status Read(uint64_t offset, size_t length, std::string* out);

  // Writes `data` at `offset`; durable on return if `fua`.
  // Errors: kResourceExhausted past the end; the platter's.
  absl::Status Write(uint64_t offset, absl::string_view data, bool fua);

  // Makes every write so far durable. Errors: the platter's.
  absl::Status Flush();

  // Discards [offset, offset + length): a no-op that leaves the data as it
  // is, which NBD allows (the content of a trimmed range is unspecified
  // until rewritten) and is what a disk that ignores discards does.
  // Errors: kResourceExhausted past the end.
  absl::Status Trim(uint64_t offset, uint64_t length);

  // The power goes: applies the cut mode to the unflushed writes, writes
  // what survives to the platter and empties the cache.
  // Errors: the platter's (the cache is emptied all the same).
  absl::StatusOr<CutReport> Cut();

 private:
  using Block = std::string;  // kBlockSize bytes

  bool InRange(uint64_t offset, uint64_t length) const;
  // The block's current content: its latest unflushed version, else the
  // platter's.
  absl::Status Current(uint64_t block, Block* out);
  absl::Status WriteBlock(uint64_t block, size_t begin, absl::string_view data,
                          bool durable);
  absl::Status Persist(uint64_t block, const Block& content);
  // kSubset or kReorder on one block's versions: the survivor (or nullptr)
  // and the counts.
  const Block* Survivor(const std::vector<Block>& versions, CutReport* report);
  bool Draw();

  PlatterFile* const platter_;
  const WriteCacheOptions options_;
  std::mt19937_64 rng_;
  // Unflushed versions per block index, oldest first. Ordered, so that the
  // draws of a seed do not depend on hashing.
  std::map<uint64_t, std::vector<Block>> dirty_;
  DiskCounts counts_;
};

}  // namespace outbox::vm

#endif  // OUTBOX_TESTS_VM_WRITE_CACHE_H_
