// Copyright (c) edge-outbox authors.

#include "examples/pos_sim/pos_sim_flags.h"

#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox::pos_sim {
namespace {

std::vector<std::string> Base() {
  return {"--db", "d", "--config", "c", "--sales", "5"};
}

std::vector<std::string> With(std::vector<std::string> more) {
  std::vector<std::string> args = Base();
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(PosSimFlagsTest, SagaFlagsSetTheMix) {
  absl::StatusOr<PosSimFlags> f = ParsePosSimFlags(With(
      {"--saga", "per_step", "--decline-every", "6", "--refund-every", "8"}));
  ASSERT_OUTBOX_OK(f);
  EXPECT_EQ(f->mix.saga, SaleMix::Saga::kPerStep);
  EXPECT_EQ(f->mix.decline_every, 6);
  EXPECT_EQ(f->mix.refund_every, 8);
}

TEST(PosSimFlagsTest, WithoutSagaSalesArePlain) {
  absl::StatusOr<PosSimFlags> f = ParsePosSimFlags(Base());
  ASSERT_OUTBOX_OK(f);
  EXPECT_EQ(f->mix.saga, SaleMix::Saga::kNone);
  EXPECT_EQ(f->sales, 5);
}

TEST(PosSimFlagsTest, FsyncIsOnUnlessTurnedOff) {
  absl::StatusOr<PosSimFlags> on = ParsePosSimFlags(Base());
  ASSERT_OUTBOX_OK(on);
  EXPECT_TRUE(on->fsync);
  absl::StatusOr<PosSimFlags> off = ParsePosSimFlags(With({"--fsync", "off"}));
  ASSERT_OUTBOX_OK(off);
  EXPECT_FALSE(off->fsync);
  EXPECT_STATUS_CODE(ParsePosSimFlags(With({"--fsync", "no"})),
                     absl::StatusCode::kInvalidArgument);
}

TEST(PosSimFlagsTest, PrintAfterIsADurationUpToTenSeconds) {
  absl::StatusOr<PosSimFlags> none = ParsePosSimFlags(Base());
  ASSERT_OUTBOX_OK(none);
  EXPECT_EQ(none->print_after, absl::ZeroDuration());
  absl::StatusOr<PosSimFlags> f =
      ParsePosSimFlags(With({"--print-after", "200ms"}));
  ASSERT_OUTBOX_OK(f);
  EXPECT_EQ(f->print_after, absl::Milliseconds(200));
  for (const char* bad : {"200", "-1s", "11s"}) {
    EXPECT_STATUS_CODE(ParsePosSimFlags(With({"--print-after", bad})),
                       absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(PosSimFlagsTest, UnknownSagaModeIsRefused) {
  EXPECT_STATUS_CODE(ParsePosSimFlags(With({"--saga", "both"})),
                     absl::StatusCode::kInvalidArgument);
}

TEST(PosSimFlagsTest, DeclineWithoutSagaIsRefused) {
  EXPECT_STATUS_CODE(ParsePosSimFlags(With({"--decline-every", "3"})),
                     absl::StatusCode::kInvalidArgument);
}

TEST(PosSimFlagsTest, RefundEveryZeroIsRefused) {
  EXPECT_STATUS_CODE(
      ParsePosSimFlags(With({"--saga", "whole", "--refund-every", "0"})),
      absl::StatusCode::kInvalidArgument);
}

TEST(PosSimFlagsTest, MissingSalesIsRefused) {
  EXPECT_STATUS_CODE(ParsePosSimFlags({"--db", "d", "--config", "c"}),
                     absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace outbox::pos_sim
