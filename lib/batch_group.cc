// Copyright (c) edge-outbox authors.

#include "lib/batch_group.h"

#include <cstring>
#include <utility>

namespace outbox {
namespace {

constexpr size_t kHeader = 12;  // fixed64 sequence, fixed32 count

void PutFixed32(uint32_t v, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

void BatchGroup::Add(const rocksdb::WriteBatch& batch) {
  const std::string& data = batch.Data();
  if (data.size() <= kHeader) return;
  rep_.append(data, kHeader, std::string::npos);
  count_ += batch.Count();
}

rocksdb::WriteBatch BatchGroup::Take() {
  PutFixed32(count_, &rep_[8]);
  rocksdb::WriteBatch batch(rep_);
  Clear();
  return batch;
}

void BatchGroup::Clear() {
  rep_.assign(kHeader, '\0');
  count_ = 0;
}

}  // namespace outbox
