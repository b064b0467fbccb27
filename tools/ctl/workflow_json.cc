// Copyright (c) edge-outbox authors.
//
// The --json form of a workflow (see workflow_format.h).

#include <utility>

#include "tools/ctl/event_format.h"
#include "tools/ctl/workflow_format.h"
#include "tools/json_bytes.h"

namespace outbox::ctl {
namespace {

// null for no HTTP answer, as last_http_status in event_json.cc.
nlohmann::ordered_json HttpStatusJson(int status) {
  if (status == 0) return nullptr;
  return status;
}

// `name`_bytes and `name`_truncated, and the body itself if asked.
void SetBody(const std::string& name, const std::string& body, bool truncated,
             bool with_body, nlohmann::ordered_json* j) {
  (*j)[name + "_bytes"] = body.size();
  (*j)[name + "_truncated"] = truncated;
  if (with_body) SetBytes(name, body, j);
}

nlohmann::ordered_json StepJson(int index, const storage::WorkflowStepState& s,
                                bool rows, bool with_bodies) {
  nlohmann::ordered_json j = {{"index", index}};
  SetBytes("name", s.name(), &j);
  j["status"] = StepStatusName(s.status());
  j["sent"] = s.sent();
  SetBytes("destination", s.destination(), &j);
  j["http_status"] = HttpStatusJson(s.http_status());
  if (rows) {
    // Stored as rows: no request (derived from the event again), and an
    // answer only where a reference reads it.
    j["answer_kept"] = s.answer_kept();
  } else {
    SetBody("request", s.request(), false, with_bodies, &j);
  }
  if (!rows || s.answer_kept()) {
    SetBody("response", s.response(), s.response_truncated(), with_bodies, &j);
  }
  return j;
}

nlohmann::ordered_json ResultJson(const storage::StepResult& r,
                                  bool with_bodies) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  SetTime("time", StoredTime(r.unix_ms()), &j);
  SetBytes("step", r.step(), &j);
  j["revert"] = r.revert();
  j["resend"] = r.resend();
  j["attempt"] = r.attempt();
  SetBytes("request_id", r.request_id(), &j);
  SetBytes("method", r.method(), &j);
  SetBytes("url", r.url(), &j);
  SetBytes("destination", r.destination(), &j);
  j["http_status"] = HttpStatusJson(r.http_status());
  j["duration_us"] = r.duration_us();
  SetBytes("outcome", r.outcome(), &j);
  SetBytes("error", r.error(), &j);
  SetBody("request_body", r.request_body(), r.request_truncated(), with_bodies,
          &j);
  SetBody("response_body", r.response_body(), r.response_truncated(),
          with_bodies, &j);
  return j;
}

}  // namespace

nlohmann::ordered_json WorkflowJson(const WorkflowView& w, bool with_bodies) {
  const storage::WorkflowState& s = w.state;
  nlohmann::ordered_json j = {{"phase", PhaseName(w)},
                              {"next_step", s.next_step()},
                              {"next_revert", s.next_revert()}};
  SetBytes("definition", s.definition(), &j);
  SetBytes("cause", s.cause(), &j);
  j["cancelled"] = w.record.cancelled;
  SetBytes("cancel_reason", w.record.cancel_reason, &j);
  SetTime("cancelled_at", w.record.cancelled_at, &j);
  j["compensating_for_cancel"] = s.cancelled();
  SetTime("started", StoredTime(s.started_unix_ms()), &j);
  SetTime("finished", StoredTime(s.finished_unix_ms()), &j);
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (int i = 0; i < s.steps_size(); ++i) {
    steps.push_back(StepJson(i, s.steps(i), s.rows(), with_bodies));
  }
  j["steps"] = std::move(steps);
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const storage::StepResult& r : w.results) {
    results.push_back(ResultJson(r, with_bodies));
  }
  j["results"] = std::move(results);
  j["results_truncated"] = w.results_truncated;
  return j;
}

}  // namespace outbox::ctl
