// Copyright (c) edge-outbox authors.
//
// outboxctl show of a workflow's event: the timeline (steps, then every
// attempt in order), bodies only when asked, and the --json form.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/ctl_workflow_fixture.h"
#include "tests/testing/events.h"

namespace outbox::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using CtlShowWorkflowTest = CtlWorkflowTest;

// Where each of `parts` is in `text`, which must hold them in that order.
void ExpectInOrder(const std::string& text,
                   const std::vector<std::string>& parts) {
  size_t at = 0;
  for (const std::string& part : parts) {
    const size_t found = text.find(part, at);
    ASSERT_NE(found, std::string::npos)
        << "'" << part << "' missing after offset " << at << " in:\n"
        << text;
    at = found + part.size();
  }
}

std::vector<storage::StepResult> History() {
  return {Row("reserve", false, 1, 201, "done"),
          Row("fraud", false, 1, 200, "done"),
          Row("ship", false, 1, 200, "done"),
          Row("bill", false, 1, 503, "retry"),
          Row("bill", false, 2, 500, "failed"),
          Row("ship", true, 1, 500, "failed")};
}

TEST_F(CtlShowWorkflowTest, TextShowsTheStepsThenEveryAttemptInOrder) {
  const std::string id = NeedsAttention(History());
  sink::ExitResult r = Ctl({"show", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectInOrder(
      r.out,
      {"dead letter " + id, "workflow:\n",
       "phase:            needs_attention\n",
       "cause:            \"bill: HTTP 500\"\n", "cancelled:        no\n",
       "steps (4):\n", "    0 reserve done dest=reserve-service http=200",
       "    1 fraud no_revert ", "    2 ship revert_failed ",
       "    3 bill failed dest=bill-service http=500", "attempts (6):\n",
       " reserve attempt=1 POST ", " fraud attempt=1 ", " ship attempt=1 POST ",
       " bill attempt=1 POST http://127.0.0.1:9/bill http=503 "
       "1.5ms retry error=\"HTTP 503\"",
       " bill attempt=2 ",
       " ship (revert) attempt=1 DELETE "
       "http://127.0.0.1:9/ship http=500 1.5ms failed"});
}

TEST_F(CtlShowWorkflowTest, BodiesArePrintedOnlyWithTheBodiesFlag) {
  std::vector<storage::StepResult> rows = {
      Row("reserve", false, 1, 201, "done")};
  rows[0].set_request_body("{\"card\":\"4111-secret\"}");
  rows[0].set_response_body("{\"reservationId\":\"r-77\"}");
  rows[0].set_response_truncated(true);
  const std::string id = NeedsAttention(rows);

  sink::ExitResult plain = Ctl({"show", id});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_THAT(plain.out, Not(HasSubstr("4111-secret")));
  EXPECT_THAT(plain.out, Not(HasSubstr("r-77")));
  EXPECT_THAT(plain.out, HasSubstr(" request=22B response=24B(truncated)\n"));

  sink::ExitResult bodies = Ctl({"show", id, "--bodies"});
  EXPECT_EQ(bodies.exit_code, 0) << bodies.err;
  EXPECT_THAT(bodies.out, HasSubstr("      request body (22 bytes):\n"
                                    "{\"card\":\"4111-secret\"}\n"));
  EXPECT_THAT(bodies.out, HasSubstr("response body (24 bytes, truncated):\n"
                                    "{\"reservationId\":\"r-77\"}\n"));
}

TEST_F(CtlShowWorkflowTest, JsonHidesBodiesUnlessAsked) {
  std::vector<storage::StepResult> rows = {
      Row("reserve", false, 1, 201, "done")};
  rows[0].set_request_body("{\"card\":\"4111-secret\"}");
  const std::string id = NeedsAttention(rows);
  const nlohmann::json plain = Json(Ctl({"show", id, "--json"}));
  const nlohmann::json& row = plain["workflow"]["results"][0];
  EXPECT_EQ(Field(row, "request_body_bytes"), "22");
  EXPECT_FALSE(row.contains("request_body")) << row.dump();
  EXPECT_THAT(plain.dump(), Not(HasSubstr("4111-secret")));

  const nlohmann::json bodies = Json(Ctl({"show", id, "--json", "--bodies"}));
  EXPECT_EQ(Field(bodies["workflow"]["results"][0], "request_body"),
            "{\"card\":\"4111-secret\"}");
  EXPECT_EQ(Field(bodies["workflow"]["steps"][0], "request"),
            "{\"step\":\"reserve\"}");
}

TEST_F(CtlShowWorkflowTest, JsonPutsTheWorkflowBesideTheEvent) {
  const std::string id = NeedsAttention(History());
  const nlohmann::json v = Json(Ctl({"show", id, "--json"}));
  EXPECT_EQ(Field(v, "state"), "dead");
  EXPECT_EQ(Field(v, "payload"), "{\"sale\":1}");
  const nlohmann::json& w = v["workflow"];
  EXPECT_EQ(Field(w, "phase"), "needs_attention");
  EXPECT_EQ(Field(w, "cause"), "bill: HTTP 500");
  EXPECT_EQ(Field(w, "cancelled"), "false");
  ASSERT_EQ(w["steps"].size(), 4u) << w.dump();
  EXPECT_EQ(Field(w["steps"][2], "name"), "ship");
  EXPECT_EQ(Field(w["steps"][2], "status"), "revert_failed");
  ASSERT_EQ(w["results"].size(), 6u) << w.dump();
  const nlohmann::json& last = w["results"][5];
  EXPECT_EQ(Field(last, "step"), "ship");
  EXPECT_EQ(Field(last, "revert"), "true");
  EXPECT_EQ(Field(last, "http_status"), "500");
  EXPECT_EQ(Field(last, "duration_us"), "1500");
  EXPECT_TRUE(last.at("time_unix_ms").is_number_integer()) << last.dump();
  EXPECT_EQ(Field(w["results"][3], "outcome"), "retry");
}

TEST_F(CtlShowWorkflowTest, ACompletedWorkflowsEventShowsAsGone) {
  const std::string id =
      MakeWorkflow(Settlement::Kind::kDelivered,
                   State(storage::WORKFLOW_PHASE_COMPLETED,
                         {Step("reserve", storage::STEP_STATUS_DONE)}),
                   {Row("reserve", false, 1, 201, "done")});
  sink::ExitResult r = Ctl({"show", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gone from the queue"));
  EXPECT_THAT(r.out, HasSubstr("phase:            completed\n"));
  const nlohmann::json v = Json(Ctl({"show", id, "--json"}));
  EXPECT_EQ(Field(v, "state"), "gone");
  EXPECT_EQ(Field(v, "id"), id);
  EXPECT_EQ(Field(v["workflow"], "phase"), "completed");
}

TEST_F(CtlShowWorkflowTest, SaysWhichDefinitionTheWorkflowRunsUnder) {
  const std::string definition = "wd1-0123456789abcdef0123456789abcdef";
  storage::WorkflowState state =
      State(storage::WORKFLOW_PHASE_FORWARD,
            {Step("reserve", storage::STEP_STATUS_DONE)});
  state.set_definition(definition);
  const std::string id = MakeWorkflow(Settlement::Kind::kStepDone, state);
  sink::ExitResult r = Ctl({"show", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectInOrder(r.out, {"phase:            forward\n",
                        "definition:       " + definition + "\n"});
  const nlohmann::json v = Json(Ctl({"show", id, "--json"}));
  EXPECT_EQ(Field(v["workflow"], "definition"), definition);
  // One stored before definitions were kept names none.
  const std::string old = NeedsAttention();
  EXPECT_THAT(Ctl({"show", old}).out, HasSubstr("definition:       -\n"));
}

TEST_F(CtlShowWorkflowTest, AnEventWithoutAWorkflowHasNoWorkflowMember) {
  const std::string id = Commit(testing::MakeEvent("sale.created"));
  const nlohmann::json v = Json(Ctl({"show", id, "--json"}));
  EXPECT_EQ(Field(v, "state"), "pending");
  EXPECT_FALSE(v.contains("workflow")) << v.dump();
  EXPECT_THAT(Ctl({"show", id}).out, Not(HasSubstr("workflow:")));
}

// Stored as rows (feature workflow_rows): no request is stored (it is
// derived from the event again), and only the answers a reference reads.
TEST_F(CtlShowWorkflowTest, AWorkflowStoredAsRowsSaysWhatIsNotStored) {
  storage::WorkflowState state =
      State(storage::WORKFLOW_PHASE_NEEDS_ATTENTION,
            {Step("reserve", storage::STEP_STATUS_DONE),
             Step("fraud", storage::STEP_STATUS_NO_REVERT)});
  state.set_rows(true);
  state.mutable_steps(0)->set_answer_kept(true);
  state.mutable_steps(0)->set_response("{\"id\":\"r-1\"}");
  state.mutable_steps(1)->set_response("dropped: nobody reads it");
  const std::string id = MakeWorkflow(Settlement::Kind::kDeadLetter, state);
  sink::ExitResult r = Ctl({"show", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(" 0 reserve done dest=reserve-service "
                               "http=200 request=derived response=12B\n"));
  EXPECT_THAT(r.out, HasSubstr("request=derived response=not kept\n"));
  const nlohmann::json j = Json(Ctl({"show", id, "--json", "--bodies"}));
  const nlohmann::json& steps = j["workflow"]["steps"];
  EXPECT_EQ(Field(steps[0], "response"), "{\"id\":\"r-1\"}");
  EXPECT_FALSE(steps[0].contains("request")) << steps[0].dump();
  EXPECT_FALSE(steps[1].contains("response")) << steps[1].dump();
  EXPECT_EQ(steps[1]["answer_kept"], false);
}

}  // namespace
}  // namespace outbox::ctl
