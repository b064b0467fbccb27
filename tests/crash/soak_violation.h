// Copyright (c) edge-outbox authors.
//
// The checks of the power-cut soak, each under a stable name: the name a
// violation is reported by (SoakReport), the broken-store tests assert on
// and docs/reliability.md's table lists. power_cut_soak_test.cc states the
// invariant behind each.

#ifndef OUTBOX_TESTS_CRASH_SOAK_VIOLATION_H_
#define OUTBOX_TESTS_CRASH_SOAK_VIOLATION_H_

#include <string>

namespace outbox::testing {

enum class ViolationKind {
  kReopenFailed,          // the store did not reopen after a power cut
  kLostCommit,            // a commit that returned OK (or that a reopen
                          // showed) is gone, records and events alike
  kRecordWithoutEvent,    // a record is there, an event of its txn is gone
                          // without having been delivered
  kEventWithoutRecord,    // an event is there (or was delivered), a record
                          // of its txn is not
  kUncommittedEventSent,  // the receiver got an event that was never
                          // committed
  kEventChanged,          // a (re)sent or stored event's body differs
  kOrderBroken,           // first deliveries of an ordering key out of
                          // commit order
  kIdempotencyBroken,     // a repeated idempotency key wrote a second set
  kResurrected,           // something a reopen showed gone came back
  kStoredCountersWrong,   // the persisted QueueState disagrees with the
                          // entries stored beside it
  kDurableAckLost,        // an event whose acknowledgement was durable is
                          // pending again, or was sent again
  kDeliveredTotalWrong,   // the persisted delivered_total is not the number
                          // of events removed as delivered
  kGaveUpEarly,           // a dead letter the retry policy did not call for
  kStalled,               // an event still pending after the rounds a
                          // healthy receiver needs, after a clock jump
  // Workflows (tests/crash/soak_workflows.h):
  kStepNotDurable,            // a step (or revert) first sent before the result
                              // of the one before it was durable
  kResultLost,                // a step's durable 2xx result is not stored after
                              // a reopen
  kStepResent,                // a step sent again after its 2xx result was
                              // durable
  kRevertRepeated,            // a revert sent again after its 2xx result was
                              // durable, or under another revert's id
  kForwardAfterCompensation,  // a step sent after a revert of its workflow
  kRevertOrder,               // reverts of a workflow not first sent last first
  kDoneNotReverted,           // a compensated workflow left a step its receiver
                     // processed (answered 2xx, or lost that answer) undone
  kWorkflowStateWrong,  // a stored workflow disagrees with where its event
                        // is or with what the receiver got
  kUnexpectedError,     // an operation failed with the power on
};

// The check's stable name, e.g. "lost_commit".
const char* ViolationKindName(ViolationKind kind);

struct Violation {
  ViolationKind kind;
  std::string detail;
};

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_VIOLATION_H_
