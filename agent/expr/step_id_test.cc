// Copyright (c) edge-outbox authors.

#include "agent/expr/step_id.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace outbox::workflow {
namespace {

constexpr char kEvent[] = "018e0b7c-5f3a-7cc2-9d1e-3b5a2f4c6d7e";

TEST(Uuid5Test, MatchesTheRfcExample) {
  // RFC 9562 appendix A.4: the DNS namespace and "www.example.com".
  EXPECT_EQ(Uuid5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com"),
            "2ed6657d-e927-568b-95e1-2665a8aea6a2");
}

TEST(StepRequestIdTest, IsTheDocumentedUuid5) {
  // Computed independently with Python's uuid.uuid5(kStepIdNamespace, name).
  EXPECT_EQ(StepRequestId(kEvent, "reserve", /*revert=*/false),
            "73436732-da33-5e4c-b7ad-91420fe52e3f");
  EXPECT_EQ(StepRequestId(kEvent, "reserve", /*revert=*/true),
            "13e2dc26-998a-52a4-855d-973a99aa7dcb");
}

TEST(StepRequestIdTest, IsStableAcrossCalls) {
  EXPECT_EQ(StepRequestId(kEvent, "billing", false),
            StepRequestId(std::string(kEvent), std::string("billing"), false));
}

TEST(StepRequestIdTest, DiffersPerStepPerRevertAndPerEvent) {
  std::set<std::string> ids;
  const char* events[] = {kEvent, "018e0b7c-5f3a-7cc2-9d1e-3b5a2f4c6d7f"};
  const char* steps[] = {"inventory", "fraudCheck", "shipping", "billing"};
  for (const char* event : events) {
    for (const char* step : steps) {
      ids.insert(StepRequestId(event, step, false));
      ids.insert(StepRequestId(event, step, true));
    }
  }
  EXPECT_EQ(ids.size(), 2u * 4u * 2u);
  EXPECT_EQ(ids.count(kEvent), 0u);
}

TEST(StepRequestIdTest, IsAVersion5VariantRfcUuid) {
  const std::string id = StepRequestId(kEvent, "shipping", false);
  ASSERT_EQ(id.size(), 36u);
  EXPECT_EQ(id[8], '-');
  EXPECT_EQ(id[13], '-');
  EXPECT_EQ(id[18], '-');
  EXPECT_EQ(id[23], '-');
  EXPECT_EQ(id[14], '5');
  EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << id;
}

}  // namespace
}  // namespace outbox::workflow
