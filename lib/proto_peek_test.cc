// Copyright (c) edge-outbox authors.
//
// Peeking at top-level fields of an encoded message: the value a full
// parse would give (the last one), fields of nested messages left alone,
// and a message that does not decode told apart from one without the field.

#include "lib/proto_peek.h"

#include <string>

#include "gtest/gtest.h"
#include "proto/storage.pb.h"

namespace outbox {
namespace {

using S = storage::WorkflowState;

std::string State(storage::WorkflowPhase phase, int64_t finished, bool rows) {
  S state;
  state.set_phase(phase);
  state.set_finished_unix_ms(finished);
  state.set_rows(rows);
  // A step whose own varint fields 2, 7 and 8 (the state's phase, start
  // and finish) must not be taken for the state's.
  storage::WorkflowStepState* step = state.add_steps();
  step->set_name("reserve");
  step->set_status(storage::STEP_STATUS_DONE);
  step->set_http_status(201);
  step->set_sent(true);
  step->set_response(std::string(300, 'a'));
  state.set_cause("HTTP 500");
  return state.SerializeAsString();
}

TEST(ProtoPeekTest, ReadsTopLevelVarintsInOnePass) {
  const std::string state =
      State(storage::WORKFLOW_PHASE_COMPENSATED, 1700000000123, true);
  const int fields[] = {S::kPhaseFieldNumber, S::kFinishedUnixMsFieldNumber,
                        S::kRowsFieldNumber, S::kNextStepFieldNumber};
  uint64_t values[] = {9, 9, 9, 9};
  ASSERT_TRUE(PeekVarints(state, fields, absl::MakeSpan(values)));
  EXPECT_EQ(values[0], storage::WORKFLOW_PHASE_COMPENSATED);
  EXPECT_EQ(values[1], 1700000000123u);
  EXPECT_EQ(values[2], 1u);
  EXPECT_EQ(values[3], 9u) << "a field the message lacks is left as it was";
  EXPECT_EQ(PeekVarint(state, S::kPhaseFieldNumber, 0),
            storage::WORKFLOW_PHASE_COMPENSATED);
  EXPECT_EQ(PeekBytes(state, S::kCauseFieldNumber), "HTTP 500");
}

TEST(ProtoPeekTest, TheLastValueWinsAsInAFullParse) {
  std::string twice = State(storage::WORKFLOW_PHASE_FORWARD, 0, false);
  S later;
  later.set_phase(storage::WORKFLOW_PHASE_COMPLETED);
  twice += later.SerializeAsString();  // concatenation merges
  S parsed;
  ASSERT_TRUE(parsed.ParseFromString(twice));
  const int fields[] = {S::kPhaseFieldNumber};
  uint64_t values[] = {0};
  ASSERT_TRUE(PeekVarints(twice, fields, absl::MakeSpan(values)));
  EXPECT_EQ(values[0], static_cast<uint64_t>(parsed.phase()));
}

TEST(ProtoPeekTest, AMessageThatDoesNotDecodeIsFalse) {
  const std::string state = State(storage::WORKFLOW_PHASE_FORWARD, 5, true);
  const int fields[] = {S::kPhaseFieldNumber};
  uint64_t values[] = {0};
  // Cut anywhere inside: a varint, a length-delimited field's length or
  // its bytes. (A cut that happens to fall between two fields is a shorter
  // message, which a full parse accepts too.)
  for (size_t n = 1; n < state.size(); ++n) {
    const std::string cut = state.substr(0, n);
    S parsed;
    EXPECT_EQ(PeekVarints(cut, fields, absl::MakeSpan(values)),
              parsed.ParseFromString(cut))
        << "cut to " << n << " of " << state.size() << " bytes";
  }
  EXPECT_FALSE(PeekVarints(std::string("\x08\x80", 2), fields,
                           absl::MakeSpan(values)));  // varint cut short
  EXPECT_FALSE(PeekVarints(std::string("\x00\x01", 2), fields,
                           absl::MakeSpan(values)));  // tag 0
  EXPECT_TRUE(PeekVarints("", fields, absl::MakeSpan(values)));
}

// A field appended to an encoded message is what a full parse reads for
// it, the rest unchanged: the store stamps a state it writes undecoded.
TEST(ProtoPeekTest, AnAppendedVarintFieldIsWhatAParseReads) {
  storage::WorkflowState state;
  state.set_phase(storage::WORKFLOW_PHASE_COMPLETED);
  state.set_finished_unix_ms(1700000000000);
  state.set_finished_store_clock_ms(5);
  state.add_steps()->set_name("reserve");
  std::string encoded = state.SerializeAsString();
  AppendVarintField(storage::WorkflowState::kFinishedStoreClockMsFieldNumber,
                    1600000000000, &encoded);
  storage::WorkflowState parsed;
  ASSERT_TRUE(parsed.ParseFromString(encoded));
  EXPECT_EQ(parsed.finished_store_clock_ms(), 1600000000000);
  parsed.set_finished_store_clock_ms(5);
  EXPECT_EQ(parsed.SerializeAsString(), state.SerializeAsString());
}

}  // namespace
}  // namespace outbox
