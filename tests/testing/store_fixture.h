// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_TESTS_TESTING_STORE_FIXTURE_H_
#define OUTBOX_TESTS_TESTING_STORE_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "outbox/store.h"
#include "tests/testing/events.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"

namespace outbox::testing {

// A store in a fresh directory with a "sales" table and a fake clock, and a
// Reopen() that closes and opens it again as after a restart.
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.tables = {"sales"};
    options_.clock = &clock_;
    Reopen();
  }

  void Reopen() {
    if (store_ != nullptr) {
      ASSERT_OUTBOX_OK(store_->Close());
    }
    store_.reset();
    auto store = Store::Open(options_, path());
    ASSERT_OUTBOX_OK(store);
    store_ = std::move(*store);
  }

  std::string path() const { return dir_.Sub("db"); }

  // Commits one event (and a record named after it); returns its id.
  std::string CommitEvent(const Event& event) {
    Txn txn;
    std::string id = txn.Emit(event);
    txn.Put("sales", "record-" + id, event.payload);
    auto result = store_->Commit(txn);
    EXPECT_TRUE(result.ok()) << result.status();
    return id;
  }

  // Ids of NextDue(limit).events, in order.
  std::vector<std::string> DueIds(size_t limit = 100) {
    std::vector<std::string> ids;
    auto due = store_->NextDue(limit);
    EXPECT_TRUE(due.ok()) << due.status();
    if (!due.ok()) return ids;
    for (const PendingEvent& e : due->events) ids.push_back(e.id);
    return ids;
  }

  // The due event `id`, from NextDue(100).
  PendingEvent DueWithId(const std::string& id) {
    auto due = store_->NextDue(100);
    EXPECT_TRUE(due.ok()) << due.status();
    if (due.ok()) {
      for (const PendingEvent& e : due->events) {
        if (e.id == id) return e;
      }
    }
    ADD_FAILURE() << "event " << id << " is not due";
    return PendingEvent();
  }

  PendingEvent OnlyDue() {
    auto due = store_->NextDue(100);
    EXPECT_TRUE(due.ok()) << due.status();
    if (!due.ok() || due->events.size() != 1) {
      ADD_FAILURE() << "expected exactly one due event";
      return PendingEvent();
    }
    return due->events[0];
  }

  TempDir dir_;
  FakeClock clock_;
  Options options_;
  std::unique_ptr<Store> store_;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_STORE_FIXTURE_H_
