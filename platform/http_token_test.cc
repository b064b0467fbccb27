// Copyright (c) edge-outbox authors.

#include "platform/http_token.h"

#include <string>

#include "gtest/gtest.h"

namespace outbox {
namespace {

TEST(HttpTokenTest, LettersDigitsAndTokenPunctuationAreAToken) {
  EXPECT_TRUE(IsHttpToken("X-Api-Key"));
  EXPECT_TRUE(IsHttpToken("authorization"));
  EXPECT_TRUE(IsHttpToken("a1!#$%&'*+-.^_`|~"));
}

TEST(HttpTokenTest, EmptyIsNotAToken) { EXPECT_FALSE(IsHttpToken("")); }

TEST(HttpTokenTest, SeparatorsSpacesAndControlBytesAreNot) {
  for (char ch : std::string("\"(),/:;<=>?@[\\]{} \t\r\n\x7f\x01")) {
    EXPECT_FALSE(IsHttpToken(std::string("X") + ch)) << static_cast<int>(ch);
  }
  EXPECT_FALSE(IsHttpToken(std::string("X\0Y", 3)));
}

TEST(HttpTokenTest, BytesPastAsciiAreNot) {
  EXPECT_FALSE(IsHttpToken("X-\xc3\xa9"));  // "X-é" in UTF-8
}

}  // namespace
}  // namespace outbox
