// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_TESTS_TESTING_TEMP_DIR_H_
#define OUTBOX_TESTS_TESTING_TEMP_DIR_H_

#include <string>

namespace outbox::testing {

// A fresh directory under $TEST_TMPDIR (or /tmp), removed with everything in
// it when the object is destroyed. REQUIRES: External synchronization.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string Sub(const std::string& name) const;

 private:
  std::string path_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_TEMP_DIR_H_
