// Copyright (c) edge-outbox authors.
//
// Named crash points: places in the data path where a crash test may cut the
// power (see tests/crash/). Production code registers nothing, and each
// point then costs one atomic load.
//
// A registered hook typically kills the fault-injecting file system: from
// then on nothing reaches the disk, exactly as if the power had gone at that
// line, and the test reopens the store to see what survived.

#ifndef OUTBOX_LIB_CRASH_POINTS_H_
#define OUTBOX_LIB_CRASH_POINTS_H_

#include <functional>

#include "absl/strings/string_view.h"

namespace outbox::internal {

// The points, in data-path order.
inline constexpr char kCommitBeforeWrite[] = "commit.before_write";
inline constexpr char kCommitBetweenSplitBatches[] =
    "commit.between_split_batches";  // only with a broken test variant
inline constexpr char kCommitAfterWrite[] = "commit.after_write";
// The leader of a group commit, before the group's one write.
inline constexpr char kGroupBeforeWrite[] = "group.before_write";
inline constexpr char kAgentBeforeSend[] = "agent.before_send";
inline constexpr char kAgentAfterAnswer[] = "agent.after_answer";
inline constexpr char kAttemptBeforeWrite[] = "attempt.before_write";
// A workflow's requests (agent/workflow/agent_workflow.cc), a step's and a
// revert's apart: before the request leaves (the previous result synced), once
// its answer is in (its result not written yet), and once a round wrote the
// result but has not synced it (the next step not planned yet).
inline constexpr char kWorkflowStepBeforeSend[] = "workflow.step.before_send";
inline constexpr char kWorkflowStepAfterAnswer[] = "workflow.step.after_answer";
inline constexpr char kWorkflowStepBeforeSync[] = "workflow.step.before_sync";
inline constexpr char kWorkflowRevertBeforeSend[] =
    "workflow.revert.before_send";
inline constexpr char kWorkflowRevertAfterAnswer[] =
    "workflow.revert.after_answer";
inline constexpr char kWorkflowRevertBeforeSync[] =
    "workflow.revert.before_sync";
// A round wrote a step's "sent" mark (its first send is a round later, after
// the sync) but has not synced it: a cut here sends nothing.
inline constexpr char kWorkflowMarkBeforeSync[] = "workflow.mark.before_sync";
// A round wrote a workflow's completion (with its last step's result, as a
// delivery): it is synced with the acknowledgements, not before.
inline constexpr char kWorkflowCompletedWritten[] =
    "workflow.completed.written";
inline constexpr char kDeliveredBeforeWrite[] = "delivered.before_write";
inline constexpr char kDeadLetterBeforeWrite[] = "dead_letter.before_write";
inline constexpr char kReplayBeforeWrite[] = "replay.before_write";
inline constexpr char kPurgeBeforeWrite[] = "purge.before_write";

// Registers `hook`, called with the point's name each time a point is
// passed, on whatever thread passes it, possibly on several threads at once
// (so it must be thread-safe), and sometimes with the store's lock held (so
// it must not call back into the store, except where a test knows the point
// is passed without it: group.before_write). An empty function unregisters;
// a call already running finishes. For tests only. Thread-safe.
void TEST_SetCrashHook(std::function<void(absl::string_view point)> hook);

// Calls the registered hook, if any.
void CrashPoint(absl::string_view point);

}  // namespace outbox::internal

#endif  // OUTBOX_LIB_CRASH_POINTS_H_
