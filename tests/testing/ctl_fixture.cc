// Copyright (c) edge-outbox authors.

#include "tests/testing/ctl_fixture.h"

#include <utility>

#include "tests/testing/events.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status.h"

namespace outbox::ctl {

void CtlTest::SetUp() {
  Options options;
  options.tables = {"sales"};
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options, db());
  ASSERT_OUTBOX_OK(store);
  ASSERT_OUTBOX_OK((*store)->Close());
}

sink::ExitResult CtlTest::Ctl(const std::vector<std::string>& args) {
  std::vector<std::string> full = {"--db", db()};
  full.insert(full.end(), args.begin(), args.end());
  return CtlNoDb(full);
}

sink::ExitResult CtlTest::CtlNoDb(const std::vector<std::string>& args) {
  absl::StatusOr<sink::ExitResult> result =
      sink::RunToExit(OUTBOX_CTL_BINARY, dir_.path(), args, absl::Seconds(60));
  if (!result.ok()) {
    ADD_FAILURE() << result.status();
    return sink::ExitResult();
  }
  return *std::move(result);
}

std::unique_ptr<Store> CtlTest::OpenStore(Clock* clock) {
  Options options;
  options.clock = clock;
  absl::StatusOr<std::vector<std::string>> tables = Store::ListTables(db());
  EXPECT_OUTBOX_OK(tables);
  if (tables.ok()) options.tables = *tables;
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options, db());
  EXPECT_OUTBOX_OK(store);
  return store.ok() ? *std::move(store) : nullptr;
}

Stats CtlTest::StoreStats() {
  std::unique_ptr<Store> store = OpenStore();
  if (store == nullptr) return Stats();
  absl::StatusOr<Stats> stats = store->GetStats();
  EXPECT_OUTBOX_OK(stats);
  EXPECT_OUTBOX_OK(store->Close());
  return stats.ok() ? *stats : Stats();
}

std::string CtlTest::Commit(const Event& event) {
  std::unique_ptr<Store> store = OpenStore();
  if (store == nullptr) return "";
  Txn txn;
  const std::string id = txn.Emit(event);
  txn.Put("sales", "record-" + id, "v");
  EXPECT_OUTBOX_OK(store->Commit(txn));
  EXPECT_OUTBOX_OK(store->Close());
  return id;
}

void CtlTest::AgeStore(absl::Duration d) {
  testing::FakeClock clock(absl::Now());
  std::unique_ptr<Store> store = OpenStore(&clock);
  if (store == nullptr) return;
  clock.Advance(d);
  EXPECT_OUTBOX_OK(store->Sync());
  EXPECT_OUTBOX_OK(store->Close());
}

std::string CtlTest::MakeDeadLetter(absl::Time dead_at,
                                    const std::string& type) {
  return MakeDeadLetterAfter(dead_at, "HTTP 503", 503, "max attempts reached",
                             type);
}

std::string CtlTest::MakeDeadLetterAfter(absl::Time dead_at,
                                         const std::string& error,
                                         int http_status,
                                         const std::string& reason,
                                         const std::string& type) {
  testing::FakeClock clock(dead_at - absl::Minutes(5));
  std::unique_ptr<Store> store = OpenStore(&clock);
  if (store == nullptr) return "";
  Txn txn;
  const std::string id = txn.Emit(testing::MakeEvent(type, "", "{\"n\":1}"));
  EXPECT_OUTBOX_OK(store->Commit(txn));
  absl::StatusOr<PendingEvent> event = store->FindPending(id);
  EXPECT_OUTBOX_OK(event);
  if (!event.ok()) return "";
  clock.Set(dead_at);
  AttemptRecord attempt;
  attempt.error = error;
  attempt.http_status = http_status;
  attempt.next_attempt = dead_at;
  EXPECT_OUTBOX_OK(store->RecordAttempt(*event, attempt));
  event = store->FindPending(id);  // with the attempt recorded
  EXPECT_OUTBOX_OK(event);
  if (!event.ok()) return "";
  EXPECT_OUTBOX_OK(store->MoveToDeadLetters(*event, reason));
  EXPECT_OUTBOX_OK(store->Close());
  return id;
}

nlohmann::json CtlTest::Json(const sink::ExitResult& result) {
  nlohmann::json value = nlohmann::json::parse(result.out, /*cb=*/nullptr,
                                               /*allow_exceptions=*/false);
  EXPECT_FALSE(value.is_discarded()) << "stdout: " << result.out;
  return value.is_discarded() ? nlohmann::json::object() : value;
}

std::string Field(const nlohmann::json& v, absl::string_view key) {
  if (!v.is_object()) return "<missing>";
  const auto member = v.find(std::string(key));
  if (member == v.end()) return "<missing>";
  return member->is_string() ? member->get<std::string>() : member->dump();
}

}  // namespace outbox::ctl
