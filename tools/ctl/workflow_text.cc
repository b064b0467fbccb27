// Copyright (c) edge-outbox authors.
//
// The human form of a workflow (see workflow_format.h). Every stored string
// goes through Quote() or AppendBody(), as in event_text.cc.

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tools/ctl/event_format.h"
#include "tools/ctl/text.h"
#include "tools/ctl/workflow_format.h"

namespace outbox::ctl {
namespace {

// "34B", or "4096B(truncated)".
std::string Size(const std::string& body, bool truncated) {
  return absl::StrCat(body.size(), "B", truncated ? "(truncated)" : "");
}

std::string Cancel(const WorkflowRecord& record) {
  if (!record.cancelled) return "no";
  return absl::StrCat("yes, at ", FormatTimeOr(record.cancelled_at, "-"),
                      ", reason ", Quote(record.cancel_reason));
}

// Where a running workflow is: the step it runs or reverts next.
void AppendPosition(const storage::WorkflowState& s, std::string* out) {
  if (s.phase() == storage::WORKFLOW_PHASE_FORWARD) {
    AddField(out, "next step", absl::StrCat(s.next_step()));
  } else if (s.phase() == storage::WORKFLOW_PHASE_COMPENSATING) {
    AddField(out, "next revert",
             s.next_revert() < 0 ? "none" : absl::StrCat(s.next_revert()));
  }
}

void AppendSteps(const storage::WorkflowState& s, bool with_bodies,
                 std::string* out) {
  absl::StrAppend(out, "  steps (", s.steps_size(), "):\n");
  for (int i = 0; i < s.steps_size(); ++i) {
    const storage::WorkflowStepState& step = s.steps(i);
    // Stored as rows: requests are derived from the event again (the
    // result table has what was sent), answers kept only where read.
    const std::string request =
        s.rows() ? "derived" : Size(step.request(), false);
    const std::string response =
        s.rows() && !step.answer_kept()
            ? "not kept"
            : Size(step.response(), step.response_truncated());
    absl::StrAppend(out, "    ", i, " ", Quote(step.name()), " ",
                    StepStatusName(step.status()), step.sent() ? " sent" : "",
                    " dest=", Quote(step.destination()),
                    " http=", HttpStatusText(step.http_status()),
                    " request=", request, " response=", response, "\n");
    if (!with_bodies) continue;
    AppendBody("      ", "request", step.request(), false, out);
    AppendBody("      ", "response", step.response(), step.response_truncated(),
               out);
  }
}

void AppendResult(const storage::StepResult& r, bool with_bodies,
                  std::string* out) {
  absl::StrAppend(out, "    ", FormatTimeOr(StoredTime(r.unix_ms()), "-"), " ",
                  Quote(r.step()),
                  r.revert()   ? " (revert)"
                  : r.resend() ? " (resent: in doubt at compensation)"
                               : "",
                  " attempt=", r.attempt(), " ", Quote(r.method()), " ",
                  Quote(r.url()), " http=", HttpStatusText(r.http_status()),
                  " ",
                  absl::FormatDuration(absl::Microseconds(r.duration_us())),
                  " ", Quote(r.outcome()));
  if (!r.error().empty()) absl::StrAppend(out, " error=", Quote(r.error()));
  absl::StrAppend(
      out, " request=", Size(r.request_body(), r.request_truncated()),
      " response=", Size(r.response_body(), r.response_truncated()), "\n");
  if (!with_bodies) return;
  AppendBody("      ", "request body", r.request_body(), r.request_truncated(),
             out);
  AppendBody("      ", "response body", r.response_body(),
             r.response_truncated(), out);
}

}  // namespace

std::string WorkflowDetail(const WorkflowView& w, bool with_bodies) {
  const storage::WorkflowState& s = w.state;
  std::string out = "workflow:\n";
  AddField(&out, "phase", PhaseName(w));
  // The definition it runs under, whatever the configuration says now;
  // none in a state written before definitions were kept.
  AddField(&out, "definition",
           s.definition().empty() ? "-" : Quote(s.definition()));
  AppendPosition(s, &out);
  AddField(&out, "cause", s.cause().empty() ? "-" : Quote(s.cause()));
  AddField(&out, "cancelled", Cancel(w.record));
  AddField(&out, "started", FormatTimeOr(StoredTime(s.started_unix_ms()), "-"));
  AddField(&out, "finished",
           FormatTimeOr(StoredTime(s.finished_unix_ms()), "-"));
  AppendSteps(s, with_bodies, &out);
  absl::StrAppend(&out, "  attempts (", w.results.size(),
                  w.results_truncated ? ", more not shown" : "", "):\n");
  for (const storage::StepResult& r : w.results) {
    AppendResult(r, with_bodies, &out);
  }
  if (!with_bodies) out += "  (bodies: sizes only; --bodies prints them)\n";
  return out;
}

}  // namespace outbox::ctl
