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
  for (const std::string& id : uncovered_results_) {
    if (durable_results_.emplace(id, receipts).second) {
      ++counts_.results_covered;
    }
  }
  uncovered_results_.clear();
  for (const std::string& id : uncovered_workflow_deliveries_) {
    workflow_delivered_[id].covered = true;
  }
  uncovered_workflow_deliveries_.clear();
}

void AckLedger::OnCancelAttempted(const std::string& id) {
  cancelled_.insert(id);
}

void AckLedger::OnWorkflowDeliveryReturned(const std::string& id, bool final) {
  ++counts_.workflow_deliveries_returned;
  workflow_delivered_[id] = {final, false};
  uncovered_workflow_deliveries_.push_back(id);
}

void AckLedger::OnResultReturned(const std::string& request_id) {
  ++counts_.results_returned;
  uncovered_results_.push_back(request_id);
}

void AckLedger::OnResultStored(const std::string& request_id, size_t receipts) {
  durable_results_.emplace(request_id, receipts);  // the earliest stays
  uncovered_results_.erase(std::remove(uncovered_results_.begin(),
                                       uncovered_results_.end(), request_id),
                           uncovered_results_.end());
}

void AckLedger::OnResultDurable(const std::string& request_id,
                                size_t receipts) {
  if (durable_results_.count(request_id) == 0) ++counts_.results_covered;
  OnResultStored(request_id, receipts);
}

size_t AckLedger::ResultDurableAt(const std::string& request_id) const {
  auto it = durable_results_.find(request_id);
  return it == durable_results_.end() ? kNotDurable : it->second;
}

void AckLedger::Cover(const std::string& id, size_t receipts) {
  open_[id].covered = true;
  durable_[id] = receipts;
}

uint64_t AckLedger::Check(const DiskState& disk,
                          const std::vector<ReceivedRequest>& log,
                          uint64_t workflow_deliveries,
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
  counts_.results_lost_uncovered += uncovered_results_.size();
  uncovered_results_.clear();
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
  checked += CheckWorkflowDeliveries(disk, out);
  CheckDeliveredTotal(disk, workflow_deliveries, out);
  return checked + 1;
}

uint64_t AckLedger::CheckWorkflowDeliveries(const DiskState& disk,
                                            std::vector<Violation>* out) {
  uint64_t checked = 0;
  for (const auto& [id, d] : workflow_delivered_) {
    ++checked;
    if (!d.covered || !disk.Holds(id)) continue;
    if (!d.final && cancelled_.contains(id)) continue;  // queued again
    out->push_back({ViolationKind::kDurableAckLost,
                    absl::StrCat("workflow event ", id,
                                 " is stored again after a power cut, though "
                                 "the Settle that removed it as delivered "
                                 "returned and a synced write covered it (",
                                 d.final ? "its compensation had finished"
                                         : "no cancel was made for it",
                                 ")")});
  }
  workflow_delivered_.clear();
  uncovered_workflow_deliveries_.clear();
  return checked;
}

// The window the guarantee allows: at least every durable ack, at most every
// event MarkDelivered was called for and the receiver answered 2xx; and
// exactly the events a reopen showed removed after MarkDelivered, each once,
// beside the workflow events' share.
void AckLedger::CheckDeliveredTotal(const DiskState& disk,
                                    uint64_t workflow_deliveries,
                                    std::vector<Violation>* out) {
  ++counts_.total_checks;
  const uint64_t stored = disk.queue.delivered_total();
  if (stored < workflow_deliveries) {
    out->push_back({ViolationKind::kDeliveredTotalWrong,
                    absl::StrCat("persisted delivered_total is ", stored,
                                 ", fewer than the ", workflow_deliveries,
                                 " times stored workflows say they left the "
                                 "queue as delivered")});
    return;
  }
  const uint64_t total = stored - workflow_deliveries;
  const uint64_t lower = durable_.size();
  const uint64_t upper = std::min(called_.size(), answered_ok_.size());
  if (total == delivered_.size() && lower <= total && total <= upper) return;
  out->push_back(
      {ViolationKind::kDeliveredTotalWrong,
       absl::StrCat("persisted delivered_total is ", stored, " (",
                    workflow_deliveries, " of it workflows); reopens showed ",
                    delivered_.size(),
                    " events removed after MarkDelivered; durable acks ", lower,
                    ", events acknowledged ", called_.size(),
                    ", answered 2xx by the receiver ", answered_ok_.size())});
}

}  // namespace outbox::testing
