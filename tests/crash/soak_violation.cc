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
    case ViolationKind::kStepNotDurable:
      return "step_not_durable";
    case ViolationKind::kResultLost:
      return "result_lost";
    case ViolationKind::kStepResent:
      return "step_resent";
    case ViolationKind::kRevertRepeated:
      return "revert_repeated";
    case ViolationKind::kForwardAfterCompensation:
      return "forward_after_compensation";
    case ViolationKind::kRevertOrder:
      return "revert_order";
    case ViolationKind::kDoneNotReverted:
      return "done_not_reverted";
    case ViolationKind::kWorkflowStateWrong:
      return "workflow_state_wrong";
    case ViolationKind::kUnexpectedError:
      return "unexpected_error";
  }
  return "?";
}

}  // namespace outbox::testing
