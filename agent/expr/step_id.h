// Copyright (c) edge-outbox authors.
//
// Request ids of workflow steps (issue 13): each step's request, and each
// revert's, carries its own webhook-id, derived from the event id and the
// step so that a resent step (after a retry, a crash, a reopen) has the same
// id and its receiver can deduplicate it, while two steps of one event, or a
// step and its revert, never share one.
//
// The id is a UUIDv5 (RFC 9562 section 5.5: SHA-1, version 5, variant 10xx)
// in the namespace kStepIdNamespace of the name
//   "<event id>/<step name>"          for the step's request
//   "<event id>/<step name>/revert"   for its revert.
// Step names cannot contain '/' (the configuration allows [A-Za-z0-9_.-]),
// so no two (event, step, revert) triples share a name. Any implementation
// of RFC 9562 derives the same ids, so a receiver can recompute them.

#ifndef OUTBOX_AGENT_EXPR_STEP_ID_H_
#define OUTBOX_AGENT_EXPR_STEP_ID_H_

#include <string>

#include "absl/strings/string_view.h"

namespace outbox::workflow {

// The namespace of step ids, a fixed random UUID chosen for edge-outbox.
// Never change it: every stored and sent step id depends on it.
inline constexpr absl::string_view kStepIdNamespace =
    "5d1d3b0e-6c4f-4a8e-9f2b-7e1c0a9d4b63";

// The UUIDv5 (RFC 9562 section 5.5) of `name` in namespace `namespace_uuid`
// (a UUID in its 36-character form). REQUIRES: `namespace_uuid` is one.
// Thread-safe.
std::string Uuid5(absl::string_view namespace_uuid, absl::string_view name);

// The UUIDv5 of the name for `step` of event `event_id` (a revert's if
// `revert`), lowercase "xxxxxxxx-xxxx-5xxx-yxxx-xxxxxxxxxxxx".
// REQUIRES: `step` contains no '/'. Thread-safe.
std::string StepRequestId(absl::string_view event_id, absl::string_view step,
                          bool revert);

}  // namespace outbox::workflow

#endif  // OUTBOX_AGENT_EXPR_STEP_ID_H_
