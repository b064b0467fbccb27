// Copyright (c) edge-outbox authors.
//
// Heap bytes the in-memory queue index (lib/queue_index.h) holds per pending
// event, measured with mallinfo2() around building it. Prints figures; passes
// unless the index loses events. Label: bench.

#include <malloc.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/queue_index.h"

namespace outbox {
namespace {

// Heap in use: small blocks (uordblks) plus mmap'ed large ones (hblkhd).
size_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// Builds an index of `n` events, `keys` ordering keys (0: unkeyed), all of
// `classes`' "sale.created" class (nullptr: none), and returns heap bytes
// per event.
double BytesPerEvent(int n, int keys, const EventClasses* classes = nullptr) {
  const size_t before = HeapInUse();
  auto* index = new QueueIndex(classes);
  const uint32_t lane = index->LaneOf("", "sale.created");
  for (int i = 0; i < n; ++i) {
    const std::string key = keys > 0 ? absl::StrCat("till-", i % keys) : "";
    index->Add(static_cast<uint64_t>(i), key, lane, 1767225600000 + i, 100);
  }
  const size_t after = HeapInUse();
  EXPECT_EQ(index->ready_count(), static_cast<size_t>(keys > 0 ? keys : n));
  delete index;
  return static_cast<double>(after - before) / n;
}

TEST(QueueIndexMemoryBench, BytesPerPendingEvent) {
  constexpr int kEvents = 1000000;
  const double unkeyed = BytesPerEvent(kEvents, 0);
  const double few_keys = BytesPerEvent(kEvents, 16);
  const double key_each = BytesPerEvent(kEvents, kEvents);
  // A class that may evict or expire keeps its seqs in order besides.
  EventClass telemetry;
  telemetry.name = "telemetry";
  telemetry.event_types = {"sale.created"};
  telemetry.evictable = true;
  telemetry.expire_after = absl::Hours(6);
  absl::StatusOr<EventClasses> classes = EventClasses::Make({telemetry});
  ASSERT_TRUE(classes.ok()) << classes.status();
  const double ordered_class = BytesPerEvent(kEvents, 0, &*classes);
  std::printf(
      "queue index heap per pending event (%d events):\n"
      "  no ordering key:            %6.1f bytes\n"
      "  16 ordering keys:           %6.1f bytes\n"
      "  one ordering key per event: %6.1f bytes\n"
      "  no key, class that expires: %6.1f bytes (%.1fx no key)\n",
      kEvents, unkeyed, few_keys, key_each, ordered_class,
      ordered_class / unkeyed);
}

}  // namespace
}  // namespace outbox
