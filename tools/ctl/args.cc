// Copyright (c) edge-outbox authors.

#include "tools/ctl/args.h"

#include <cstdint>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace outbox::ctl {
namespace {

// The status payload that marks a usage error; its value does not matter.
constexpr char kUsagePayload[] = "outbox.ctl/usage";

const FlagSpec* FindSpec(absl::Span<const FlagSpec> specs,
                         absl::string_view name) {
  for (const FlagSpec& spec : specs) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

}  // namespace

bool ParsedArgs::Has(absl::string_view name) const {
  return flags.find(std::string(name)) != flags.end();
}

std::string ParsedArgs::Value(absl::string_view name,
                              absl::string_view fallback) const {
  auto it = flags.find(std::string(name));
  return it == flags.end() ? std::string(fallback) : it->second;
}

absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     absl::Span<const FlagSpec> specs) {
  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1,
                               args.end());
      break;
    }
    if (!absl::StartsWith(arg, "--") || arg == "-") {
      if (absl::StartsWith(arg, "-") && arg != "-") {
        return UsageError(absl::StrCat("unknown flag '", arg,
                                       "' (flags are spelled --name)"));
      }
      parsed.positional.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name =
        arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const FlagSpec* spec = FindSpec(specs, name);
    if (spec == nullptr) {
      return UsageError(absl::StrCat("unknown flag '--", name, "'"));
    }
    if (parsed.Has(name)) {
      return UsageError(absl::StrCat("--", name, " is given twice"));
    }
    std::string value;
    if (!spec->takes_value) {
      if (eq != std::string::npos) {
        return UsageError(absl::StrCat("--", name, " takes no value"));
      }
    } else if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size() && !absl::StartsWith(args[i + 1], "--")) {
      value = args[++i];
    } else {
      return UsageError(
          absl::StrCat("--", name, " needs a value (use --", name,
                       "=VALUE for a value that starts with \"--\")"));
    }
    parsed.flags.emplace(name, std::move(value));
  }
  return parsed;
}

absl::Status UsageError(absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kUsagePayload, absl::Cord("1"));
  return status;
}

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayload).has_value();
}

absl::StatusOr<std::string> RequiredFlag(const ParsedArgs& args,
                                         absl::string_view name) {
  if (!args.Has(name)) {
    return UsageError(absl::StrCat("--", name, " is required"));
  }
  return args.Value(name);
}

absl::StatusOr<size_t> ParseCount(absl::string_view flag,
                                  absl::string_view value, size_t max) {
  uint64_t n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < 1 || n > max ||
      absl::StartsWith(value, "+")) {
    return UsageError(absl::StrCat("--", flag,
                                   " must be a whole number from 1 to ", max,
                                   ", not '", value, "'"));
  }
  return static_cast<size_t>(n);
}

}  // namespace outbox::ctl
