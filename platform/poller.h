// Copyright (c) edge-outbox authors.
//
// The event loop's OS primitives, shared by the agent (agent/agent_impl.cc)
// and the curl transport (platform/curl_transport.cc):
//   Poller  an epoll set: one fd that is readable when any member is ready,
//           so a caller (or firmware's own main loop) watches a single fd;
//   Wakeup  an eventfd that any thread, or a signal handler, can make
//           readable to interrupt a Poller::Wait;
//   Timer   a one-shot timerfd on CLOCK_MONOTONIC (wall-clock jumps do not
//           move it), readable once it fires.
// Each owns its descriptor (close-on-exec, non-blocking) and closes it when
// destroyed. Members are watched level-triggered: what Wait() leaves unread
// stays ready for the next call.

#ifndef OUTBOX_PLATFORM_POLLER_H_
#define OUTBOX_PLATFORM_POLLER_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/scoped_fd.h"

namespace outbox {

// REQUIRES: External synchronization. Meant for one event-loop thread.
class Poller {
 public:
  // What a member is watched for (kReadable, kWritable) and what Wait()
  // reports; kError (an error or hang-up) is reported whether asked or not.
  enum Event : uint32_t {
    kReadable = 1u << 0,
    kWritable = 1u << 1,
    kError = 1u << 2,
  };
  struct Ready {
    int fd;
    uint32_t events;  // Event bits
  };

  // Errors: PosixError codes of epoll_create1, e.g. kResourceExhausted when
  // the process is out of descriptors.
  static absl::StatusOr<std::unique_ptr<Poller>> Create();

  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

  // Readable while any member is ready. Valid for the life of the poller;
  // the caller may poll it but must not read or close it.
  int fd() const { return epoll_.get(); }

  // Watches `fd` for `events`, replacing what it was watched for before.
  // REQUIRES: `fd` stays open while watched, or is Forget()-ed first (a
  // closed descriptor leaves the set by itself).
  // Errors: PosixError codes of epoll_ctl (kResourceExhausted: the user's
  // epoll watch limit; kFailedPrecondition/kInvalidArgument: not pollable).
  absl::Status Watch(int fd, uint32_t events);

  // Stops watching `fd`. Harmless if it is not watched or already closed.
  void Forget(int fd);

  // Waits until a member is ready or `timeout` has passed (zero: only
  // looks; absl::InfiniteDuration(): no limit; longer than a day: a day, so
  // the caller looks at its clock at least daily), then replaces `*ready`
  // with the ready members, at most 16 (the rest stay ready). A signal that
  // interrupts the wait returns OK with nothing ready.
  // Errors: PosixError codes of epoll_wait (none occur on a valid set).
  absl::Status Wait(absl::Duration timeout, std::vector<Ready>* ready);

 private:
  explicit Poller(ScopedFd epoll) : epoll_(std::move(epoll)) {}

  ScopedFd epoll_;
  // The fds watched and not forgotten since (some may have been closed,
  // which took them out of the epoll set).
  absl::flat_hash_set<int> members_;
};

// Safe for concurrent use: Signal() may be called from any thread and from
// a signal handler (it is one write(2), which is async-signal-safe), at the
// same time as Clear(). REQUIRES: the Wakeup outlives every Signal() call.
class Wakeup {
 public:
  // Errors: PosixError codes of eventfd.
  static absl::StatusOr<std::unique_ptr<Wakeup>> Create();

  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  // Readable from the first Signal() until Clear(). Watch it in a Poller;
  // do not read or close it.
  int fd() const { return eventfd_.get(); }

  // Makes fd() readable. Signals before a Clear() merge into one.
  void Signal() const;

  // Consumes the pending signals; true if there were any.
  bool Clear();

 private:
  explicit Wakeup(ScopedFd eventfd) : eventfd_(std::move(eventfd)) {}

  ScopedFd eventfd_;
};

// REQUIRES: External synchronization.
class Timer {
 public:
  // Errors: PosixError codes of timerfd_create.
  static absl::StatusOr<std::unique_ptr<Timer>> Create();

  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Readable from the moment the timer fires until Clear(). Watch it in a
  // Poller; do not read or close it.
  int fd() const { return timerfd_.get(); }

  // Arm() and Disarm() both drop an expiry not yet Clear()-ed (the kernel
  // resets the count), so afterwards fd() turns readable only when the new
  // arming fires.

  // Fires once, `delay` from now, replacing any earlier Arm(). A delay of
  // zero or less fires as soon as possible (it still fires: timerfd reads
  // an all-zero time as "disarm"). Errors: kInvalidArgument if `delay` is
  // infinite (use Disarm()); PosixError codes of timerfd_settime (none occur
  // on a valid timer).
  absl::Status Arm(absl::Duration delay);

  // Cancels the timer. Errors: PosixError codes of timerfd_settime (none occur
  // on a valid timer).
  absl::Status Disarm();

  // Consumes an expiry; true if the timer had fired since the last Clear().
  bool Clear();

 private:
  explicit Timer(ScopedFd timerfd) : timerfd_(std::move(timerfd)) {}

  ScopedFd timerfd_;
};

}  // namespace outbox

#endif  // OUTBOX_PLATFORM_POLLER_H_
