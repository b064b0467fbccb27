// Copyright (c) edge-outbox authors.

#include "tools/demo/receiver_log.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace outbox::demo {

ReceiverLog::ReceiverLog(std::string path, std::vector<std::string> tills)
    : tail_(std::move(path)),
      tills_(std::move(tills)),
      tallies_(tills_.size()) {}

void ReceiverLog::Poll() {
  tail_.Poll();
  const std::vector<audit::SinkRequest>& all = tail_.requests();
  for (; seen_ < all.size(); ++seen_) Add(all[seen_]);
}

void ReceiverLog::Add(const audit::SinkRequest& r) {
  size_t till = 0;
  while (till < tills_.size() &&
         (r.n < 0 || r.sale != absl::StrCat(tills_[till], "-", r.n))) {
    ++till;
  }
  if (till == tills_.size()) {
    ++strays_;
    return;
  }
  TillTally& t = tallies_[till];
  t.requests.push_back(r);
  const absl::Time at = absl::FromUnixMillis(r.ts_ms);
  t.first_request = std::min(t.first_request, at);
  t.last_request = std::max(t.last_request, at);
  if (r.duplicate) ++t.duplicates;
  if (r.dropped) ++t.dropped;
  if (r.status == 503) ++t.answered_503;
  if (r.status == 429) ++t.answered_429;
  if (r.ok() && t.delivered.insert(r.n).second) {
    t.first_delivery = std::min(t.first_delivery, at);
    t.last_delivery = std::max(t.last_delivery, at);
  }
}

}  // namespace outbox::demo
