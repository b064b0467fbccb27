// Copyright (c) edge-outbox authors.
//
// outboxctl show ID: one pending event or dead letter in full, and the
// timeline of its workflow if it has one.

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tools/ctl/command.h"
#include "tools/ctl/event_format.h"
#include "tools/ctl/store_access.h"
#include "tools/ctl/text.h"
#include "tools/ctl/workflow_format.h"
#include "tools/json_bytes.h"

namespace outbox::ctl {
namespace {

constexpr char kShowUsage[] =
    "usage: outboxctl --db DIR show ID [--json] [--bodies]\n"
    "\n"
    "Prints the pending event or dead letter ID with every field, payload\n"
    "included. When ID is a workflow's event, also its timeline: the phase,\n"
    "the definition it runs under (kept in the store when it started), why\n"
    "compensation began, the cancel, each step reached (status,\n"
    "destination, HTTP status), and every attempt of a step or of its\n"
    "revert in order (time, attempt, method, URL, status, duration, outcome,\n"
    "error). A workflow that completed has left the queue: its event shows\n"
    "as gone. Read-only: works while outbox-agent runs.\n"
    "\n"
    "  --json     one JSON object instead of text; the payload is the string\n"
    "             \"payload\" when it is UTF-8, else \"payload_base64\"; a\n"
    "             workflow is the object \"workflow\"\n"
    "  --bodies   also the workflow's request and response bodies, which\n"
    "             may hold customer data (by default only their sizes)\n";

// Shown at most; the rest is said to exist.
constexpr size_t kMaxResults = 10000;

// The event's own part of the output, as `json` asks. False if ID is
// neither a dead letter nor pending.
absl::StatusOr<bool> DescribeEvent(Store* store, const std::string& id,
                                   bool json, std::string* text,
                                   nlohmann::ordered_json* object) {
  // Dead letters first: a point lookup, where a pending event takes a scan.
  absl::StatusOr<DeadLetter> dead = store->FindDeadLetter(id);
  if (dead.ok()) {
    if (json) *object = DeadJson(*dead, /*with_payload=*/true);
    if (!json) *text = DeadDetail(*dead);
    return true;
  }
  if (!absl::IsNotFound(dead.status())) return dead.status();
  absl::StatusOr<PendingEvent> pending = store->FindPending(id);
  if (absl::IsNotFound(pending.status())) return false;
  if (!pending.ok()) return pending.status();
  if (json) *object = PendingJson(*pending, /*with_payload=*/true);
  if (!json) *text = PendingDetail(*pending);
  return true;
}

absl::Status RunShow(const CommandContext& context, const ParsedArgs& args) {
  if (args.positional.size() != 1 || args.positional[0].empty()) {
    return UsageError("show needs one argument: the event id");
  }
  const std::string& id = args.positional[0];
  const bool json = args.Has("json");
  const bool bodies = args.Has("bodies");
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                          OpenForReading(context.db));
  std::string text;
  nlohmann::ordered_json object;
  OUTBOX_ASSIGN_OR_RETURN(const bool found,
                          DescribeEvent(store.get(), id, json, &text, &object));
  OUTBOX_ASSIGN_OR_RETURN(const std::optional<WorkflowView> workflow,
                          LoadWorkflow(store.get(), id, kMaxResults));
  if (!found && !workflow.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("no pending event, dead letter or workflow with id ", id));
  }
  if (!found) {
    // Delivered (a completed workflow), or its dead letter was purged.
    text = absl::StrCat("event ", Quote(id),
                        ": gone from the queue (delivered, or its dead letter "
                        "purged)\n");
    object = {{"state", "gone"}};
    SetBytes("id", id, &object);
  }
  if (workflow.has_value() && json) {
    object["workflow"] = WorkflowJson(*workflow, bodies);
  }
  if (workflow.has_value() && !json) text += WorkflowDetail(*workflow, bodies);
  Write(context.out, json ? absl::StrCat(DumpJson(object), "\n") : text);
  return absl::OkStatus();
}

}  // namespace

const Command& ShowCommand() {
  static const Command* const command =
      new Command{"show",
                  "an event in full, payload and workflow timeline included",
                  kShowUsage,
                  {{"json", false}, {"bodies", false}},
                  RunShow};
  return *command;
}

}  // namespace outbox::ctl
