// Copyright (c) edge-outbox authors.
//
// outboxctl retry-step ID STEP: a dead-lettered workflow back in the queue,
// resumed at a step (retry_step_plan.h decides how).

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tools/ctl/command.h"
#include "tools/ctl/retry_step_plan.h"
#include "tools/ctl/store_access.h"
#include "tools/ctl/text.h"
#include "tools/ctl/workflow_view.h"

namespace outbox::ctl {
namespace {

constexpr char kRetryStepUsage[] =
    "usage: outboxctl --db DIR retry-step ID STEP\n"
    "\n"
    "Puts the dead-lettered workflow ID back at the end of the queue,\n"
    "resumed at the step named STEP (see `show ID`):\n"
    "  - needs_attention (a revert failed for good): its compensation\n"
    "    resumes at STEP, the step whose revert failed, or an earlier step\n"
    "    still done if the failed one was undone by hand;\n"
    "  - compensated with no step reverted (nothing was undone, e.g. the\n"
    "    first step failed): its steps run again from STEP, at or before\n"
    "    the one that failed.\n"
    "Any other workflow is refused: one that is pending runs by itself; one\n"
    "that completed, was compensated after a cancel, or had steps reverted\n"
    "needs a new event. Writes: stop outbox-agent first.\n";

// Refuses an event that is not a dead letter, saying why.
absl::Status CheckDeadLetter(Store* store, const std::string& id,
                             const std::optional<WorkflowView>& workflow) {
  absl::StatusOr<DeadLetter> dead = store->FindDeadLetter(id);
  if (dead.ok() || !absl::IsNotFound(dead.status())) return dead.status();
  absl::StatusOr<PendingEvent> pending = store->FindPending(id);
  if (pending.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "event ", Quote(id),
        " is pending: its workflow is running or waiting, and the agent "
        "resumes it by itself; retry-step is for a dead letter"));
  }
  if (!absl::IsNotFound(pending.status())) return pending.status();
  if (workflow.has_value() && workflow->started &&
      workflow->state.phase() == storage::WORKFLOW_PHASE_COMPLETED) {
    return absl::FailedPreconditionError(
        absl::StrCat("workflow ", Quote(id),
                     " completed: nothing to retry; commit a new event to run "
                     "it again"));
  }
  return absl::NotFoundError(absl::StrCat("no dead letter with id ", id));
}

absl::Status RetryStep(Store* store, const std::string& id,
                       const std::string& step, std::FILE* out) {
  OUTBOX_ASSIGN_OR_RETURN(const std::optional<WorkflowView> workflow,
                          LoadWorkflow(store, id, /*max_results=*/0));
  OUTBOX_RETURN_IF_ERROR(CheckDeadLetter(store, id, workflow));
  if (!workflow.has_value()) {
    return absl::NotFoundError(absl::StrCat(
        "dead letter ", Quote(id),
        " has no workflow stored (no step of it ran): `outboxctl replay ",
        Quote(id), "` sends it again"));
  }
  OUTBOX_ASSIGN_OR_RETURN(const RetryPlan plan,
                          PlanRetryStep(*workflow, id, step));
  OUTBOX_RETURN_IF_ERROR(
      store->RetryWorkflow(id, plan.state.SerializeAsString()));
  Write(out,
        absl::StrCat("resumed workflow ", Quote(id), ": ", plan.summary, "\n"));
  return absl::OkStatus();
}

absl::Status RunRetryStep(const CommandContext& context,
                          const ParsedArgs& args) {
  if (args.positional.size() != 2 || args.positional[0].empty() ||
      args.positional[1].empty()) {
    return UsageError(
        "retry-step needs two arguments: the event id and a step name");
  }
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForWriting(context.db));
  const absl::Status status = RetryStep(store.get(), args.positional[0],
                                        args.positional[1], context.out);
  absl::Status closed = CloseStore(std::move(store));
  return status.ok() ? closed : status;
}

}  // namespace

const Command& RetryStepCommand() {
  static const Command* const command =
      new Command{"retry-step",
                  "resume a dead-lettered workflow at one of its steps",
                  kRetryStepUsage,
                  {},
                  RunRetryStep};
  return *command;
}

}  // namespace outbox::ctl
