// Copyright (c) edge-outbox authors.

#include "tools/audit/delivery_audit.h"

#include <map>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/json_fields.h"

namespace outbox::audit {

const char* AuditCheckName(AuditCheck check) {
  switch (check) {
    case AuditCheck::kAcknowledgedTwice:
      return "acknowledged_twice";
    case AuditCheck::kAcknowledgedOutOfRange:
      return "acknowledged_out_of_range";
    case AuditCheck::kNotASaleEvent:
      return "not_a_sale_event";
    case AuditCheck::kBadSignature:
      return "bad_signature";
    case AuditCheck::kIdWithTwoBodies:
      return "id_with_two_bodies";
    case AuditCheck::kSaleWithTwoIds:
      return "sale_with_two_ids";
    case AuditCheck::kAcknowledgedNotDelivered:
      return "acknowledged_not_delivered";
    case AuditCheck::kAcknowledgedIdNotSent:
      return "acknowledged_id_not_sent";
    case AuditCheck::kNotCommitted:
      return "not_committed";
    case AuditCheck::kCommittedIdDiffers:
      return "committed_id_differs";
    case AuditCheck::kCounterWrong:
      return "counter_wrong";
    case AuditCheck::kCommittedNotDelivered:
      return "committed_not_delivered";
    case AuditCheck::kBeyondCounter:
      return "beyond_counter";
    case AuditCheck::kNotDrained:
      return "not_drained";
    case AuditCheck::kOrderBroken:
      return "order_broken";
    case AuditCheck::kGivenUpByClass:
      return "given_up_by_class";
  }
  return "?";
}

namespace {

constexpr char kTable[] = "sales";             // as in pos_sim_main.cc
constexpr char kNextSaleKey[] = "!next-sale";  // as in pos_sim_main.cc
constexpr size_t kViolationsKept = 40;

// What the sink's log shows about one sale.
struct SaleSeen {
  std::set<std::string> ids;
  std::optional<size_t> first_request;  // index into the log
  std::optional<size_t> first_ok;
};

// One audit of one soak. REQUIRES: External synchronization.
class Auditor {
 public:
  Auditor(const AuditInput& input, Store* store) : in_(input), store_(store) {}

  AuditReport Run() {
    CheckAcknowledged();
    GroupBatches();
    ScanRequests();
    CheckEachAcknowledgedSaleDelivered();
    CheckEveryDeliveredSaleCommitted();
    CheckContiguousAndDrained();
    CheckFirstDeliveriesInCommitOrder();
    return std::move(report_);
  }

 private:
  void Violation(AuditCheck check, std::string what) {
    ++report_.violation_count;
    const char* name = AuditCheckName(check);
    ++report_.fired[name];
    if (report_.violations.size() < kViolationsKept) {
      report_.violations.push_back(absl::StrCat("[", name, "] ", what));
    }
  }
  std::string Sale(int64_t n) const { return absl::StrCat(in_.till, "-", n); }

  // Each sale is acknowledged once: the counter is committed with the sale,
  // so a restart continues after every acknowledged sale.
  void CheckAcknowledged() {
    report_.acknowledged = static_cast<int64_t>(in_.acknowledged.size());
    for (const AcknowledgedSale& a : in_.acknowledged) {
      if (a.n < 0 || a.n >= in_.sales) {
        Violation(AuditCheck::kAcknowledgedOutOfRange,
                  absl::StrCat("acknowledged sale number ", a.n,
                               " is outside [0, ", in_.sales, ")"));
        continue;
      }
      auto [it, fresh] = acked_.emplace(a.n, a);
      if (!fresh) {
        Violation(AuditCheck::kAcknowledgedTwice,
                  absl::StrCat("sale ", Sale(a.n), " acknowledged twice: run ",
                               it->second.run, " (", it->second.event_id,
                               ") and run ", a.run, " (", a.event_id, ")"));
      }
    }
  }

  // A batch is batch_size consecutive lines of one batch_id (the sink logs
  // it so; a resend of the same batch follows as a batch of its own).
  // Sets request_start_[i] to the line its request's first event is on.
  void GroupBatches() {
    const std::vector<SinkRequest>& lines = in_.requests;
    request_start_.resize(lines.size());
    for (size_t i = 0; i < lines.size();) {
      size_t size = 1;
      const int64_t claimed = lines[i].batch_size;
      if (claimed > 1 && i + claimed <= lines.size()) {
        while (size < static_cast<size_t>(claimed) &&
               lines[i + size].batch_id == lines[i].batch_id) {
          ++size;
        }
        if (size < static_cast<size_t>(claimed)) size = 1;  // torn: singles
      }
      if (size > 1) {
        ++report_.batch_requests;
        report_.batched_requests += static_cast<int64_t>(size);
      }
      for (size_t j = i; j < i + size; ++j) request_start_[j] = i;
      i += size;
    }
  }

  void ScanRequests() {
    std::map<std::string, const SinkRequest*> first_of_id;
    for (size_t i = 0; i < in_.requests.size(); ++i) {
      const SinkRequest& r = in_.requests[i];
      ++report_.requests;
      if (r.ok()) ++report_.deliveries;
      if (r.duplicate) ++report_.duplicates;
      if (r.dropped) ++report_.drops;
      if (!r.dropped && !r.ok()) ++report_.failures;
      if (r.id.empty() || r.n < 0 || r.sale != Sale(r.n)) {
        Violation(AuditCheck::kNotASaleEvent,
                  absl::StrCat("sink line ", r.seq, " is not a sale event of ",
                               in_.till, ": id \"", r.id, "\" body ", r.body));
        continue;
      }
      if (in_.require_signatures && !r.signature_valid) {
        Violation(AuditCheck::kBadSignature,
                  absl::StrCat("sink line ", r.seq, " has a bad signature"));
      }
      auto [first, fresh] = first_of_id.emplace(r.id, &r);
      if (!fresh) {
        ++report_.resends;
        if (first->second->body != r.body) {
          Violation(AuditCheck::kIdWithTwoBodies,
                    absl::StrCat("id ", r.id, " carried two bodies: line ",
                                 first->second->seq, " ", first->second->body,
                                 ", line ", r.seq, " ", r.body));
        }
      }
      SaleSeen& seen = sales_[r.n];
      seen.ids.insert(r.id);
      if (!seen.first_request) seen.first_request = i;
      if (r.ok() && !seen.first_ok) seen.first_ok = i;
    }
    for (const auto& [n, seen] : sales_) {
      if (seen.ids.size() > 1) {
        Violation(
            AuditCheck::kSaleWithTwoIds,
            absl::StrCat("sale ", Sale(n), " was sent under ", seen.ids.size(),
                         " ids: ", absl::StrJoin(seen.ids, ", ")));
      }
    }
  }

  void CheckEachAcknowledgedSaleDelivered() {
    for (const auto& [n, a] : acked_) {
      auto it = sales_.find(n);
      if (it == sales_.end() || !it->second.first_ok) {
        if (GivenUp(n, a.event_id)) continue;
        Violation(AuditCheck::kAcknowledgedNotDelivered,
                  absl::StrCat("acknowledged sale ", Sale(n), " (", a.event_id,
                               ", run ", a.run, ") was never answered 2xx"));
      } else if (it->second.ids.size() == 1 &&
                 *it->second.ids.begin() != a.event_id) {
        Violation(AuditCheck::kAcknowledgedIdNotSent,
                  absl::StrCat("acknowledged sale ", Sale(n), " printed id ",
                               a.event_id, " but was sent as ",
                               *it->second.ids.begin()));
      }
    }
  }

  // The store's record of a sale names the event committed with it.
  void CheckEveryDeliveredSaleCommitted() {
    for (const auto& [n, seen] : sales_) {
      absl::StatusOr<std::string> record = store_->Get(kTable, Sale(n));
      if (!record.ok()) {
        Violation(AuditCheck::kNotCommitted,
                  absl::StrCat("sale ", Sale(n), " reached the sink but the ",
                               "store has no record of it: ",
                               record.status().ToString()));
        continue;
      }
      recorded_.insert(n);
      const std::string committed_id =
          JsonField(*record, "event_id").value_or("");
      const std::string& id = *seen.ids.begin();
      if (seen.ids.size() == 1 &&
          committed_id != absl::StrCat("\"", id, "\"")) {
        Violation(AuditCheck::kCommittedIdDiffers,
                  absl::StrCat("sale ", Sale(n), " reached the sink as ", id,
                               " but was committed with ", committed_id));
      }
    }
  }

  void CheckContiguousAndDrained() {
    absl::StatusOr<std::string> next = store_->Get(kTable, kNextSaleKey);
    if (!next.ok() || !absl::SimpleAtoi(*next, &report_.committed)) {
      Violation(AuditCheck::kCounterWrong,
                absl::StrCat("the store has no readable next-sale counter: ",
                             next.status().ToString()));
      return;
    }
    if (report_.committed != in_.sales) {
      Violation(AuditCheck::kCounterWrong,
                absl::StrCat("the store's next-sale counter is ",
                             report_.committed, ", want ", in_.sales));
    }
    for (int64_t n = 0; n < report_.committed; ++n) {
      if (acked_.count(n) != 0) continue;
      ++report_.committed_unacknowledged;
      auto it = sales_.find(n);
      if (it == sales_.end() || !it->second.first_ok) {
        if (GivenUp(n, RecordedId(n))) continue;
        Violation(AuditCheck::kCommittedNotDelivered,
                  absl::StrCat("committed sale ", Sale(n),
                               " was never answered 2xx"));
      }
    }
    for (int64_t n : recorded_) {
      if (n >= report_.committed) {
        Violation(AuditCheck::kBeyondCounter,
                  absl::StrCat("sale ", Sale(n), " reached the sink beyond ",
                               "the counter ", report_.committed));
      }
    }
    absl::StatusOr<Stats> stats = store_->GetStats();
    if (!stats.ok()) {
      Violation(AuditCheck::kNotDrained,
                absl::StrCat("GetStats: ", stats.status().ToString()));
    } else if (stats->pending_events != 0 ||
               stats->dead_letters != static_cast<uint64_t>(report_.given_up)) {
      Violation(AuditCheck::kNotDrained,
                absl::StrCat("after draining, the store still has ",
                             stats->pending_events, " pending events and ",
                             stats->dead_letters - report_.given_up,
                             " dead letters (besides ", report_.given_up,
                             " given up by their class)"));
    }
  }

  // The event id sale `n`'s record names, or "".
  std::string RecordedId(int64_t n) const {
    absl::StatusOr<std::string> record = store_->Get(kTable, Sale(n));
    if (!record.ok()) return "";
    std::string id = JsonField(*record, "event_id").value_or("");
    return id.size() >= 2 ? id.substr(1, id.size() - 2) : "";  // unquoted
  }

  // Whether sale `n` (event `id`) is a dead letter its class gave up; if
  // so, that is reported here (given_up_by_class) and counted.
  bool GivenUp(int64_t n, const std::string& id) {
    if (id.empty()) return false;
    absl::StatusOr<DeadLetter> dead = store_->FindDeadLetter(id);
    if (!dead.ok() || !(absl::StartsWith(dead->reason, "evicted:") ||
                        absl::StartsWith(dead->reason, "expired:"))) {
      return false;
    }
    if (!given_up_.insert(n).second) return true;
    ++report_.given_up;
    Violation(AuditCheck::kGivenUpByClass,
              absl::StrCat("sale ", Sale(n), " (", id, ") was never answered ",
                           "2xx: its class gave it up, it is not lost (",
                           dead->reason, ")"));
    return true;
  }

  // One ordering key (the till): sale n may be sent only after sale n-1 was
  // answered 2xx, or right behind it in one batch, which also puts first
  // deliveries in commit order.
  void CheckFirstDeliveriesInCommitOrder() {
    for (const auto& [n, seen] : sales_) {
      auto previous = sales_.find(n - 1);
      if (n == 0 || previous == sales_.end() || !previous->second.first_ok) {
        continue;  // a predecessor never answered 2xx: not this check's
      }
      const size_t first = *seen.first_request;
      if (*previous->second.first_ok > first &&
          !EarlierInItsBatch(n - 1, first)) {
        Violation(
            AuditCheck::kOrderBroken,
            absl::StrCat("sale ", Sale(n), " was first sent at sink ", "line ",
                         in_.requests[first].seq, ", before sale ", Sale(n - 1),
                         " had been answered 2xx"));
      }
    }
  }

  // Whether sale `n` came in the same request as line `line`, before it.
  bool EarlierInItsBatch(int64_t n, size_t line) const {
    for (size_t j = request_start_[line]; j < line; ++j) {
      if (in_.requests[j].n == n) return true;
    }
    return false;
  }

  const AuditInput& in_;
  Store* const store_;
  AuditReport report_;
  std::map<int64_t, AcknowledgedSale> acked_;
  std::map<int64_t, SaleSeen> sales_;
  std::set<int64_t> recorded_;         // sales the sink saw that have a record
  std::set<int64_t> given_up_;         // sales reported by given_up_by_class
  std::vector<size_t> request_start_;  // per line: its request's first line
};

}  // namespace

AuditReport AuditDeliveries(const AuditInput& input, Store* store) {
  return Auditor(input, store).Run();
}

std::string AuditSummary(const AuditReport& r, const std::string& prefix) {
  std::string out = absl::StrCat(
      prefix, " sales committed ", r.committed, ", acknowledged ",
      r.acknowledged, ", committed but never acknowledged ",
      r.committed_unacknowledged, "\n", prefix, " receiver: ", r.requests,
      r.batch_requests > 0
          ? absl::StrCat(" events received (", r.batched_requests,
                         " of them in ", r.batch_requests, " batches), ")
          : " requests, ",
      r.deliveries, " answered 2xx, ", r.duplicates, " duplicates, ", r.resends,
      " resends, ", r.drops, " drops, ", r.failures, " failed\n", prefix,
      " violations: ", r.violation_count);
  if (r.fired.empty()) return out;
  std::vector<std::string> fired;
  for (const auto& [check, count] : r.fired) {
    fired.push_back(absl::StrCat(check, " ", count));
  }
  absl::StrAppend(&out, " (", absl::StrJoin(fired, ", "), ")");
  return out;
}

}  // namespace outbox::audit
