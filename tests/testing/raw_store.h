// Copyright (c) edge-outbox authors.
//
// A store's RocksDB reached directly, as a bit flip, a buggy writer or a
// newer library would: for tests that damage stores or plant what a future
// version writes. Also the bytes of every file of a directory, to show that
// an open changed nothing. Only for tests that link RocksDB
// (outbox_internal).

#ifndef OUTBOX_TESTS_TESTING_RAW_STORE_H_
#define OUTBOX_TESTS_TESTING_RAW_STORE_H_

#include <dirent.h>

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace outbox::testing {

using RawFamilies = std::map<std::string, rocksdb::ColumnFamilyHandle*>;

// Opens the closed store at `path` with plain RocksDB (every column family)
// and lets `edit` change it; its writes should be synced by the caller's
// WriteOptions or flushed. Fails the test if RocksDB cannot open it.
inline void RawEdit(
    const std::string& path,
    const std::function<void(rocksdb::DB*, const RawFamilies&)>& edit) {
  std::vector<std::string> names;
  ASSERT_TRUE(
      rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& n : names) {
    descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions());
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(
      rocksdb::DB::Open(rocksdb::DBOptions(), path, descriptors, &handles, &raw)
          .ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  RawFamilies families;
  for (rocksdb::ColumnFamilyHandle* h : handles) families[h->GetName()] = h;
  edit(db.get(), families);
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
  }
  ASSERT_TRUE(db->Close().ok());
}

// Every file directly in `dir`, name -> whole content (stores under test
// are a few KiB to a few MiB).
inline std::map<std::string, std::string> FileContents(const std::string& dir) {
  std::map<std::string, std::string> files;
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), closedir);
  EXPECT_NE(d, nullptr) << dir;
  if (d == nullptr) return files;
  while (dirent* e = readdir(d.get())) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::ifstream in(dir + "/" + name, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    files[name] = bytes.str();
  }
  return files;
}

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_RAW_STORE_H_
