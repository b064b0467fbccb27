// Copyright (c) edge-outbox authors.
//
// Conditions that choose a workflow step's destination (issue 13, seed 003's
// routes): a value reference (agent/expr/value_ref.h), an operator and
// an expected JSON value. Semantics, for the value v the reference names and
// the expected value x:
//   exists     v is there (JSON null counts as there). The only operator
//              that is true for a missing v; every other one is false.
//   eq         v and x are the same JSON value: numbers compare as numbers
//              (1 == 1.0), strings byte by byte, arrays and objects deeply;
//              values of different types are never equal ("50" != 50).
//   ne         v is there and not eq x (so "50" ne 50 is true).
//   gt gte     both numbers: numeric order (integers exactly, even beyond
//   lt lte     2^53); both strings: byte-wise lexicographic order; any other
//              pair of types (a type mismatch included): false, not an error.
//   contains   v a string and x a string: x is a substring of v; v an array:
//              some element eq x; anything else: false.
// A list of conditions is an AND (the empty list is true); a step takes the
// first destination whose conditions all hold; when none does, its
// on_no_match decides (fail, the default, or skip).

#ifndef OUTBOX_AGENT_EXPR_CONDITION_H_
#define OUTBOX_AGENT_EXPR_CONDITION_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/expr/value_ref.h"
#include "nlohmann/json.hpp"

namespace outbox::workflow {

enum class Operator { kEq, kNe, kGt, kGte, kLt, kLte, kContains, kExists };

// "eq", "ne", ... as in configurations. Errors: kInvalidArgument naming the
// operators there are.
absl::StatusOr<Operator> ParseOperator(absl::string_view name);
absl::string_view OperatorName(Operator op);

// Plain data.
struct Condition {
  ValueRef ref;
  Operator op = Operator::kExists;
  // Ignored by kExists.
  nlohmann::json expected;
};

// `op` applied to `value` (nullopt: the reference names nothing) and
// `expected`, with the semantics above. Never fails.
bool Compare(Operator op, const std::optional<nlohmann::json>& value,
             const nlohmann::json& expected);

// Whether `condition` holds. A missing value (kNotFound from the resolver)
// is a result, not an error. Errors: kInvalidArgument when the document the
// reference reads is not JSON (the step cannot be routed).
absl::StatusOr<bool> Evaluate(const Condition& condition,
                              ValueResolver& resolver);

// One possible destination of a step and when it applies. Plain data.
struct Choice {
  std::string destination;
  // All must hold; empty: always.
  std::vector<Condition> conditions;
};

// Index of the first choice whose conditions all hold, or nullopt when none
// does (the step fails or is skipped: on_no_match). Errors: those of
// Evaluate.
absl::StatusOr<std::optional<size_t>> ChooseDestination(
    const std::vector<Choice>& choices, ValueResolver& resolver);

}  // namespace outbox::workflow

#endif  // OUTBOX_AGENT_EXPR_CONDITION_H_
