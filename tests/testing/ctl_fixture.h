// Copyright (c) edge-outbox authors.
//
// Test fixture for outboxctl: a store in a fresh directory, prepared through
// the Store API, and the real binary run against it as a child process.

#ifndef OUTBOX_TESTS_TESTING_CTL_FIXTURE_H_
#define OUTBOX_TESTS_TESTING_CTL_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "outbox/clock.h"
#include "outbox/store.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/temp_dir.h"

namespace outbox::ctl {

class CtlTest : public ::testing::Test {
 protected:
  // Creates the store (table "sales") and closes it again.
  void SetUp() override;

  std::string db() const { return dir_.Sub("db"); }

  // Runs `outboxctl --db <db()> args...` to completion.
  sink::ExitResult Ctl(const std::vector<std::string>& args);
  // Runs `outboxctl args...` (no --db).
  sink::ExitResult CtlNoDb(const std::vector<std::string>& args);

  // Opens the store for writing in this process (with every table it has),
  // reading time from `clock` when it is not null.
  std::unique_ptr<Store> OpenStore(Clock* clock = nullptr);

  // The store's figures, read through the Store API.
  Stats StoreStats();

  // Commits `event` with a "sales" record; returns the event id.
  std::string Commit(const Event& event);

  // Commits an event of `type` and moves it to the dead letters at `dead_at`
  // after one failed attempt (HTTP 503); returns its id.
  std::string MakeDeadLetter(absl::Time dead_at,
                             const std::string& type = "sale.created");
  // The same with `reason`, after an attempt that ended with `error` and
  // `http_status` (0: no HTTP answer, as from an MQTT or Kafka destination).
  std::string MakeDeadLetterAfter(absl::Time dead_at, const std::string& error,
                                  int http_status, const std::string& reason,
                                  const std::string& type = "sale.created");

  // Keeps the store open for `d` of a fake monotonic clock and persists its
  // store clock (Store::StoreClockNow) with an empty synced write: everything
  // in it is then `d` older for retention, as after `d` of a till's running
  // time. (Setting the wall clock ages nothing: the store clock ignores it.)
  void AgeStore(absl::Duration d);

  // Stdout of `result` parsed as one JSON document; a failure (and an empty
  // object) if it is not.
  nlohmann::json Json(const sink::ExitResult& result);

  testing::TempDir dir_;
};

// The text of member `key` of the object `v` (a string's value, anything
// else as compact JSON: "12", "true", "null"), or "<missing>".
std::string Field(const nlohmann::json& v, absl::string_view key);

}  // namespace outbox::ctl

#endif  // OUTBOX_TESTS_TESTING_CTL_FIXTURE_H_
