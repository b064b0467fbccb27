// Copyright (c) edge-outbox authors.
//
// outbox-sink's request log as the demo reads it while the tills drain:
// each request goes to the till whose sale it carries, with the counts the
// progress line and the final table show.

#ifndef OUTBOX_TOOLS_DEMO_RECEIVER_LOG_H_
#define OUTBOX_TOOLS_DEMO_RECEIVER_LOG_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tools/audit/sink_log_tail.h"

namespace outbox::demo {

// What the receiver saw of one till.
struct TillTally {
  std::vector<audit::SinkRequest> requests;  // its requests, in log order
  std::set<int64_t> delivered;               // sales answered 2xx
  int64_t duplicates = 0;  // requests the sink flagged as already processed
  int64_t answered_503 = 0;
  int64_t answered_429 = 0;
  int64_t dropped = 0;  // processed, answer withheld
  absl::Time first_request = absl::InfiniteFuture();
  absl::Time last_request = absl::InfinitePast();
  absl::Time first_delivery = absl::InfiniteFuture();
  absl::Time last_delivery = absl::InfinitePast();  // of a sale's first 2xx
};

// REQUIRES: External synchronization.
class ReceiverLog {
 public:
  // `tills`: the --till names; a sale "<till>-<n>" belongs to <till>.
  ReceiverLog(std::string path, std::vector<std::string> tills);

  // Reads the lines the sink appended since the last call.
  void Poll();

  // REQUIRES: till < the number of tills.
  const TillTally& tally(size_t till) const { return tallies_[till]; }
  // Requests that carried no sale of any till (there should be none).
  int64_t strays() const { return strays_; }

 private:
  void Add(const audit::SinkRequest& request);

  audit::SinkLogTail tail_;
  size_t seen_ = 0;  // into tail_.requests()
  const std::vector<std::string> tills_;
  std::vector<TillTally> tallies_;
  int64_t strays_ = 0;
};

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_RECEIVER_LOG_H_
