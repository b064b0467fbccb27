// Copyright (c) edge-outbox authors.
//
// Small helpers for tests that drive the real binaries and read what they
// wrote: whole files, private files, counts of a phrase, bounded waits.

#ifndef OUTBOX_TESTS_TESTING_TEXT_FILES_H_
#define OUTBOX_TESTS_TESTING_TEXT_FILES_H_

#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace outbox::testing {

// The whole file at `path`; empty if it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Writes `content` and a newline to `path`, private to its owner (chmod 600),
// as the agent requires of secrets and credential files.
inline void WritePrivate(const std::string& path, const std::string& content) {
  std::ofstream(path) << content << "\n";
  chmod(path.c_str(), 0600);
}

// How many times `what` occurs in `text` (overlaps counted).
inline size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// Polls `done` every 20 ms; false if it is still false after a minute. The
// bound only catches hangs: nothing asserts on how fast.
inline bool WaitUntil(const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_TEXT_FILES_H_
