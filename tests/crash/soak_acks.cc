// Copyright (c) edge-outbox authors.

#include "tests/crash/soak_acks.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace outbox::testing {

void AckLedger::OnCalled(const std::string& id) {
  open_[id] = Ack();
  called_.insert(id);
}

void AckLedger::OnReturned(const std::string& id, bool synced,
                           size_t receipts) {
  open_[id].returned = true;
  ++counts_.returned;
  if (synced) {
    Cover(id, receipts);
  } else {
    uncovered_.push_back(id);
  }
}

void AckLedger::OnSyncedWrite(size_t receipts) {
  for (const std::string& id : uncovered_) Cover(id, receipts);
  uncovered_.clear();
}

void AckLedger::Cover(const std::string& id, size_t receipts) {
  open_[id].covered = true;
  durable_[id] = receipts;
}

uint64_t AckLedger::Check(const DiskState& disk,
                          const std::vector<ReceivedRequest>& log,
                          std::vector<Violation>* out) {
  uint64_t checked = 0;
  for (const auto& [id, ack] : open_) {
    ++checked;
    if (!disk.Holds(id)) {
      if (delivered_.insert(id).second) ++counts_.confirmed;
      continue;
    }
    if (ack.covered) {
      out->push_back({ViolationKind::kDurableAckLost,
                      absl::StrCat("event ", id,
                                   " is stored again after a power cut, "
                                   "though MarkDelivered returned and a synced "
                                   "write covered it")});
      durable_.erase(id);  // reported once
    } else if (ack.returned) {
      ++counts_.lost_uncovered;  // allowed: it will be resent, same id
    }
  }
  open_.clear();
  uncovered_.clear();  // whatever was not covered went with the power
  for (; log_seen_ < log.size(); ++log_seen_, ++checked) {
    const ReceivedRequest& r = log[log_seen_];
    if (r.answer == Answer::kOk) answered_ok_.insert(r.webhook_id);
    auto it = durable_.find(r.webhook_id);
    if (it != durable_.end() && r.arrival >= it->second) {
      out->push_back({ViolationKind::kDurableAckLost,
                      absl::StrCat("event ", r.webhook_id, " was sent again (",
                                   "arrival ", r.arrival,
                                   ") after its acknowledgement was durable "
                                   "(by arrival ",
                                   it->second, ")")});
      durable_.erase(it);
    }
  }
  CheckDeliveredTotal(disk, out);
  return checked + 1;
}

// The window the guarantee allows: at least every durable ack, at most every
// event MarkDelivered was called for and the receiver answered 2xx; and
// exactly the events a reopen showed removed after MarkDelivered, each once.
void AckLedger::CheckDeliveredTotal(const DiskState& disk,
                                    std::vector<Violation>* out) {
  ++counts_.total_checks;
  const uint64_t total = disk.queue.delivered_total();
  const uint64_t lower = durable_.size();
  const uint64_t upper = std::min(called_.size(), answered_ok_.size());
  if (total == delivered_.size() && lower <= total && total <= upper) return;
  out->push_back(
      {ViolationKind::kDeliveredTotalWrong,
       absl::StrCat("persisted delivered_total is ", total, "; reopens showed ",
                    delivered_.size(),
                    " events removed after MarkDelivered; durable acks ", lower,
                    ", events acknowledged ", called_.size(),
                    ", answered 2xx by the receiver ", answered_ok_.size())});
}

}  // namespace outbox::testing
