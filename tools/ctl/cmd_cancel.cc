// Copyright (c) edge-outbox authors.
//
// outboxctl cancel ID (Txn::Cancel of a workflow's event) or cancel --key KEY
// (Txn::CancelByIdempotencyKey), committed alone.

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tools/ctl/command.h"
#include "tools/ctl/store_access.h"
#include "tools/ctl/text.h"
#include "tools/ctl/workflow_view.h"

namespace outbox::ctl {
namespace {

constexpr char kCancelUsage[] =
    "usage: outboxctl --db DIR cancel ID [--reason TEXT]\n"
    "       outboxctl --db DIR cancel --key KEY [--reason TEXT]\n"
    "\n"
    "Cancels the workflow of event ID, as Txn::Cancel does in the\n"
    "application: the agent starts no further step of it and reverts the\n"
    "steps that completed, last first; a workflow that completed is queued\n"
    "again for that. ID must be pending or have a stored workflow. The\n"
    "first cancel wins: cancelling again changes nothing, and says so. A\n"
    "cancel of an event whose type has no workflow is recorded and has no\n"
    "effect. Writes: stop outbox-agent first.\n"
    "\n"
    "  --key KEY       cancel the workflows of the commit made with the\n"
    "                  idempotency key KEY (Txn::CancelByIdempotencyKey),\n"
    "                  in place of ID. The store remembers a key for its\n"
    "                  idempotency window (24 hours by default); an older\n"
    "                  key is not found: cancel by the event id then\n"
    "  --reason TEXT   why, for operators (`show ID`); at most 1024 bytes.\n"
    "                  Default: \"outboxctl cancel\"\n";

// What the committed cancel does, given what was stored before it.
std::string Outcome(const std::string& id,
                    const std::optional<WorkflowView>& workflow) {
  const storage::WorkflowPhase phase =
      workflow.has_value() && workflow->started
          ? workflow->state.phase()
          : storage::WORKFLOW_PHASE_UNSPECIFIED;
  if (phase == storage::WORKFLOW_PHASE_COMPLETED) {
    return absl::StrCat("cancelled ", Quote(id),
                        ": its workflow had completed and is queued again, so "
                        "that the agent reverts its steps, last first\n");
  }
  if (phase == storage::WORKFLOW_PHASE_COMPENSATED ||
      phase == storage::WORKFLOW_PHASE_NEEDS_ATTENTION) {
    return absl::StrCat("cancel of ", Quote(id),
                        " recorded; its workflow had already finished (",
                        PhaseName(*workflow), "), so nothing more runs\n");
  }
  return absl::StrCat("cancelled ", Quote(id),
                      ": the agent starts no further step of it and reverts "
                      "the completed ones, last first\n");
}

absl::Status Cancel(Store* store, const std::string& id,
                    const std::string& reason, std::FILE* out) {
  OUTBOX_ASSIGN_OR_RETURN(const std::optional<WorkflowView> workflow,
                          LoadWorkflow(store, id, /*max_results=*/0));
  if (!workflow.has_value()) {
    absl::StatusOr<PendingEvent> pending = store->FindPending(id);
    if (absl::IsNotFound(pending.status())) {
      return absl::NotFoundError(absl::StrCat(
          "no pending event or stored workflow with id ", id,
          ": nothing to cancel (check the id with `outboxctl show`)"));
    }
    if (!pending.ok()) return pending.status();
  }
  if (workflow.has_value() && workflow->record.cancelled) {
    Write(out, absl::StrCat(Quote(id), " was already cancelled at ",
                            FormatTimeOr(workflow->record.cancelled_at, "-"),
                            " (reason ", Quote(workflow->record.cancel_reason),
                            "): nothing changed\n"));
    return absl::OkStatus();
  }
  Txn txn;
  txn.Cancel(id, reason);
  OUTBOX_RETURN_IF_ERROR(store->Commit(txn).status());
  Write(out, Outcome(id, workflow));
  return absl::OkStatus();
}

absl::Status CancelByKey(Store* store, const std::string& key,
                         const std::string& reason, std::FILE* out) {
  Txn txn;
  txn.CancelByIdempotencyKey(key, reason);
  OUTBOX_RETURN_IF_ERROR(store->Commit(txn).status());
  Write(out, absl::StrCat("cancelled the events committed with idempotency "
                          "key ",
                          Quote(key),
                          ": the agent reverts their workflows' completed "
                          "steps, last first\n"));
  return absl::OkStatus();
}

absl::Status RunCancel(const CommandContext& context, const ParsedArgs& args) {
  const bool by_key = args.Has("key");
  if (by_key ? !args.positional.empty() || args.Value("key").empty()
             : args.positional.size() != 1 || args.positional[0].empty()) {
    return UsageError(
        "cancel needs one event id, or --key KEY and no event id");
  }
  const std::string reason = args.Value("reason", "outboxctl cancel");
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForWriting(context.db));
  const absl::Status status =
      by_key ? CancelByKey(store.get(), args.Value("key"), reason, context.out)
             : Cancel(store.get(), args.positional[0], reason, context.out);
  absl::Status closed = CloseStore(std::move(store));
  return status.ok() ? closed : status;
}

}  // namespace

const Command& CancelCommand() {
  static const Command* const command =
      new Command{"cancel",
                  "cancel a workflow: revert its completed steps, last first",
                  kCancelUsage,
                  {{"reason", true}, {"key", true}},
                  RunCancel};
  return *command;
}

}  // namespace outbox::ctl
