// Copyright (c) edge-outbox authors.

#include "tools/demo/display.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace outbox::demo {
namespace {

// What `write` printed through a Display on a memory stream.
template <typename Write>
std::string Captured(bool terminal, int columns, Write write) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  {
    Display display(out, terminal, columns);
    write(&display);
  }
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

TEST(FormatLiveLineTest, ShowsEachTillAndTheTotal) {
  const std::string line = FormatLiveLine(
      absl::Milliseconds(4200),
      {{"till-1", "online", 120, 280, 85}, {"till-2", "killed", 10, 30, 0}});
  EXPECT_EQ(line,
            "[   4.2s] till-1 online 120p/280d 85/s | "
            "till-2 killed 10p/30d 0/s | total 310d 85/s");
}

TEST(RateMeterTest, CountsOverTheWindow) {
  RateMeter meter(absl::Seconds(2));
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_EQ(meter.PerSecond(), 0);
  meter.Add(t0, 0);
  meter.Add(t0 + absl::Seconds(1), 100);
  EXPECT_DOUBLE_EQ(meter.PerSecond(), 100);
  meter.Add(t0 + absl::Seconds(3), 100);
  meter.Add(t0 + absl::Seconds(5), 100);
  EXPECT_DOUBLE_EQ(meter.PerSecond(), 0);  // nothing new in the last 2 s
}

TEST(DisplayTest, TerminalRewritesOneLineAndTruncatesToTheWidth) {
  const std::string out = Captured(true, 10, [](Display* d) {
    d->Live(absl::Now(), "first progress");
    d->Event(absl::Seconds(1), "event");
    d->Live(absl::Now(), "second");
    d->EndLive();
  });
  EXPECT_EQ(out,
            "\r\x1b[Kfirst pro"
            "\r\x1b[K[   1.0s] event\n\r\x1b[Kfirst pro"
            "\r\x1b[Ksecond\n");
}

TEST(DisplayTest, PlainOutputPrintsWholeLinesAtMostOncePerInterval) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  const std::string out = Captured(false, 10, [&](Display* d) {
    d->Live(t0, "a progress line");
    d->Live(t0 + absl::Milliseconds(500), "skipped");
    d->Event(absl::Seconds(2), "event");
    d->Live(t0 + absl::Seconds(1), "b");
    d->EndLive();
  });
  EXPECT_EQ(out, "a progress line\n[   2.0s] event\nb\n");
}

}  // namespace
}  // namespace outbox::demo
