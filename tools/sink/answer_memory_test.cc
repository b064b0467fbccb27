// Copyright (c) edge-outbox authors.

#include "tools/sink/answer_memory.h"

#include <string>

#include "gtest/gtest.h"

namespace outbox::sink {
namespace {

AnswerKey Key(const std::string& id) { return {id, "POST", "/reserve"}; }

RouteAnswer Answer(const std::string& body) {
  RouteAnswer answer;
  answer.body = body;
  answer.content_type = "application/json";
  return answer;
}

TEST(AnswerMemoryTest, FindsWhatWasRememberedForTheSameKeyOnly) {
  AnswerMemory memory;
  memory.Remember(Key("msg_1"), Answer("RES-1"));
  const RouteAnswer* found = memory.Find(Key("msg_1"));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->body, "RES-1");
  EXPECT_EQ(memory.Find(Key("msg_2")), nullptr);
  EXPECT_EQ(memory.Find({"msg_1", "DELETE", "/reserve"}), nullptr);
  EXPECT_EQ(memory.Find({"msg_1", "POST", "/reserve/2"}), nullptr);
}

TEST(AnswerMemoryTest, TheFirstAnswerStays) {
  AnswerMemory memory;
  memory.Remember(Key("msg_1"), Answer("RES-1"));
  memory.Remember(Key("msg_1"), Answer("RES-2"));
  ASSERT_NE(memory.Find(Key("msg_1")), nullptr);
  EXPECT_EQ(memory.Find(Key("msg_1"))->body, "RES-1");
}

TEST(AnswerMemoryTest, PastCapacityTheOldestIsForgotten) {
  AnswerMemory memory(/*capacity=*/2);
  memory.Remember(Key("msg_1"), Answer("RES-1"));
  memory.Remember(Key("msg_2"), Answer("RES-2"));
  memory.Remember(Key("msg_3"), Answer("RES-3"));
  EXPECT_EQ(memory.Find(Key("msg_1")), nullptr);
  ASSERT_NE(memory.Find(Key("msg_2")), nullptr);
  ASSERT_NE(memory.Find(Key("msg_3")), nullptr);
  EXPECT_EQ(memory.Find(Key("msg_2"))->body, "RES-2");
  EXPECT_EQ(memory.Find(Key("msg_3"))->body, "RES-3");
}

// A rejected second Remember must not count as a newer answer, or the real
// first answer would be forgotten early.
TEST(AnswerMemoryTest, ARememberForAKnownKeyTakesNoRoom) {
  AnswerMemory memory(/*capacity=*/2);
  memory.Remember(Key("msg_1"), Answer("RES-1"));
  memory.Remember(Key("msg_1"), Answer("again"));
  memory.Remember(Key("msg_2"), Answer("RES-2"));
  EXPECT_NE(memory.Find(Key("msg_1")), nullptr);
  EXPECT_NE(memory.Find(Key("msg_2")), nullptr);
}

}  // namespace
}  // namespace outbox::sink
