// Copyright (c) edge-outbox authors.
//
// outboxctl emit commits a record and an event that the read commands and
// the Store API then see.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/ctl_fixture.h"
#include "tests/testing/status.h"

namespace outbox::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPayload[] = R"({"sale":"s-1","total":12.5})";

class CtlEmitTest : public CtlTest {
 protected:
  // Emits a sale event; returns the printed event id.
  std::string EmitSale(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "emit",    "--table",        "sales",  "--key",        "s-1",
        "--value", "sold 1",         "--type", "sale.created", "--payload",
        kPayload,  "--ordering-key", "till-7"};
    args.insert(args.end(), extra.begin(), extra.end());
    sink::ExitResult r = Ctl(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::string(absl::StripSuffix(r.out, "\n"));
  }
};

TEST_F(CtlEmitTest, PrintsTheIdOfTheCommittedEvent) {
  const std::string id = EmitSale();
  ASSERT_EQ(id.size(), 36u) << id;  // a UUID
  std::unique_ptr<Store> store = OpenStore();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<PendingEvent> event = store->FindPending(id);
  ASSERT_OUTBOX_OK(event);
  EXPECT_EQ(event->type, "sale.created");
  EXPECT_EQ(event->payload, kPayload);
  EXPECT_EQ(event->ordering_key, "till-7");
  absl::StatusOr<std::string> record = store->Get("sales", "s-1");
  ASSERT_OUTBOX_OK(record);
  EXPECT_EQ(*record, "sold 1");
}

TEST_F(CtlEmitTest, GetPrintsTheRecordValueRaw) {
  EmitSale();
  sink::ExitResult r = Ctl({"get", "--table", "sales", "--key", "s-1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "sold 1");
}

TEST_F(CtlEmitTest, ShowPrintsTheEventWithItsPayload) {
  const std::string id = EmitSale();
  sink::ExitResult r = Ctl({"show", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("pending event " + id));
  EXPECT_THAT(r.out, HasSubstr("sale.created"));
  EXPECT_THAT(r.out, HasSubstr("till-7"));
  EXPECT_THAT(r.out, HasSubstr(kPayload));
}

TEST_F(CtlEmitTest, ShowJsonHasEveryFieldAndThePayload) {
  const std::string id = EmitSale({"--destination", "erp"});
  const nlohmann::json v = Json(Ctl({"show", id, "--json"}));
  EXPECT_EQ(Field(v, "state"), "pending");
  EXPECT_EQ(Field(v, "id"), id);
  EXPECT_EQ(Field(v, "type"), "sale.created");
  EXPECT_EQ(Field(v, "ordering_key"), "till-7");
  EXPECT_EQ(Field(v, "destination"), "erp");
  EXPECT_EQ(Field(v, "content_type"), "application/json");
  EXPECT_EQ(Field(v, "payload"), kPayload);
  EXPECT_EQ(Field(v, "attempts"), "0");
  EXPECT_EQ(Field(v, "first_attempt"), "null");
  EXPECT_EQ(Field(v, "last_http_status"), "null");
  EXPECT_TRUE(absl::EndsWith(Field(v, "created"), "Z")) << Field(v, "created");
  EXPECT_TRUE(v.at("created_unix_ms").is_number_integer()) << v.dump();
  EXPECT_TRUE(v.at("next_attempt_unix_ms").is_number_integer()) << v.dump();
}

TEST_F(CtlEmitTest, ListShowsOneLineWithoutThePayload) {
  const std::string id = EmitSale();
  sink::ExitResult r = Ctl({"list", "pending"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find(id), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("type=sale.created key=till-7 dest=\"\""));
  EXPECT_THAT(r.out, HasSubstr("attempts=0"));
  EXPECT_THAT(r.out, Not(HasSubstr("s-1")));  // the payload's content
}

TEST_F(CtlEmitTest, ListJsonParsesAndLeavesOutPayloads) {
  const std::string id = EmitSale();
  const nlohmann::json v = Json(Ctl({"list", "pending", "--json"}));
  EXPECT_EQ(Field(v, "state"), "pending");
  EXPECT_EQ(Field(v, "shown"), "1");
  EXPECT_EQ(Field(v, "total"), "1");
  EXPECT_EQ(Field(v, "truncated"), "false");
  ASSERT_TRUE(v.contains("events") && v.at("events").is_array()) << v.dump();
  ASSERT_EQ(v.at("events").size(), 1u);
  EXPECT_EQ(Field(v.at("events").at(0), "id"), id);
  EXPECT_FALSE(v.at("events").at(0).contains("payload"));
}

TEST_F(CtlEmitTest, StatsCountsThePendingEvent) {
  EmitSale();
  sink::ExitResult r = Ctl({"stats"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("pending events:      1\n"));
  EXPECT_THAT(r.out, HasSubstr("dead letters:        0\n"));
  EXPECT_THAT(r.out, HasSubstr("store dir mode:      0700\n"));
  const nlohmann::json v = Json(Ctl({"stats", "--json"}));
  EXPECT_EQ(Field(v, "store_dir_mode"), "0700");
  EXPECT_EQ(Field(v, "pending_events"), "1");
  EXPECT_EQ(Field(v, "dead_letters"), "0");
  EXPECT_EQ(Field(v, "delivered_total"), "0");
  EXPECT_NE(Field(v, "pending_bytes"), "0");
  EXPECT_TRUE(v.at("oldest_pending_age_ms").is_number_integer()) << v.dump();
}

TEST_F(CtlEmitTest, RepeatedIdempotencyKeyPrintsDuplicateAndTheSameId) {
  const std::string first = EmitSale({"--idempotency-key", "order-42"});
  const std::string again = EmitSale({"--idempotency-key", "order-42"});
  EXPECT_EQ(again, first + " duplicate");
  EXPECT_EQ(StoreStats().pending_events, 1u);
}

TEST_F(CtlEmitTest, CreatesATableTheStoreDoesNotHaveYet) {
  sink::ExitResult r =
      Ctl({"emit", "--table", "refunds", "--key", "r-1", "--value", "x",
           "--type", "refund.created", "--payload", "{}"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<std::vector<std::string>> tables = Store::ListTables(db());
  ASSERT_OUTBOX_OK(tables);
  EXPECT_THAT(*tables, ::testing::UnorderedElementsAre("sales", "refunds"));
  EXPECT_EQ(Ctl({"get", "--table", "refunds", "--key", "r-1"}).out, "x");
}

TEST_F(CtlEmitTest, InvalidJsonPayloadIsAUsageErrorUnlessTheContentTypeSaysSo) {
  std::vector<std::string> args = {"emit", "--table",   "sales", "--key",
                                   "k",    "--value",   "v",     "--type",
                                   "t",    "--payload", "{oops"};
  sink::ExitResult r = Ctl(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("outboxctl: --payload is not valid JSON"));
  EXPECT_EQ(StoreStats().pending_events, 0u);

  args.insert(args.end(), {"--content-type", "text/plain"});
  r = Ctl(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(CtlEmitTest, PayloadsRfc8259ForbidsAreRefused) {
  // Each is refused before the store is opened, so the loop is cheap. Not
  // here: a NUL byte, which no command-line argument can hold.
  for (const char* bad :
       {"",         "{",        "[1,]",        "{\"a\":1,}",  "01",
        "1.",       "-",        "1e",          "+1",          "'a'",
        "\"\x01\"", "\"\xFF\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\x\"",
        "{a:1}",    "[1] 2",    "nul",         "\"abc",       "{\"a\" 1}"}) {
    sink::ExitResult r = Ctl({"emit", "--table", "sales", "--key", "k",
                              "--value", "v", "--type", "t", "--payload", bad});
    EXPECT_EQ(r.exit_code, 2) << "accepted: " << bad;
    EXPECT_THAT(r.err, HasSubstr("--payload is not valid JSON (syntax error "
                                 "near byte "))
        << bad;
  }
  EXPECT_EQ(StoreStats().pending_events, 0u);
}

TEST_F(CtlEmitTest, InvalidJsonErrorSaysWhereButNotWhat) {
  sink::ExitResult r =
      Ctl({"emit", "--table", "sales", "--key", "k", "--value", "v", "--type",
           "t", "--payload", R"({"card":"4111-1111" "cvv":"737"})"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("(syntax error near byte 25)"));
  EXPECT_THAT(r.err, Not(HasSubstr("4111")));
  EXPECT_THAT(r.err, Not(HasSubstr("737")));
}

TEST_F(CtlEmitTest, MissingStoreIsNotFoundAndIsNotCreated) {
  const std::string missing = dir_.Sub("nowhere");
  sink::ExitResult r =
      CtlNoDb({"--db", missing, "emit", "--table", "sales", "--key", "k",
               "--value", "v", "--type", "t", "--payload", "{}"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("outboxctl: NOT_FOUND: no outbox store at"));
  EXPECT_STATUS_CODE(Store::ListTables(missing), absl::StatusCode::kNotFound);
}

TEST_F(CtlEmitTest, CreateMakesANewStore) {
  const std::string fresh = dir_.Sub("fresh/db");
  sink::ExitResult r =
      CtlNoDb({"--db", fresh, "emit", "--create", "--table", "sales", "--key",
               "k", "--value", "v", "--type", "t", "--payload", "{}"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      CtlNoDb({"--db", fresh, "get", "--table", "sales", "--key", "k"}).out,
      "v");
}

}  // namespace
}  // namespace outbox::ctl
