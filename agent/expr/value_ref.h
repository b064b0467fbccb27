// Copyright (c) edge-outbox authors.
//
// Value references of workflow conditions and revert templates (issue 13):
//   request:<path>           the step's own request payload
//   response:<step>:<path>   the stored response body of step <step>, run
//                            earlier in the same workflow (seed 003's
//                            previousDestination)
//   response:<path>          (<path> starting with '$' or '/') the step's own
//                            answer, as seed 003's revert `extract` writes
//                            it; the configuration binds it to the step, and
//                            allows it only where that answer exists (its
//                            revert and its extract)
// <path> is a JSON Pointer (RFC 6901: "/items/0/sku", "" for the whole
// document), or seed 003's dotted notation, which is converted to one:
//   "$" -> "",  "$.a.b" -> "/a/b",  "$.items[0].sku" -> "/items/0/sku".
// The dotted form is only that: names after '.', decimal indexes in [];
// wildcards, filters, ".." and quoted names are refused (kInvalidArgument),
// so a path never means more than one value.

#ifndef OUTBOX_AGENT_EXPR_VALUE_REF_H_
#define OUTBOX_AGENT_EXPR_VALUE_REF_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace outbox::workflow {

// The JSON Pointer that `path` means: a pointer is returned as written once
// checked, a dotted path converted. Errors: kInvalidArgument (not a pointer,
// not the dotted subset above), naming what is wrong.
absl::StatusOr<std::string> ToJsonPointer(absl::string_view path);

// A parsed value reference. Plain data.
struct ValueRef {
  enum class Source { kRequest, kResponse };
  Source source = Source::kRequest;
  // For kResponse: the step whose response is read; empty until bound for
  // "response:<path>" (the step's own). Empty for kRequest.
  std::string step;
  // RFC 6901 pointer into that document.
  std::string pointer;
  // As written in the configuration, for messages.
  std::string text;
};

// Parses "request:<path>", "response:<step>:<path>" or "response:<path>"
// (step left empty). Errors: kInvalidArgument (another prefix, an empty
// step name, a bad path).
absl::StatusOr<ValueRef> ParseValueRef(absl::string_view text);

// Named values (seed 003's `extract`): "{name}" in a template or a
// condition reads the reference the name stands for.
using NamedValues = std::map<std::string, ValueRef>;

// Whether `name` is a valid name of a named value:
// [A-Za-z_][A-Za-z0-9_]{0,63}.
bool IsValueName(absl::string_view name);

// The documents references resolve against, for one step: its request
// payload and the response bodies of the steps run before it, as stored
// (raw bytes). Each document is parsed as JSON on first use and kept.
// Not thread-safe: one resolver per step evaluation (external
// synchronization otherwise).
class ValueResolver {
 public:
  // `request` is the step's payload. Copies what it is given.
  explicit ValueResolver(std::string request);

  // Records the response body of `step`, which ran earlier; `cut` if the
  // agent kept only its first body.size() bytes (workflow_response_bytes).
  void AddResponse(const std::string& step, std::string body, bool cut = false);

  // The value `ref` names. Errors:
  //   kNotFound         the path names no value, or `ref` names a step with
  //                     no recorded response (a skipped or later step)
  //   kInvalidArgument  that document is not JSON (the message says when
  //                     that is because the answer was cut, and where)
  // Messages name the reference, never the documents' contents.
  absl::StatusOr<nlohmann::json> Resolve(const ValueRef& ref);

 private:
  struct Document {
    std::string raw;
    std::optional<nlohmann::json> parsed;  // set on first use
    bool invalid = false;                  // raw is not JSON
    bool cut = false;                      // raw is the answer's beginning
  };
  absl::StatusOr<const nlohmann::json*> Parsed(Document& doc,
                                               const ValueRef& ref);

  Document request_;
  std::map<std::string, Document> responses_;
};

}  // namespace outbox::workflow

#endif  // OUTBOX_AGENT_EXPR_VALUE_REF_H_
