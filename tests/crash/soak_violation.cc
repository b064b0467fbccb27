// Copyright (c) edge-outbox authors.

#include "tests/crash/soak_violation.h"

namespace outbox::testing {

const char* ViolationKindName(ViolationKind kind) {
  switch (kind) {
    case ViolationKind::kReopenFailed:
      return "reopen_failed";
    case ViolationKind::kLostCommit:
      return "lost_commit";
    case ViolationKind::kRecordWithoutEvent:
      return "record_without_event";
    case ViolationKind::kEventWithoutRecord:
      return "event_without_record";
    case ViolationKind::kUncommittedEventSent:
      return "uncommitted_event_sent";
    case ViolationKind::kEventChanged:
      return "event_changed";
    case ViolationKind::kOrderBroken:
      return "order_broken";
    case ViolationKind::kIdempotencyBroken:
      return "idempotency_broken";
    case ViolationKind::kResurrected:
      return "resurrected";
    case ViolationKind::kStoredCountersWrong:
      return "stored_counters_wrong";
    case ViolationKind::kDurableAckLost:
      return "durable_ack_lost";
    case ViolationKind::kDeliveredTotalWrong:
      return "delivered_total_wrong";
    case ViolationKind::kGaveUpEarly:
      return "gave_up_early";
    case ViolationKind::kStalled:
      return "stalled";
    case ViolationKind::kUnexpectedError:
      return "unexpected_error";
  }
  return "?";
}

}  // namespace outbox::testing
