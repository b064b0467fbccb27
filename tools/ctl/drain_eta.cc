// Copyright (c) edge-outbox authors.

#include "tools/ctl/drain_eta.h"

#include <cmath>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

namespace outbox::ctl {
namespace {

// A sample "<name>{destination="<value>"} <number>": the label value
// (unescaped) and the number. False if `line` is not one of `name`.
bool ParseSample(absl::string_view line, absl::string_view name,
                 std::string* destination, double* value) {
  if (!absl::ConsumePrefix(&line, name) ||
      !absl::ConsumePrefix(&line, "{destination=\"")) {
    return false;
  }
  destination->clear();
  size_t i = 0;
  for (; i < line.size() && line[i] != '"'; ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      ++i;
      destination->push_back(line[i] == 'n' ? '\n' : line[i]);
    } else {
      destination->push_back(line[i]);
    }
  }
  line.remove_prefix(std::min(i + 1, line.size()));
  if (!absl::ConsumePrefix(&line, "} ")) return false;
  line = absl::StripAsciiWhitespace(line);
  if (line == "+Inf") {
    *value = INFINITY;
    return true;
  }
  return absl::SimpleAtod(line, value);
}

}  // namespace

absl::StatusOr<std::vector<DrainEta>> ParseDrainEta(absl::string_view text,
                                                    absl::string_view what) {
  std::vector<DrainEta> etas;
  std::map<std::string, double> pending, rate;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::string destination;
    double value = 0;
    if (ParseSample(line, "outbox_drain_eta_seconds", &destination, &value)) {
      etas.push_back({destination, 0, 0, value});
    } else if (ParseSample(line, "outbox_destination_pending_events",
                           &destination, &value)) {
      pending[destination] = value;
    } else if (ParseSample(line, "outbox_destination_delivery_rate",
                           &destination, &value)) {
      rate[destination] = value;
    }
  }
  if (etas.empty()) {
    return absl::NotFoundError(absl::StrCat(
        what,
        " has no outbox_drain_eta_seconds: is it the metrics_file of "
        "a running outbox-agent of this version?"));
  }
  for (DrainEta& eta : etas) {
    eta.pending_events = pending[eta.destination];
    eta.events_per_second = rate[eta.destination];
  }
  return etas;
}

std::string FormatDrainEta(const DrainEta& eta) {
  if (eta.pending_events == 0) return "drained";
  if (std::isinf(eta.eta_seconds)) {
    return absl::StrFormat(
        "stalled: %.0f pending, none delivered in the last minute",
        eta.pending_events);
  }
  return absl::StrFormat("%s at %.1f events/s, %.0f pending",
                         absl::FormatDuration(absl::Trunc(
                             absl::Seconds(eta.eta_seconds), absl::Seconds(1))),
                         eta.events_per_second, eta.pending_events);
}

}  // namespace outbox::ctl
