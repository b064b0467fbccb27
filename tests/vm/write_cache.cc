// Copyright (c) edge-outbox authors.

#include "tests/vm/write_cache.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace outbox::vm {

const char* CutModeName(CutMode mode) {
  switch (mode) {
    case CutMode::kDrop:
      return "drop";
    case CutMode::kSubset:
      return "subset";
    case CutMode::kReorder:
      return "reorder";
  }
  return "?";
}

absl::StatusOr<CutMode> ParseCutMode(absl::string_view name) {
  for (CutMode mode : {CutMode::kDrop, CutMode::kSubset, CutMode::kReorder}) {
    if (name == CutModeName(mode)) return mode;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown cut mode '", name, "' (want drop, subset or reorder)"));
}

WriteCache::WriteCache(PlatterFile* platter, const WriteCacheOptions& options)
    : platter_(platter), options_(options), rng_(options.seed) {}

uint64_t WriteCache::unflushed() const {
  uint64_t total = 0;
  for (const auto& [block, versions] : dirty_) total += versions.size();
  return total;
}

bool WriteCache::InRange(uint64_t offset, uint64_t length) const {
  return offset <= size() && length <= size() - offset;
}

absl::Status WriteCache::Current(uint64_t block, Block* out) {
  auto it = dirty_.find(block);
  if (it != dirty_.end()) {
    *out = it->second.back();
    return absl::OkStatus();
  }
  out->resize(kBlockSize);
  return platter_->ReadAt(block * kBlockSize, out->data(), kBlockSize);
}

absl::Status WriteCache::Read(uint64_t offset, size_t length,
                              std::string* out) {
  if (!InRange(offset, length)) {
    return absl::InvalidArgumentError(
        absl::StrCat("read of ", length, " bytes at ", offset,
                     " goes past the end of the disk (", size(), " bytes)"));
  }
  ++counts_.reads;
  out->resize(length);
  absl::Status status = platter_->ReadAt(offset, out->data(), length);
  if (!status.ok() || length == 0) return status;
  // Overlay the unflushed blocks the range touches.
  const uint64_t end = offset + length;
  for (auto it = dirty_.lower_bound(offset / kBlockSize);
       it != dirty_.end() && it->first * kBlockSize < end; ++it) {
    const uint64_t block_start = it->first * kBlockSize;
    const uint64_t from = std::max(offset, block_start);
    const uint64_t to = std::min(end, block_start + kBlockSize);
    std::copy_n(it->second.back().data() + (from - block_start), to - from,
                out->data() + (from - offset));
  }
  return absl::OkStatus();
}

absl::Status WriteCache::Persist(uint64_t block, const Block& content) {
  return platter_->WriteAt(block * kBlockSize, content.data(), kBlockSize);
}

absl::Status WriteCache::WriteBlock(uint64_t block, size_t begin,
                                    absl::string_view data, bool durable) {
  Block content;
  absl::Status status = Current(block, &content);
  if (!status.ok()) return status;
  std::copy(data.begin(), data.end(), content.begin() + begin);
  if (!durable) {
    dirty_[block].push_back(std::move(content));
    return absl::OkStatus();
  }
  // The block's older unflushed versions go with it: written now, they are
  // durable too (a disk may persist anything early), and one that stayed
  // cached could survive a kReorder cut and overwrite this durable write.
  dirty_.erase(block);
  return Persist(block, content);
}

absl::Status WriteCache::Write(uint64_t offset, absl::string_view data,
                               bool fua) {
  if (!InRange(offset, data.size())) {
    return absl::ResourceExhaustedError(
        absl::StrCat("write of ", data.size(), " bytes at ", offset,
                     " goes past the end of the disk (", size(), " bytes)"));
  }
  ++counts_.writes;
  if (fua) ++counts_.fua_writes;
  const bool durable = fua || options_.honest;
  while (!data.empty()) {
    const uint64_t block = offset / kBlockSize;
    const size_t begin = offset % kBlockSize;
    const size_t n = std::min(data.size(), kBlockSize - begin);
    absl::Status status = WriteBlock(block, begin, data.substr(0, n), durable);
    if (!status.ok()) return status;
    data.remove_prefix(n);
    offset += n;
  }
  return absl::OkStatus();
}

absl::Status WriteCache::Flush() {
  ++counts_.flushes;
  // Only the latest version of each block matters once all are durable.
  for (const auto& [block, versions] : dirty_) {
    absl::Status status = Persist(block, versions.back());
    if (!status.ok()) return status;
  }
  dirty_.clear();
  return absl::OkStatus();
}

absl::Status WriteCache::Trim(uint64_t offset, uint64_t length) {
  if (!InRange(offset, length)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("trim of ", length, " bytes at ", offset,
                     " goes past the end of the disk (", size(), " bytes)"));
  }
  ++counts_.trims;
  return absl::OkStatus();
}

bool WriteCache::Draw() {
  // 53 random bits as a double in [0, 1): the same on every standard
  // library, unlike std::bernoulli_distribution.
  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
  return u < options_.keep;
}

const WriteCache::Block* WriteCache::Survivor(
    const std::vector<Block>& versions, CutReport* report) {
  const uint64_t n = versions.size();
  if (options_.mode == CutMode::kDrop) {
    report->dropped += n;
    return nullptr;
  }
  if (options_.mode == CutMode::kSubset) {
    const bool kept = Draw();
    (kept ? report->kept : report->dropped) += n;
    return kept ? &versions.back() : nullptr;
  }
  const Block* last = nullptr;
  for (const Block& version : versions) {
    const bool kept = Draw();
    if (kept) last = &version;
    ++(kept ? report->kept : report->dropped);
  }
  return last;
}

absl::StatusOr<CutReport> WriteCache::Cut() {
  ++counts_.cuts;
  CutReport report;
  report.unflushed = unflushed();
  absl::Status status;
  for (const auto& [block, versions] : dirty_) {
    const Block* survivor = Survivor(versions, &report);
    if (survivor != nullptr && status.ok()) status = Persist(block, *survivor);
  }
  dirty_.clear();
  counts_.kept += report.kept;
  counts_.dropped += report.dropped;
  if (!status.ok()) return status;
  return report;
}

}  // namespace outbox::vm
