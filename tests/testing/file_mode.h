// Copyright (c) edge-outbox authors.
//
// File-mode helpers for tests of private directories and files.

#ifndef OUTBOX_TESTS_TESTING_FILE_MODE_H_
#define OUTBOX_TESTS_TESTING_FILE_MODE_H_

#include <sys/stat.h>

#include <string>

#include "gtest/gtest.h"

namespace outbox::testing {

// Sets the process's umask for one scope; restores it after. The umask is
// process-wide: use only in tests that start no threads creating files.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(umask(mask)) {}
  ~ScopedUmask() { umask(old_); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;

 private:
  const mode_t old_;
};

// The permission bits (mode & 07777) of `path`; a failed stat fails the test.
inline unsigned ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_FILE_MODE_H_
