// Copyright (c) edge-outbox authors.

#include "lib/event_id.h"

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace outbox {
namespace {

class Generator {
 public:
  std::string Next(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_) {
    int64_t ms = absl::ToUnixMillis(now);
    if (ms < 0) ms = 0;
    uint64_t rand_b;
    uint16_t counter;
    {
      absl::MutexLock l(&mu_);
      // A clock that steps backwards (NTP on a device that booted with a
      // wrong time) must not make ids go backwards: keep the last time.
      if (ms <= last_ms_) {
        ms = last_ms_;
        if (++counter_ > 0xfff) {  // counter exhausted: borrow the next ms
          ++ms;
          counter_ = 0;
        }
      } else {
        // Start each millisecond at a random point in the lower half so the
        // counter has room to grow.
        counter_ = absl::Uniform<uint16_t>(bitgen_, 0, 0x800);
      }
      last_ms_ = ms;
      counter = counter_;
      rand_b = absl::Uniform<uint64_t>(bitgen_);
    }
    const uint64_t high = (static_cast<uint64_t>(ms) << 16) | 0x7000 | counter;
    const uint64_t low =
        (rand_b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
    return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", high >> 32,
                           (high >> 16) & 0xffff, high & 0xffff, low >> 48,
                           low & 0xffffffffffffULL);
  }

 private:
  absl::Mutex mu_;
  int64_t last_ms_ ABSL_GUARDED_BY(mu_) = -1;
  uint16_t counter_ ABSL_GUARDED_BY(mu_) = 0;
  absl::BitGen bitgen_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::string NewEventId(absl::Time now) {
  static Generator* const generator = new Generator();
  return generator->Next(now);
}

}  // namespace outbox
