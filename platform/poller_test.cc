// Copyright (c) edge-outbox authors.

#include "platform/poller.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

// Long enough never to expire on a loaded machine; a test that passes never
// waits it out.
constexpr absl::Duration kPatience = absl::Seconds(30);

bool Has(const std::vector<Poller::Ready>& ready, int fd, uint32_t event) {
  for (const Poller::Ready& r : ready) {
    if (r.fd == fd && (r.events & event) != 0) return true;
  }
  return false;
}

class PollerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto poller = Poller::Create();
    ASSERT_OUTBOX_OK(poller);
    poller_ = *std::move(poller);
    ASSERT_EQ(pipe2(pipe_, O_CLOEXEC | O_NONBLOCK), 0);
  }
  void TearDown() override {
    close(pipe_[0]);
    close(pipe_[1]);
  }

  std::vector<Poller::Ready> WaitFor(absl::Duration timeout) {
    std::vector<Poller::Ready> ready;
    EXPECT_OUTBOX_OK(poller_->Wait(timeout, &ready));
    return ready;
  }

  std::unique_ptr<Poller> poller_;
  int pipe_[2] = {-1, -1};
};

TEST_F(PollerTest, WatchedFdIsReportedOnceReadable) {
  ASSERT_OUTBOX_OK(poller_->Watch(pipe_[0], Poller::kReadable));
  EXPECT_TRUE(WaitFor(absl::ZeroDuration()).empty());
  ASSERT_EQ(write(pipe_[1], "x", 1), 1);
  EXPECT_TRUE(Has(WaitFor(kPatience), pipe_[0], Poller::kReadable));
}

TEST_F(PollerTest, WritableIsReportedWhenAskedFor) {
  ASSERT_OUTBOX_OK(poller_->Watch(pipe_[1], Poller::kWritable));
  EXPECT_TRUE(Has(WaitFor(kPatience), pipe_[1], Poller::kWritable));
}

TEST_F(PollerTest, WatchAgainReplacesTheEvents) {
  ASSERT_OUTBOX_OK(poller_->Watch(pipe_[1], Poller::kWritable));
  ASSERT_OUTBOX_OK(poller_->Watch(pipe_[1], Poller::kReadable));
  EXPECT_TRUE(WaitFor(absl::ZeroDuration()).empty());
}

TEST_F(PollerTest, ForgottenFdIsNotReported) {
  ASSERT_OUTBOX_OK(poller_->Watch(pipe_[0], Poller::kReadable));
  ASSERT_EQ(write(pipe_[1], "x", 1), 1);
  poller_->Forget(pipe_[0]);
  EXPECT_TRUE(WaitFor(absl::ZeroDuration()).empty());
}

TEST_F(PollerTest, AForgottenFdWatchedAgainIsReported) {
  ASSERT_OUTBOX_OK(poller_->Watch(pipe_[0], Poller::kReadable));
  poller_->Forget(pipe_[0]);
  ASSERT_OUTBOX_OK(poller_->Watch(pipe_[0], Poller::kReadable));
  ASSERT_EQ(write(pipe_[1], "x", 1), 1);
  EXPECT_TRUE(Has(WaitFor(kPatience), pipe_[0], Poller::kReadable));
}

// A watched fd closed without Forget() leaves the epoll set; a new file
// that gets its number and is watched is added, not lost.
TEST_F(PollerTest, ARecycledNumberOfAnUnforgottenFdIsWatched) {
  ASSERT_OUTBOX_OK(poller_->Watch(pipe_[0], Poller::kReadable));
  int fresh[2];
  ASSERT_EQ(pipe2(fresh, O_CLOEXEC), 0);
  ASSERT_EQ(dup3(fresh[0], pipe_[0], O_CLOEXEC), pipe_[0]);  // closes the old
  close(fresh[0]);
  ASSERT_OUTBOX_OK(poller_->Watch(pipe_[0], Poller::kReadable));
  ASSERT_EQ(write(fresh[1], "x", 1), 1);
  EXPECT_TRUE(Has(WaitFor(kPatience), pipe_[0], Poller::kReadable));
  close(fresh[1]);
}

TEST_F(PollerTest, HangUpIsReportedAsError) {
  ASSERT_OUTBOX_OK(poller_->Watch(pipe_[0], Poller::kReadable));
  close(pipe_[1]);
  pipe_[1] = -1;
  EXPECT_TRUE(Has(WaitFor(kPatience), pipe_[0], Poller::kError));
}

TEST_F(PollerTest, RegularFileCannotBeWatched) {
  testing::TempDir dir;
  const int fd = open(dir.Sub("f").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  // epoll refuses regular files with EPERM: they are always ready.
  EXPECT_STATUS_CODE(poller_->Watch(fd, Poller::kReadable),
                     absl::StatusCode::kPermissionDenied);
  close(fd);
}

TEST_F(PollerTest, WakeupFromAnotherThreadEndsAWait) {
  auto wakeup = Wakeup::Create();
  ASSERT_OUTBOX_OK(wakeup);
  ASSERT_OUTBOX_OK(poller_->Watch((*wakeup)->fd(), Poller::kReadable));
  std::thread signaller([&] {
    absl::SleepFor(absl::Milliseconds(20));  // likely asleep in Wait by now
    (*wakeup)->Signal();
  });
  const std::vector<Poller::Ready> ready = WaitFor(kPatience);
  signaller.join();
  EXPECT_TRUE(Has(ready, (*wakeup)->fd(), Poller::kReadable));
}

Wakeup* g_wakeup = nullptr;
void SignalWakeup(int) { g_wakeup->Signal(); }

TEST_F(PollerTest, WakeupCanBeSignalledFromASignalHandler) {
  auto wakeup = Wakeup::Create();
  ASSERT_OUTBOX_OK(wakeup);
  ASSERT_OUTBOX_OK(poller_->Watch((*wakeup)->fd(), Poller::kReadable));
  g_wakeup = wakeup->get();
  struct sigaction action = {};
  struct sigaction previous = {};
  action.sa_handler = &SignalWakeup;
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);
  raise(SIGUSR1);
  ASSERT_EQ(sigaction(SIGUSR1, &previous, nullptr), 0);
  EXPECT_TRUE(Has(WaitFor(kPatience), (*wakeup)->fd(), Poller::kReadable));
}

TEST_F(PollerTest, ClearedWakeupIsNoLongerReady) {
  auto wakeup = Wakeup::Create();
  ASSERT_OUTBOX_OK(wakeup);
  ASSERT_OUTBOX_OK(poller_->Watch((*wakeup)->fd(), Poller::kReadable));
  EXPECT_FALSE((*wakeup)->Clear());
  (*wakeup)->Signal();
  (*wakeup)->Signal();  // merges with the first
  EXPECT_TRUE((*wakeup)->Clear());
  EXPECT_FALSE((*wakeup)->Clear());
  EXPECT_TRUE(WaitFor(absl::ZeroDuration()).empty());
}

class TimerTest : public PollerTest {
 protected:
  void SetUp() override {
    PollerTest::SetUp();
    auto timer = Timer::Create();
    ASSERT_OUTBOX_OK(timer);
    timer_ = *std::move(timer);
    ASSERT_OUTBOX_OK(poller_->Watch(timer_->fd(), Poller::kReadable));
  }

  std::unique_ptr<Timer> timer_;
};

TEST_F(TimerTest, ArmedTimerFiresAndClearConsumesIt) {
  EXPECT_TRUE(WaitFor(absl::ZeroDuration()).empty());
  ASSERT_OUTBOX_OK(timer_->Arm(absl::Milliseconds(1)));
  EXPECT_TRUE(Has(WaitFor(kPatience), timer_->fd(), Poller::kReadable));
  EXPECT_TRUE(timer_->Clear());
  EXPECT_FALSE(timer_->Clear());
  EXPECT_TRUE(WaitFor(absl::ZeroDuration()).empty());
}

TEST_F(TimerTest, ZeroDelayStillFires) {
  ASSERT_OUTBOX_OK(timer_->Arm(absl::ZeroDuration()));
  EXPECT_TRUE(Has(WaitFor(kPatience), timer_->fd(), Poller::kReadable));
}

TEST_F(TimerTest, ArmReplacesAnEarlierArm) {
  ASSERT_OUTBOX_OK(timer_->Arm(absl::Hours(1)));
  ASSERT_OUTBOX_OK(timer_->Arm(absl::Milliseconds(1)));
  EXPECT_TRUE(Has(WaitFor(kPatience), timer_->fd(), Poller::kReadable));
}

TEST_F(TimerTest, DisarmedTimerDoesNotFire) {
  ASSERT_OUTBOX_OK(timer_->Arm(absl::Milliseconds(1)));
  ASSERT_OUTBOX_OK(timer_->Disarm());
  // Had it stayed armed, it would have fired 99 ms before this wait ends
  // (and an expiry before Disarm() is dropped with it).
  EXPECT_TRUE(WaitFor(absl::Milliseconds(100)).empty());
  EXPECT_FALSE(timer_->Clear());
}

TEST_F(TimerTest, InfiniteDelayIsRefused) {
  EXPECT_STATUS_CODE(timer_->Arm(absl::InfiniteDuration()),
                     absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace outbox
