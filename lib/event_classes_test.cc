// Copyright (c) edge-outbox authors.
//
// EventClasses: which class a type falls in, and which class settings are
// refused (a fiscal class that could lose events above all).

#include "lib/event_classes.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

EventClass Class(std::string name, std::vector<std::string> types) {
  EventClass c;
  c.name = std::move(name);
  c.event_types = std::move(types);
  return c;
}

TEST(EventClassesTest, TheMostSpecificPatternWins) {
  auto classes = EventClasses::Make(
      {Class("all", {"*"}), Class("sales", {"sale.*"}),
       Class("refunds", {"sale.refund.*"}), Class("voids", {"sale.void"})});
  ASSERT_TRUE(classes.ok()) << classes.status();
  EXPECT_EQ(classes->Classify("sale.created"), 2);
  EXPECT_EQ(classes->Classify("sale.refund.full"), 3);
  EXPECT_EQ(classes->Classify("sale.void"), 4);
  EXPECT_EQ(classes->Classify("telemetry.temp"), 1);
  auto none = EventClasses::Make({Class("sales", {"sale.*"})});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->Classify("telemetry.temp"), EventClasses::kNone);
  EXPECT_EQ(none->Get(EventClasses::kNone), nullptr);
}

TEST(EventClassesTest, AFiscalClassThatCouldLoseEventsIsRefused) {
  EventClass fiscal = Class("fiscal", {"sale.*"});
  fiscal.fiscal = true;
  EXPECT_TRUE(EventClasses::Make({fiscal}).ok());
  EventClass evictable = fiscal;
  evictable.evictable = true;
  EventClass drops = evictable;
  drops.on_full = EventClass::OnFull::kDropOldest;
  drops.max_pending_events = 10;
  EventClass expires = evictable;
  expires.expire_after = absl::Hours(1);
  EventClass uncounted = fiscal;
  uncounted.keep_evicted = false;
  for (const EventClass& c : {evictable, drops, expires, uncounted}) {
    auto made = EventClasses::Make({c});
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(made.status().message(), HasSubstr("fiscal"));
  }
}

TEST(EventClassesTest, GivingEventsUpNeedsEvictable) {
  EventClass drops = Class("telemetry", {"telemetry.*"});
  drops.on_full = EventClass::OnFull::kDropOldest;
  drops.max_pending_events = 10;
  EXPECT_THAT(EventClasses::Make({drops}).status().message(),
              HasSubstr("evictable"));
  EventClass expires = Class("telemetry", {"telemetry.*"});
  expires.expire_after = absl::Hours(1);
  EXPECT_THAT(EventClasses::Make({expires}).status().message(),
              HasSubstr("evictable"));
  drops.evictable = true;
  EXPECT_TRUE(EventClasses::Make({drops}).ok());
  drops.max_pending_events = 0;
  EXPECT_THAT(EventClasses::Make({drops}).status().message(),
              HasSubstr("needs max_pending_events or max_pending_bytes"));
}

TEST(EventClassesTest, BadNamesPatternsAndPrioritiesAreRefused) {
  EXPECT_THAT(EventClasses::Make({Class("a b", {"x"})}).status().message(),
              HasSubstr("a name is"));
  EXPECT_THAT(EventClasses::Make({Class("a", {"x"}), Class("a", {"y"})})
                  .status()
                  .message(),
              HasSubstr("name used twice"));
  EXPECT_THAT(EventClasses::Make({Class("a", {"x"}), Class("b", {"x"})})
                  .status()
                  .message(),
              HasSubstr("already in another class"));
  EXPECT_THAT(EventClasses::Make({Class("a", {"x*"})}).status().message(),
              HasSubstr("not an event type pattern"));
  EXPECT_THAT(EventClasses::Make({Class("a", {})}).status().message(),
              HasSubstr("no event_types"));
  EventClass high = Class("a", {"x"});
  high.priority = 10;
  EXPECT_THAT(EventClasses::Make({high}).status().message(),
              HasSubstr("priority must be 0..9"));
}

}  // namespace
}  // namespace outbox
