// Copyright (c) edge-outbox authors.

#include "tools/demo/results.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace outbox::demo {
namespace {

constexpr char kRow[] = "%-8s %9s %10s %11s %5s %13s %9s %11s\n";

std::string Seconds(absl::Duration d) {
  return absl::StrFormat("%.1f s", absl::ToDoubleSeconds(d));
}

std::string Rate(double per_second) {
  return per_second > 0 ? absl::StrFormat("%.0f/s", per_second) : "-";
}

std::string Row(const TillResult& r, double rate) {
  return absl::StrFormat(kRow, r.till, absl::StrCat(r.committed),
                         absl::StrCat(r.delivered), absl::StrCat(r.duplicates),
                         absl::StrCat(r.lost), absl::StrCat(r.dead_letters),
                         Seconds(r.offline), Rate(rate));
}

}  // namespace

int64_t LostSales(const audit::AuditReport& report) {
  int64_t lost = 0;
  for (audit::AuditCheck check : {audit::AuditCheck::kAcknowledgedNotDelivered,
                                  audit::AuditCheck::kCommittedNotDelivered}) {
    const auto it = report.fired.find(audit::AuditCheckName(check));
    if (it != report.fired.end()) lost += it->second;
  }
  return lost;
}

double DrainRate(int64_t delivered, absl::Time first, absl::Time last) {
  const double seconds = absl::ToDoubleSeconds(last - first);
  if (delivered < 2 || !(seconds > 0)) return 0;
  return static_cast<double>(delivered) / seconds;
}

std::string FormatResults(const std::vector<TillResult>& tills,
                          absl::Duration total_drain) {
  std::string out =
      absl::StrFormat(kRow, "till", "committed", "delivered", "duplicates",
                      "LOST", "dead letters", "offline", "drain rate");
  TillResult total;
  total.till = "total";
  total.offline = absl::ZeroDuration();
  for (const TillResult& r : tills) {
    absl::StrAppend(&out, Row(r, r.drain_rate));
    total.committed += r.committed;
    total.delivered += r.delivered;
    total.duplicates += r.duplicates;
    total.lost += r.lost;
    total.dead_letters += r.dead_letters;
    total.offline = std::max(total.offline, r.offline);
  }
  const double seconds = absl::ToDoubleSeconds(total_drain);
  absl::StrAppend(&out,
                  Row(total, seconds > 0 ? total.delivered / seconds : 0.0));
  return out;
}

}  // namespace outbox::demo
