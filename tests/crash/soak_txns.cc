// Copyright (c) edge-outbox authors.

#include "tests/crash/soak_txns.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/crash/soak_records.h"

namespace outbox::testing {
namespace {

constexpr const char* kTypes[] = {"sale.created", "sale.refunded",
                                  "stock.moved"};
// How far back committed keys are looked for when repeating one.
constexpr size_t kRecentKeys = 32;
// Events that run the workflow, and transactions that cancel one of the
// most recent kRecentWorkflows (some still running, some completed).
constexpr double kWorkflowShare = 0.2;
constexpr double kCancelShare = 0.1;
constexpr size_t kRecentWorkflows = 12;

bool Chance(double p, std::mt19937_64* gen) {
  return std::uniform_real_distribution<double>(0, 1)(*gen) < p;
}

int Uniform(int lo, int hi, std::mt19937_64* gen) {
  return std::uniform_int_distribution<int>(lo, hi)(*gen);
}

}  // namespace

ModelTxn MakeSoakTxn(uint64_t serial, absl::Time now, absl::Time store_now,
                     absl::Duration window, const SoakModel& model,
                     std::mt19937_64* gen, OrderingKeySlot keys) {
  const int choices = (kSoakOrderingKeys - 1 - keys.slot) / keys.slots + 1;
  ModelTxn t;
  t.serial = serial;
  const int records = Chance(0.3, gen) ? 2 : 1;
  for (int i = 0; i < records; ++i) {
    t.record_keys.push_back(SoakRecordKey(serial, i));
  }
  const int events =
      1 + (Chance(0.35, gen) ? 1 : 0) + (Chance(0.1, gen) ? 1 : 0);
  std::vector<std::string> ids;
  for (int i = 0; i < events; ++i) {
    Event e;
    e.type = Chance(kWorkflowShare, gen) ? kSoakWorkflowType
                                         : kTypes[Uniform(0, 2, gen)];
    if (Chance(0.6, gen)) {
      e.ordering_key = absl::StrCat(
          "k", keys.slot + keys.slots * Uniform(0, choices - 1, gen));
    }
    e.payload = SoakPayload(serial, i, t.record_keys);
    if (Chance(0.15, gen)) {
      e.deliver_after = now + absl::Milliseconds(Uniform(500, 4000, gen));
    }
    ids.push_back(t.txn.Emit(e));
  }
  const std::vector<std::string>& running =
      model.workflows().cancel_candidates();
  if (!running.empty() && Chance(kCancelShare, gen)) {
    const size_t recent = std::min(running.size(), kRecentWorkflows);
    t.txn.Cancel(running[running.size() - 1 -
                         Uniform(0, static_cast<int>(recent) - 1, gen)],
                 "sale cancelled");
  }
  t.record_value = SoakRecordValue(ids);
  for (const std::string& key : t.record_keys) {
    t.txn.Put(kSoakTable, key, t.record_value);
  }

  const double draw = std::uniform_real_distribution<double>(0, 1)(*gen);
  if (draw < 0.4) {
    t.txn.SetIdempotencyKey(absl::StrCat("idem-", serial),
                            absl::StrCat("response-", serial));
  } else if (draw < 0.5) {
    const auto& keys = model.committed_keys();
    std::vector<const std::string*> recent;
    for (size_t i = keys.size(); i > 0 && keys.size() - i < kRecentKeys; --i) {
      if (store_now - keys[i - 1].first < window / 2) {
        recent.push_back(&keys[i - 1].second);
      }
    }
    if (!recent.empty()) {
      const std::string& key =
          *recent[Uniform(0, static_cast<int>(recent.size()) - 1, gen)];
      t.txn.SetIdempotencyKey(key, "a different response");
    }
  }
  return t;
}

}  // namespace outbox::testing
