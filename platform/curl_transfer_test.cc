// Copyright (c) edge-outbox authors.
//
// KeepResponseBody, fed the pieces a body arrives in: what a request keeps
// and how much memory that takes. Through a real server the pieces' sizes
// are the network's choice; here they are the test's.

#include "platform/curl_transfer.h"

#include <string>

#include "gtest/gtest.h"

namespace outbox {
namespace {

TEST(KeepResponseBodyTest, SmallPiecesNeverOutgrowTheMaximum) {
  Transfer transfer;
  transfer.request.max_response_body = 1000;
  std::string sent;
  for (int i = 0; i < 10; ++i) {
    const std::string piece(300, static_cast<char>('a' + i));
    KeepResponseBody(piece, &transfer);
    sent += piece;
    EXPECT_LE(transfer.body.capacity(), 1000u) << "after piece " << i;
  }
  EXPECT_EQ(transfer.body, sent.substr(0, 1000));
  EXPECT_TRUE(transfer.body_truncated);
}

TEST(KeepResponseBodyTest, ZeroMaximumKeepsNothing) {
  Transfer transfer;
  KeepResponseBody(std::string(300, 'a'), &transfer);
  EXPECT_EQ(transfer.body, "");
  EXPECT_FALSE(transfer.body_truncated);
}

}  // namespace
}  // namespace outbox
