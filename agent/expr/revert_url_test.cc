// Copyright (c) edge-outbox authors.

#include "agent/expr/revert_url.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox::workflow {
namespace {

constexpr char kInventory[] = "https://inv.example:8443/api/inventory/reserve";

std::string Resolved(const char* url, bool other_origin = false) {
  absl::StatusOr<std::string> out =
      ResolveRevertUrl(url, kInventory, other_origin);
  EXPECT_OUTBOX_OK(out) << url;
  return out.ok() ? *out : "";
}

TEST(RevertUrlTest, APathGoesToTheDestinationsOrigin) {
  EXPECT_EQ(Resolved("/api/inventory/{id}/release"),
            "https://inv.example:8443/api/inventory/{id}/release");
}

TEST(RevertUrlTest, ARelativePathReplacesTheLastSegment) {
  EXPECT_EQ(Resolved("{{response:reserve:/id}}/release"),
            "https://inv.example:8443/api/inventory/"
            "{{response:reserve:/id}}/release");
  absl::StatusOr<std::string> out =
      ResolveRevertUrl("cancel", "http://h.example?x=1#f", false);
  ASSERT_OUTBOX_OK(out);
  EXPECT_EQ(*out, "http://h.example/cancel");
}

TEST(RevertUrlTest, AnAbsoluteUrlAtTheSameOriginIsKept) {
  EXPECT_EQ(Resolved("HTTPS://INV.example:8443/x/{id}"),
            "HTTPS://INV.example:8443/x/{id}");
  absl::StatusOr<std::string> out = ResolveRevertUrl(
      "http://h.example:80/undo", "http://h.example/api", false);
  EXPECT_OUTBOX_OK(out);
}

TEST(RevertUrlTest, AnotherOriginNeedsOtherOrigin) {
  for (const char* url :
       {"https://evil.example/api/x", "http://inv.example:8443/x",
        "https://inv.example/x", "https://inv.example:8443.evil.example/x"}) {
    EXPECT_STATUS_CODE(ResolveRevertUrl(url, kInventory, false),
                       absl::StatusCode::kInvalidArgument)
        << url;
  }
  EXPECT_EQ(Resolved("https://refunds.example/r", true),
            "https://refunds.example/r");
}

TEST(RevertUrlTest, TheOriginIsNeverAPlaceholder) {
  EXPECT_STATUS_CODE(
      ResolveRevertUrl("https://{{response:a:/host}}/x", kInventory, true),
      absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(
      ResolveRevertUrl("https://inv.example:{port}/x", kInventory, true),
      absl::StatusCode::kInvalidArgument);
}

TEST(RevertUrlTest, RefusesUserinfoAndBackslashesThatCouldHideAHost) {
  for (const char* url :
       {"https://evil.example\\@inv.example:8443/x",
        "https://u:p@inv.example:8443/x", "https://inv.example:8443 /x"}) {
    EXPECT_STATUS_CODE(ResolveRevertUrl(url, kInventory, true),
                       absl::StatusCode::kInvalidArgument)
        << url;
  }
}

TEST(RevertUrlTest, ADestinationsOwnUserinfoIsNotItsOrigin) {
  absl::StatusOr<std::string> out = ResolveRevertUrl(
      "https://inv.example/undo", "https://u:p@inv.example/api", false);
  ASSERT_OUTBOX_OK(out);
  EXPECT_EQ(*out, "https://inv.example/undo");
}

TEST(RevertUrlTest, RefusesOtherSchemesAndOtherOriginOnAPath) {
  for (const char* url :
       {"ftp://inv.example/x", "//evil.example/x", "javascript:alert(1)"}) {
    EXPECT_STATUS_CODE(ResolveRevertUrl(url, kInventory, false),
                       absl::StatusCode::kInvalidArgument)
        << url;
  }
  EXPECT_STATUS_CODE(ResolveRevertUrl("/x", kInventory, true),
                     absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace outbox::workflow
