// Copyright (c) edge-outbox authors.
//
// Command-line parsing shared by outboxctl's commands, and the usage-error
// marker that makes the tool exit with status 2 instead of 1.

#ifndef OUTBOX_TOOLS_CTL_ARGS_H_
#define OUTBOX_TOOLS_CTL_ARGS_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace outbox::ctl {

// A flag a command accepts: `--name value` / `--name=value`, or a switch
// (`--name`) when !takes_value.
struct FlagSpec {
  const char* name;
  bool takes_value;
};

// A command line split into flags and positional arguments. Plain data.
struct ParsedArgs {
  std::map<std::string, std::string> flags;  // name (no "--") -> value
  std::vector<std::string> positional;

  bool Has(absl::string_view name) const;
  // The flag's value, or `fallback` when it was not given.
  std::string Value(absl::string_view name,
                    absl::string_view fallback = {}) const;
};

// Splits `args` by `specs`. A value that starts with "--" must use the
// `--name=value` form (so that a forgotten value is not filled with the next
// flag). "--" ends the flags. Errors (UsageError): unknown flag, missing
// value, value given to a switch, flag repeated.
absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     absl::Span<const FlagSpec> specs);

// An error in how the tool was called rather than in what it did: the tool
// prints the command's usage and exits with status 2. kInvalidArgument.
absl::Status UsageError(absl::string_view message);
bool IsUsageError(const absl::Status& status);

// The value of `--name`, or a UsageError naming the flag if it is missing.
absl::StatusOr<std::string> RequiredFlag(const ParsedArgs& args,
                                         absl::string_view name);

// `--limit`-style count: a decimal integer in [1, max]. Errors: UsageError.
absl::StatusOr<size_t> ParseCount(absl::string_view flag,
                                  absl::string_view value, size_t max);

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_ARGS_H_
