// Copyright (c) edge-outbox authors.

#include "tools/sink/fault_plan.h"

#include <random>
#include <string>

#include "absl/random/distributions.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace outbox::sink {

std::optional<int> FixedStatus(absl::string_view path,
                               std::optional<absl::string_view> type_value,
                               const FaultOptions& options) {
  int code = 0;
  if (absl::ConsumePrefix(&path, "/status/") && path.size() == 3 &&
      absl::ascii_isdigit(static_cast<unsigned char>(path[0])) &&
      absl::SimpleAtoi(path, &code) && code >= 200 && code <= 599) {
    return code;
  }
  if (type_value.has_value()) {
    auto it = options.status_for_type.find(std::string(*type_value));
    if (it != options.status_for_type.end()) return it->second;
  }
  return std::nullopt;
}

FaultPlanner::FaultPlanner(const FaultOptions& options, uint64_t seed)
    : drop_rate_(options.drop_rate),
      fail_rate_(options.fail_rate),
      throttle_rate_(options.throttle_rate),
      gen_(std::seed_seq{static_cast<uint32_t>(seed),
                         static_cast<uint32_t>(seed >> 32)}) {}

Fault FaultPlanner::Draw() {
  double u = 0;
  {
    absl::MutexLock lock(&mu_);
    u = absl::Uniform(gen_, 0.0, 1.0);  // [0, 1): a rate of 1 always hits.
  }
  if (u < drop_rate_) return Fault::kDrop;
  if (u < drop_rate_ + fail_rate_) return Fault::kFail;
  if (u < drop_rate_ + fail_rate_ + throttle_rate_) return Fault::kThrottle;
  return Fault::kNone;
}

}  // namespace outbox::sink
