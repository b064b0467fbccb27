// Copyright (c) edge-outbox authors.
//
// The `workflows` section of the agent's configuration: what it accepts and
// the errors that name what to fix.

#include <string>

#include "absl/strings/str_cat.h"
#include "agent/config/config.h"
#include "agent/config/definition.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status.h"

namespace outbox {
namespace {

using ::testing::HasSubstr;

constexpr char kDestinations[] = R"(
  destinations { name: "inventory" url: "http://127.0.0.1:1/reserve" }
  destinations { name: "fraud" url: "http://127.0.0.1:1/fraud" }
  destinations { name: "billing" url: "http://127.0.0.1:1/bill" }
  destinations { name: "high_value" url: "http://127.0.0.1:1/hv" }
)";

absl::StatusOr<AgentConfig> Parse(const std::string& workflows) {
  return ParseAgentConfig(absl::StrCat(kDestinations, workflows),
                          "cfg.textproto");
}

std::string ErrorOf(const std::string& workflows) {
  absl::StatusOr<AgentConfig> config = Parse(workflows);
  EXPECT_TRUE(absl::IsInvalidArgument(config.status())) << config.status();
  return std::string(config.status().message());
}

constexpr char kSeedOrder[] = R"(
  workflows {
    event_type: "order.created"
    steps {
      name: "reserve" destination: "inventory"
      revert { url: "/inv/{{response:reserve:/id}}" method: "DELETE" }
    }
    steps { name: "fraud" destination: "fraud" }
    steps {
      name: "billing"
      choose {
        destination: "billing"
        when { value: "response:fraud:/riskScore" op: "lt" expected: "50" }
        revert { url: "refund" payload: "{\"id\": {{request:/id}}}" }
      }
      choose { destination: "high_value" }
    }
  }
)";

TEST(ConfigWorkflowTest, SeedOrderIsReadWithItsStepsTargetsAndReverts) {
  absl::StatusOr<AgentConfig> config = Parse(kSeedOrder);
  ASSERT_OUTBOX_OK(config);
  ASSERT_EQ(config->workflows.size(), 1u);
  const workflow::WorkflowSpec& w = config->workflows[0];
  EXPECT_EQ(w.event_type, "order.created");
  EXPECT_FALSE(w.per_step_payloads);
  ASSERT_EQ(w.steps.size(), 3u);
  EXPECT_EQ(w.steps[0].targets.size(), 1u);
  ASSERT_TRUE(w.steps[0].targets[0].revert.has_value());
  EXPECT_EQ(w.steps[0].targets[0].revert->method, "DELETE");
  EXPECT_FALSE(w.steps[1].targets[0].revert.has_value());
  ASSERT_EQ(w.steps[2].targets.size(), 2u);
  EXPECT_EQ(w.steps[2].targets[0].choice.conditions.size(), 1u);
  EXPECT_TRUE(w.steps[2].targets[0].revert->payload.has_value());
  EXPECT_EQ(WorkflowFor(*config, "order.created", ""), &w);
  EXPECT_EQ(WorkflowFor(*config, "order.created", "billing"), nullptr);
  EXPECT_EQ(WorkflowFor(*config, "order.paid", ""), nullptr);
}

// What the store keeps for the workflows that start under this
// configuration (agent/config/definition.h).
TEST(ConfigWorkflowTest, ADefinitionHoldsTheWorkflowAndTheDestinationsItNames) {
  absl::StatusOr<AgentConfig> config = Parse(absl::StrCat(
      R"(destinations { name: "unused" url: "http://127.0.0.1:1/u" })",
      kSeedOrder));
  ASSERT_OUTBOX_OK(config);
  const workflow::WorkflowSpec& w = config->workflows[0];
  EXPECT_EQ(w.definition_id, WorkflowDefinitionId(w.definition));
  EXPECT_EQ(WorkflowDefinitionType(w.definition), "order.created");
  for (const char* named : {"inventory", "fraud", "billing", "high_value"}) {
    EXPECT_THAT(w.definition, HasSubstr(absl::StrCat("\"", named, "\"")));
  }
  EXPECT_THAT(w.definition, ::testing::Not(HasSubstr("unused")));
  // Parsed again, the same text is the same definition.
  absl::StatusOr<AgentConfig> again = Parse(absl::StrCat(
      R"(destinations { name: "unused" url: "http://127.0.0.1:1/u" })",
      kSeedOrder));
  ASSERT_OUTBOX_OK(again);
  EXPECT_EQ(again->workflows[0].definition_id, w.definition_id);

  // Loaded against a configuration without the workflow and without
  // "inventory": the steps as they were; the destinations the configuration
  // still has are its own (here "fraud" moved), the others the stored ones.
  absl::StatusOr<AgentConfig> now = ParseAgentConfig(
      R"(destinations { name: "fraud" url: "http://127.0.0.1:2/moved" }
         destinations { name: "billing" url: "http://127.0.0.1:1/bill" }
         destinations { name: "high_value" url: "http://127.0.0.1:1/hv" })",
      "now.textproto");
  ASSERT_OUTBOX_OK(now);
  absl::StatusOr<AgentConfig> loaded =
      LoadWorkflowDefinition(w.definition_id, w.definition, *now);
  ASSERT_OUTBOX_OK(loaded);
  ASSERT_EQ(loaded->workflows.size(), 1u);
  EXPECT_EQ(loaded->workflows[0].steps.size(), 3u);
  EXPECT_EQ(loaded->workflows[0].definition_id, w.definition_id);
  EXPECT_EQ(FindDestination(*loaded, "fraud")->url, "http://127.0.0.1:2/moved");
  EXPECT_EQ(FindDestination(*loaded, "inventory")->url,
            "http://127.0.0.1:1/reserve");
}

TEST(ConfigWorkflowTest, ADamagedDefinitionIsDataLoss) {
  absl::StatusOr<AgentConfig> config = Parse(kSeedOrder);
  ASSERT_OUTBOX_OK(config);
  const workflow::WorkflowSpec& w = config->workflows[0];
  std::string damaged = w.definition;
  damaged[damaged.find("fraud")] = 'F';  // still parses: the hash catches it
  EXPECT_TRUE(absl::IsDataLoss(
      LoadWorkflowDefinition(w.definition_id, damaged, *config).status()));
  EXPECT_TRUE(absl::IsDataLoss(
      LoadWorkflowDefinition(w.definition_id, "not a config {", *config)
          .status()));
}

TEST(ConfigWorkflowTest, AReferenceToALaterStepIsRefused) {
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" choose { destination: "fraud"
        when { value: "response:b:/x" op: "exists" } } }
      steps { name: "b" destination: "billing" } })"),
              HasSubstr("reads step \"b\", which does not run before"));
}

// A workflow's definition is kept in the store, which must never hold a
// credential: an inline header named like one is left out of a
// destination's copy (the running destination keeps it), the others stay.
TEST(ConfigWorkflowTest, TheDefinitionKeepsNoInlineCredentialHeader) {
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(
      R"(destinations { name: "pay" url: "http://127.0.0.1:1/pay"
           headers { key: "X-Tenant" value: "shop-7" }
           headers { key: "X-Session-Id" value: "not-a-secret-9" }
           headers { key: "Authorization" value: "Bearer s3cr3t" }
           headers { key: "X-Api-Key" value: "k3y" }
           headers { key: "Refresh-Token" value: "t0k3n" } }
         workflows { event_type: "o" steps { name: "a" destination: "pay" } })",
      "cfg.textproto");
  ASSERT_OUTBOX_OK(config);
  const std::string& text = config->workflows[0].definition;
  EXPECT_THAT(text, HasSubstr("shop-7"));
  EXPECT_THAT(text, HasSubstr("not-a-secret-9"));
  for (const char* secret : {"s3cr3t", "k3y", "t0k3n", "Authorization"}) {
    EXPECT_THAT(text, ::testing::Not(HasSubstr(secret))) << secret;
  }
  EXPECT_EQ(config->destinations[0].headers.size(), 5u);
}

// A proxy's user:password@ is left out of the kept definition.
TEST(ConfigWorkflowTest, TheDefinitionKeepsNoProxyCredentials) {
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(
      R"(destinations { name: "pay" url: "http://127.0.0.1:1/pay"
           proxy: "http://till:pa55word@proxy.example:3128" }
         workflows { event_type: "o" steps { name: "a" destination: "pay" } })",
      "cfg.textproto");
  ASSERT_OUTBOX_OK(config);
  const std::string& text = config->workflows[0].definition;
  EXPECT_THAT(text, HasSubstr("http://proxy.example:3128"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("pa55word")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("till:")));
  // The running destination keeps its credentials.
  EXPECT_EQ(config->destinations[0].proxy,
            "http://till:pa55word@proxy.example:3128");
}

TEST(ConfigWorkflowTest, ARevertMayReadItsOwnStepsResponse) {
  ASSERT_OUTBOX_OK(Parse(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        revert { url: "/{{response:a:/id}}" } } })"));
  ASSERT_OUTBOX_OK(Parse(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        revert { url: "/{{response:$.id}}" } } })"));
}

TEST(ConfigWorkflowTest, UnknownDestinationIsNamed) {
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "nowhere" } })"),
              HasSubstr("no destination is named \"nowhere\""));
}

TEST(ConfigWorkflowTest, DestinationAndChooseTogetherAreRefused) {
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
              choose { destination: "billing" } } })"),
              HasSubstr("either `destination` or `choose`"));
}

TEST(ConfigWorkflowTest, BadOperatorExpectedValueAndMethodAreNamed) {
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" choose { destination: "fraud"
        when { value: "request:/x" op: "above" expected: "1" } } } })"),
              HasSubstr("op"));
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" choose { destination: "fraud"
        when { value: "request:/x" op: "eq" expected: "domestic" } } } })"),
              HasSubstr("is not JSON"));
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud" method: "DELETE" } })"),
              HasSubstr("is not POST, PUT or PATCH"));
}

// The revert's URL template of step `step`'s first target in `config`.
std::string RevertUrlText(const AgentConfig& config, size_t step) {
  std::string text;
  for (const workflow::Template::Part& part :
       config.workflows[0].steps[step].targets[0].revert->url.parts) {
    absl::StrAppend(&text, part.literal,
                    part.has_ref ? absl::StrCat("<", part.ref.step, ":",
                                                part.ref.pointer, ">")
                                 : "");
  }
  return text;
}

TEST(ConfigWorkflowTest, ARevertPathIsAtItsDestination) {
  absl::StatusOr<AgentConfig> config = Parse(R"(workflows { event_type: "o"
      steps { name: "a" destination: "inventory"
        revert { url: "/api/{{response:a:/id}}/release" } }
      steps { name: "b" destination: "fraud"
        revert { url: "{{response:b:/id}}/undo" } } })");
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(RevertUrlText(*config, 0),
            "http://127.0.0.1:1/api/<a:/id>/release");
  EXPECT_EQ(RevertUrlText(*config, 1), "http://127.0.0.1:1/<b:/id>/undo");
}

TEST(ConfigWorkflowTest, ARevertAtAnotherOriginNeedsOtherOrigin) {
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        revert { url: "https://refunds.example/r" } } })"),
              ::testing::AllOf(HasSubstr("steps[0].revert.url"),
                               HasSubstr("headers and secrets"),
                               HasSubstr("other_origin")));
  EXPECT_OUTBOX_OK(Parse(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        revert { url: "https://refunds.example/r" other_origin: true } } })"));
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        revert { url: "https://{{response:a:/host}}/r" other_origin: true }
      } })"),
              HasSubstr("placeholder in its scheme, host or port"));
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud" revert { method: "DELETE" } } })"),
              HasSubstr("url: is required"));
}

// A workflow started before other_origin existed keeps the revert URL it
// started with: its compensation must still run.
TEST(ConfigWorkflowTest, AStoredDefinitionKeepsItsOtherOriginRevert) {
  absl::StatusOr<AgentConfig> config = Parse(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        revert { url: "https://refunds.example/r" other_origin: true } } })");
  ASSERT_OUTBOX_OK(config);
  std::string old = config->workflows[0].definition;
  const size_t at = old.find("other_origin: true");
  ASSERT_NE(at, std::string::npos) << old;
  old.erase(at, std::string("other_origin: true").size());
  absl::StatusOr<AgentConfig> loaded =
      LoadWorkflowDefinition(WorkflowDefinitionId(old), old, *config);
  ASSERT_OUTBOX_OK(loaded);
  EXPECT_EQ(
      loaded->workflows[0].steps[0].targets[0].revert->url.parts[0].literal,
      "https://refunds.example/r");
}

// A step whose choose matched nothing was skipped before on_no_match
// existed; workflows started then keep that under their stored definition,
// while new definitions are stored with the default spelled out.
TEST(ConfigWorkflowTest, AStoredDefinitionWithoutOnNoMatchStillSkips) {
  absl::StatusOr<AgentConfig> config = Parse(R"(workflows { event_type: "o"
      steps { name: "a" choose { destination: "fraud"
        when { value: "request:/x" op: "exists" } } } })");
  ASSERT_OUTBOX_OK(config);
  EXPECT_FALSE(config->workflows[0].steps[0].skip_on_no_match);
  std::string old = config->workflows[0].definition;
  const std::string spelled = "on_no_match: \"fail\"";
  const size_t at = old.find(spelled);
  ASSERT_NE(at, std::string::npos) << old;
  absl::StatusOr<AgentConfig> now =
      LoadWorkflowDefinition(config->workflows[0].definition_id,
                             config->workflows[0].definition, *config);
  ASSERT_OUTBOX_OK(now);
  EXPECT_FALSE(now->workflows[0].steps[0].skip_on_no_match);
  old.erase(at, spelled.size());
  absl::StatusOr<AgentConfig> before =
      LoadWorkflowDefinition(WorkflowDefinitionId(old), old, *config);
  ASSERT_OUTBOX_OK(before);
  EXPECT_TRUE(before->workflows[0].steps[0].skip_on_no_match);
}

TEST(ConfigWorkflowTest, ExtractNamesValuesForLaterConditionsAndReverts) {
  absl::StatusOr<AgentConfig> config = Parse(R"(workflows { event_type: "o"
      steps { name: "ship" destination: "inventory"
        extract { name: "shipmentId" value: "response:$.shipmentId" }
        revert { url: "/cancel/{shipmentId}" } }
      steps { name: "bill"
        choose { destination: "billing"
          when { value: "{shipmentId}" op: "exists" }
          revert {
            extract { name: "order" value: "request:$.id" }
            url: "/refund/{order}"
            payload: "{\"s\": \"S-{shipmentId}\", \"o\": {order}}" } } } })");
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(RevertUrlText(*config, 0),
            "http://127.0.0.1:1/cancel/<ship:/shipmentId>");
  const workflow::StepSpec& bill = config->workflows[0].steps[1];
  EXPECT_EQ(bill.targets[0].choice.conditions[0].ref.step, "ship");
  EXPECT_EQ(RevertUrlText(*config, 1), "http://127.0.0.1:1/refund/<:/id>");
  const workflow::Template& payload = *bill.targets[0].revert->payload;
  ASSERT_EQ(payload.parts.size(), 3u);
  EXPECT_EQ(payload.parts[0].ref.step, "ship");
  EXPECT_TRUE(payload.parts[0].in_string);
  EXPECT_EQ(payload.parts[1].ref.source, workflow::ValueRef::Source::kRequest);
  EXPECT_FALSE(payload.parts[1].in_string);
}

TEST(ConfigWorkflowTest, AnUndeclaredNameIsRefusedByName) {
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        revert { url: "/x/{shipmentId}" } } })"),
              HasSubstr("{shipmentId} is not declared"));
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        revert { url: "/x" extract { name: "rid" value: "response:$.id" } } }
      steps { name: "b" choose { destination: "billing"
        when { value: "{rid}" op: "exists" } } } })"),
              HasSubstr("{rid} is not declared"));  // a revert's own
}

TEST(ConfigWorkflowTest, ExtractReferencesAreCheckedLikeOthers) {
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        extract { name: "x" value: "response:b:/x" } }
      steps { name: "b" destination: "billing" } })"),
              HasSubstr("reads step \"b\", which does not run before"));
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        extract { name: "x" value: "request:/x" } } })"),
              HasSubstr("a step's extract reads answers"));
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" choose { destination: "fraud"
        when { value: "response:$.x" op: "exists" } } } })"),
              HasSubstr("reads this step's own answer"));
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        extract { name: "x" value: "response:$.x" } }
      steps { name: "b" destination: "fraud"
        extract { name: "x" value: "response:$.y" } } })"),
              HasSubstr("{x} is already declared"));
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        extract { name: "1x" value: "response:$.x" } } })"),
              HasSubstr("is not a value name"));
}

TEST(ConfigWorkflowTest, OnNoMatchIsFailUnlessSkipIsWritten) {
  absl::StatusOr<AgentConfig> config = Parse(R"(workflows { event_type: "o"
      steps { name: "a" choose { destination: "fraud" } }
      steps { name: "b" on_no_match: "skip" choose { destination: "fraud" } }
      steps { name: "c" on_no_match: "fail" choose { destination: "fraud" } }
  })");
  ASSERT_OUTBOX_OK(config);
  EXPECT_FALSE(config->workflows[0].steps[0].skip_on_no_match);
  EXPECT_TRUE(config->workflows[0].steps[1].skip_on_no_match);
  EXPECT_FALSE(config->workflows[0].steps[2].skip_on_no_match);
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" on_no_match: "ignore" choose { destination: "fraud" } }
  })"),
              HasSubstr("\"fail\" (the default) or \"skip\""));
}

TEST(ConfigWorkflowTest, ARevertsMaxAttemptsIsKeptAndNotNegative) {
  absl::StatusOr<AgentConfig> config = Parse(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        revert { url: "/undo" max_attempts: 3 } } })");
  ASSERT_OUTBOX_OK(config);
  EXPECT_EQ(config->workflows[0].steps[0].targets[0].revert->max_attempts, 3);
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud"
        revert { url: "/undo" max_attempts: -1 } } })"),
              HasSubstr("max_attempts"));
}

TEST(ConfigWorkflowTest, DuplicateStepNamesAndTypesAreRefused) {
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud" }
      steps { name: "a" destination: "billing" } })"),
              HasSubstr("already a step"));
  EXPECT_THAT(ErrorOf(R"(
      workflows { event_type: "o" steps { name: "a" destination: "fraud" } }
      workflows { event_type: "o" steps { name: "a" destination: "fraud" } })"),
              HasSubstr("already has a workflow"));
}

TEST(ConfigWorkflowTest, PatternsAndEmptyWorkflowsAreRefused) {
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "order.*"
      steps { name: "a" destination: "fraud" } })"),
              HasSubstr("exact event type"));
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o" })"),
              HasSubstr("1..32 steps"));
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o" payloads: "each"
      steps { name: "a" destination: "fraud" } })"),
              HasSubstr("\"whole\" or \"per_step\""));
}

TEST(ConfigWorkflowTest, ErrorsSayWhere) {
  EXPECT_THAT(ErrorOf(R"(workflows { event_type: "o"
      steps { name: "a" destination: "fraud" }
      steps { name: "b/c" destination: "fraud" } })"),
              HasSubstr("workflows[0].steps[1].name"));
}

}  // namespace
}  // namespace outbox
