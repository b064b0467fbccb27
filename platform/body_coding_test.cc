// Copyright (c) edge-outbox authors.

#include "platform/body_coding.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace outbox {
namespace {

// Lines like a batch of the demo's sales (agent/send/batch_request.h).
std::string Sales(int n) {
  std::string body;
  for (int i = 0; i < n; ++i) {
    absl::StrAppend(
        &body, R"({"id":"01a23e96-6418-764b-9e0c-46825230a)", 100 + i,
        R"(","type":"sale.created","ordering_key":"till-7","content_type":)",
        R"("application/json","data":"{\"sale\":\"S-)", 1000 + i,
        R"(\",\"till\":\"till-7\",\"total_cents\":)", 1250 + 7 * i,
        R"(,\"items\":[{\"sku\":\"COFFEE-L\",\"qty\":1}]}"})", "\n");
  }
  return body;
}

TEST(BodyCodingTest, NamesParseAndPrint) {
  EXPECT_EQ(*ParseBodyCoding("gzip"), BodyCoding::kGzip);
  EXPECT_EQ(*ParseBodyCoding("ZSTD"), BodyCoding::kZstd);
  EXPECT_EQ(*ParseBodyCoding(""), BodyCoding::kIdentity);
  EXPECT_EQ(*ParseBodyCoding("identity"), BodyCoding::kIdentity);
  EXPECT_EQ(BodyCodingName(BodyCoding::kZstd), "zstd");
  const absl::StatusOr<BodyCoding> br = ParseBodyCoding("br");
  EXPECT_EQ(br.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(br.status().message().find("'br'"), absl::string_view::npos);
}

TEST(BodyCodingTest, EachCodingRoundTripsAndShrinksABatchOfSales) {
  const std::string body = Sales(50);
  for (BodyCoding coding : {BodyCoding::kGzip, BodyCoding::kZstd}) {
    absl::StatusOr<std::string> encoded = EncodeBody(coding, body);
    ASSERT_TRUE(encoded.ok()) << encoded.status();
    EXPECT_LT(encoded->size() * 10, body.size() * 3) << BodyCodingName(coding);
    absl::StatusOr<std::string> decoded =
        DecodeBody(coding, *encoded, body.size());
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(*decoded, body);
  }
}

TEST(BodyCodingTest, GzipIsTheStandardFormatBothWays) {
  // gzip.compress(b"hello, till 7\n", mtime=0) in Python.
  const unsigned char kPython[] = {
      0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48,
      0xcd, 0xc9, 0xc9, 0xd7, 0x51, 0x28, 0xc9, 0xcc, 0xc9, 0x51, 0x30, 0xe7,
      0x02, 0x00, 0x68, 0x9f, 0x5b, 0xe5, 0x0e, 0x00, 0x00, 0x00};
  const std::string python(reinterpret_cast<const char*>(kPython),
                           sizeof(kPython));
  EXPECT_EQ(*DecodeBody(BodyCoding::kGzip, python, 1024), "hello, till 7\n");
  const std::string ours = *EncodeBody(BodyCoding::kGzip, "x");
  ASSERT_GE(ours.size(), 2u);
  EXPECT_EQ(ours.substr(0, 2), "\x1f\x8b");  // a gzip member, not raw zlib
  const std::string zstd = *EncodeBody(BodyCoding::kZstd, "x");
  ASSERT_GE(zstd.size(), 4u);
  EXPECT_EQ(zstd.substr(0, 4), "\x28\xb5\x2f\xfd");  // a zstd frame
}

TEST(BodyCodingTest, ACutOrPaddedStreamIsRefused) {
  const std::string body = Sales(5);
  for (BodyCoding coding : {BodyCoding::kGzip, BodyCoding::kZstd}) {
    const std::string encoded = *EncodeBody(coding, body);
    EXPECT_EQ(DecodeBody(coding, encoded.substr(0, encoded.size() - 3), 1 << 20)
                  .status()
                  .code(),
              absl::StatusCode::kInvalidArgument)
        << BodyCodingName(coding);
    EXPECT_EQ(DecodeBody(coding, "", 1 << 20).status().code(),
              absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(DecodeBody(coding, body, 1 << 20).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  const std::string gzip = *EncodeBody(BodyCoding::kGzip, body);
  EXPECT_EQ(
      DecodeBody(BodyCoding::kGzip, gzip + "junk", 1 << 20).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(BodyCodingTest, ABodyThatDecodesPastTheLimitIsStopped) {
  const std::string zeros(8 << 20, '\0');  // 8 MiB in a few KiB
  for (BodyCoding coding : {BodyCoding::kGzip, BodyCoding::kZstd}) {
    const std::string bomb = *EncodeBody(coding, zeros);
    EXPECT_LT(bomb.size(), size_t{64} << 10);
    EXPECT_EQ(DecodeBody(coding, bomb, 1 << 20).status().code(),
              absl::StatusCode::kResourceExhausted)
        << BodyCodingName(coding);
  }
  EXPECT_EQ(DecodeBody(BodyCoding::kIdentity, zeros, 1 << 20).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace outbox
