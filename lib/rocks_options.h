// Copyright (c) edge-outbox authors.
//
// The RocksDB options every outbox store is opened with, and why.

#ifndef OUTBOX_LIB_ROCKS_OPTIONS_H_
#define OUTBOX_LIB_ROCKS_OPTIONS_H_

#include <string>

#include "rocksdb/options.h"

namespace outbox {

rocksdb::DBOptions MakeDbOptions(rocksdb::Env* env);
rocksdb::ColumnFamilyOptions MakeFamilyOptions(const std::string& family);

}  // namespace outbox

#endif  // OUTBOX_LIB_ROCKS_OPTIONS_H_
