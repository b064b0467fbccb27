// Copyright (c) edge-outbox authors.

#include "webhooks/signature.h"

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox {
namespace {

// The spec's published test vector.
constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr char kId[] = "msg_p5jXN8AQM9LWM0D4loKWxJek";
constexpr int64_t kTimestamp = 1614265330;
constexpr char kBody[] = R"({"test": 2432232314})";
constexpr char kExpected[] = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
// A second, unrelated key for rotation and wrong-secret cases.
constexpr char kOtherSecret[] =
    "whsec_c2Vjb25kLXNlY3JldC1mb3ItdGVzdHMtb25seQ==";

WebhookSecret MustParse(const char* text) {
  absl::StatusOr<WebhookSecret> secret = ParseWebhookSecret(text);
  EXPECT_TRUE(secret.ok()) << secret.status();
  return secret.ok() ? *secret : WebhookSecret("unused");
}

TEST(WebhookSignatureTest, MatchesSpecTestVector) {
  EXPECT_EQ(Sign(MustParse(kSecret), kId, kTimestamp, kBody), kExpected);
}

TEST(WebhookSignatureTest, VerifiesSpecTestVector) {
  std::vector<WebhookSecret> secrets = {MustParse(kSecret)};
  EXPECT_TRUE(VerifySignature(secrets, kId, kTimestamp, kBody, kExpected));
}

TEST(WebhookSignatureTest, WrongSecretFailsVerification) {
  std::vector<WebhookSecret> secrets = {MustParse(kOtherSecret)};
  EXPECT_FALSE(VerifySignature(secrets, kId, kTimestamp, kBody, kExpected));
}

TEST(WebhookSignatureTest, AnyChangeToSignedContentFailsVerification) {
  std::vector<WebhookSecret> secrets = {MustParse(kSecret)};
  EXPECT_FALSE(
      VerifySignature(secrets, "msg_other", kTimestamp, kBody, kExpected));
  EXPECT_FALSE(VerifySignature(secrets, kId, kTimestamp + 1, kBody, kExpected));
  EXPECT_FALSE(VerifySignature(secrets, kId, kTimestamp,
                               R"({"test":2432232314})", kExpected));
}

TEST(WebhookSignatureTest, RotationEmitsOneSignaturePerSecret) {
  std::vector<WebhookSecret> secrets = {MustParse(kSecret),
                                        MustParse(kOtherSecret)};
  const std::string header = SignatureHeader(secrets, kId, kTimestamp, kBody);
  std::vector<std::string> entries = absl::StrSplit(header, ' ');
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0], kExpected);
  EXPECT_EQ(entries[1], Sign(secrets[1], kId, kTimestamp, kBody));
  EXPECT_NE(entries[0], entries[1]);
}

TEST(WebhookSignatureTest, RotatedHeaderVerifiesWithEitherSecretAlone) {
  std::vector<WebhookSecret> both = {MustParse(kSecret),
                                     MustParse(kOtherSecret)};
  const std::string header = SignatureHeader(both, kId, kTimestamp, kBody);
  std::vector<WebhookSecret> old_only = {both[0]};
  std::vector<WebhookSecret> new_only = {both[1]};
  EXPECT_TRUE(VerifySignature(old_only, kId, kTimestamp, kBody, header));
  EXPECT_TRUE(VerifySignature(new_only, kId, kTimestamp, kBody, header));
}

TEST(WebhookSignatureTest, ReceiverWithTwoSecretsAcceptsSingleSignature) {
  std::vector<WebhookSecret> receiver = {MustParse(kOtherSecret),
                                         MustParse(kSecret)};
  EXPECT_TRUE(VerifySignature(receiver, kId, kTimestamp, kBody, kExpected));
}

TEST(WebhookSignatureTest, SkipsUnknownVersionsAndExtraWhitespace) {
  std::vector<WebhookSecret> secrets = {MustParse(kSecret)};
  const std::string header =
      std::string("  v1a,AAAA  v2,xyz\t") + kExpected + "  ,, v1, v1,!!! ";
  EXPECT_TRUE(VerifySignature(secrets, kId, kTimestamp, kBody, header));
}

TEST(WebhookSignatureTest, MalformedHeadersNeverVerify) {
  std::vector<WebhookSecret> secrets = {MustParse(kSecret)};
  const std::string mac = std::string(kExpected).substr(3);
  for (const std::string& header :
       {std::string(""), std::string(" "), mac, "v1a," + mac, "V1," + mac,
        "v1;" + mac, "v1," + mac.substr(0, 20), std::string("v1,,"),
        std::string(1, '\0'), std::string(10000, ','),
        std::string("v1,") + std::string(4096, 'A')}) {
    EXPECT_FALSE(VerifySignature(secrets, kId, kTimestamp, kBody, header))
        << header;
  }
}

TEST(WebhookSignatureTest, NoSecretsNeverVerify) {
  EXPECT_FALSE(VerifySignature({}, kId, kTimestamp, kBody, kExpected));
  EXPECT_EQ(SignatureHeader({}, kId, kTimestamp, kBody), "");
}

TEST(ParseWebhookSecretTest, RejectsMissingPrefix) {
  EXPECT_STATUS_CODE(ParseWebhookSecret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
                     absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(ParseWebhookSecret("WHSEC_MfKQ9r8GKYqrTwjU"),
                     absl::StatusCode::kInvalidArgument);
  EXPECT_STATUS_CODE(ParseWebhookSecret(""),
                     absl::StatusCode::kInvalidArgument);
}

TEST(ParseWebhookSecretTest, RejectsBadBase64AndEmptyKey) {
  for (const char* text : {"whsec_", "whsec_!!!!", "whsec_YQ=", "whsec_Y",
                           "whsec_a-b_", "whsec_ YQ==", "whsec_YQ==YQ=="}) {
    EXPECT_STATUS_CODE(ParseWebhookSecret(text),
                       absl::StatusCode::kInvalidArgument)
        << text;
  }
}

TEST(ParseWebhookSecretTest, ErrorMessageDoesNotContainTheSecret) {
  const std::string secret_part = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  for (const std::string& text :
       {secret_part, "whsec_" + secret_part + "!", "whsex_" + secret_part}) {
    absl::StatusOr<WebhookSecret> parsed = ParseWebhookSecret(text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().message().find(secret_part.substr(0, 8)),
              absl::string_view::npos)
        << parsed.status();
  }
}

TEST(ParseWebhookSecretTest, AcceptsUnpaddedBase64) {
  absl::StatusOr<WebhookSecret> padded = ParseWebhookSecret("whsec_YWJjZA==");
  absl::StatusOr<WebhookSecret> unpadded = ParseWebhookSecret("whsec_YWJjZA");
  ASSERT_OUTBOX_OK(padded);
  ASSERT_OUTBOX_OK(unpadded);
  EXPECT_EQ(padded->key(), "abcd");
  EXPECT_EQ(unpadded->key(), "abcd");
}

TEST(ParseSecretsTextTest, ReadsEverySecretSkippingCommentsAndBlanks) {
  absl::StatusOr<std::vector<WebhookSecret>> secrets = ParseSecretsText(
      absl::StrCat("# rotation\n\n  ", kSecret, "  \r\n", kOtherSecret));
  ASSERT_OUTBOX_OK(secrets);
  ASSERT_EQ(secrets->size(), 2u);
  EXPECT_EQ((*secrets)[0].key(), MustParse(kSecret).key());
  EXPECT_EQ((*secrets)[1].key(), MustParse(kOtherSecret).key());
}

TEST(ParseSecretsTextTest, MalformedLineIsNamedByNumberNotQuoted) {
  absl::StatusOr<std::vector<WebhookSecret>> secrets =
      ParseSecretsText(absl::StrCat(kSecret, "\nwhsec_c2VjcmV0!!\n"));
  ASSERT_STATUS_CODE(secrets, absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(secrets.status().message(), "line 2: "))
      << secrets.status();
  EXPECT_FALSE(absl::StrContains(secrets.status().message(), "c2VjcmV0"));
}

TEST(ParseSecretsTextTest, TextWithoutASecretIsAnError) {
  for (const char* text : {"", "# none yet\n", "\n  \n"}) {
    EXPECT_STATUS_CODE(ParseSecretsText(text),
                       absl::StatusCode::kInvalidArgument)
        << text;
  }
}

class ReadSecretsFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& content, mode_t mode) {
    const std::string path = dir_.Sub("s.whsec");
    std::ofstream(path) << content;
    EXPECT_EQ(chmod(path.c_str(), mode), 0);
    return path;
  }

  testing::TempDir dir_;
};

TEST_F(ReadSecretsFileTest, ReadsAPrivateFile) {
  absl::StatusOr<std::vector<WebhookSecret>> secrets =
      ReadSecretsFile(Write(absl::StrCat(kSecret, "\n"), 0600));
  ASSERT_OUTBOX_OK(secrets);
  EXPECT_EQ(secrets->size(), 1u);
}

TEST_F(ReadSecretsFileTest, FileOthersCanReadIsRefused) {
  EXPECT_STATUS_CODE(ReadSecretsFile(Write(kSecret, 0644)),
                     absl::StatusCode::kFailedPrecondition);
}

TEST_F(ReadSecretsFileTest, MissingFileIsNotFound) {
  EXPECT_STATUS_CODE(ReadSecretsFile(dir_.Sub("none")),
                     absl::StatusCode::kNotFound);
}

TEST_F(ReadSecretsFileTest, ErrorsNameTheFileAndTheLine) {
  const std::string path = Write(absl::StrCat(kSecret, "\nwhsec_!\n"), 0600);
  absl::StatusOr<std::vector<WebhookSecret>> secrets = ReadSecretsFile(path);
  ASSERT_STATUS_CODE(secrets, absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(secrets.status().message(),
                               "secrets file " + path + " line 2: "))
      << secrets.status();
}

TEST(TimestampToleranceTest, AcceptsWithinWindowInEitherDirection) {
  const absl::Time now = absl::FromUnixSeconds(kTimestamp);
  EXPECT_TRUE(TimestampWithinTolerance(kTimestamp, now, absl::Minutes(5)));
  EXPECT_TRUE(
      TimestampWithinTolerance(kTimestamp - 300, now, absl::Minutes(5)));
  EXPECT_TRUE(
      TimestampWithinTolerance(kTimestamp + 300, now, absl::Minutes(5)));
}

TEST(TimestampToleranceTest, RejectsOutsideWindowAndExtremes) {
  const absl::Time now = absl::FromUnixSeconds(kTimestamp);
  EXPECT_FALSE(
      TimestampWithinTolerance(kTimestamp - 301, now, absl::Minutes(5)));
  EXPECT_FALSE(
      TimestampWithinTolerance(kTimestamp + 301, now, absl::Minutes(5)));
  EXPECT_FALSE(TimestampWithinTolerance(INT64_MIN, now, absl::Minutes(5)));
  EXPECT_FALSE(TimestampWithinTolerance(INT64_MAX, now, absl::Minutes(5)));
  EXPECT_FALSE(TimestampWithinTolerance(kTimestamp, now, -absl::Seconds(1)));
}

}  // namespace
}  // namespace outbox
