// Copyright (c) edge-outbox authors.
//
// The demo's saga chapter: one till (outbox-pos-sim --saga per_step) whose
// agent runs each sale as seed 003's workflow (saga_files.h) against one
// outbox-sink playing the four services with seed 003's routes. Some cards
// are declined at billing (compensated), some sales are refunded after they
// completed (Txn::Cancel in a later Txn: compensated too), and every
// workflow is audited against the receiver's log and the till's store
// (saga_audit.h). Every process it starts is stopped when it returns.

#ifndef OUTBOX_TOOLS_DEMO_SAGA_H_
#define OUTBOX_TOOLS_DEMO_SAGA_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/audit/sink_log_tail.h"
#include "tools/demo/demo_options.h"
#include "tools/demo/display.h"
#include "tools/demo/saga_audit.h"
#include "tools/demo/till.h"
#include "tools/sink/sink_process.h"

namespace outbox::demo {

struct SagaBinaries {
  std::string sink;     // outbox-sink
  std::string pos_sim;  // outbox-pos-sim
  std::string routes;   // seed003_routes.json
};

// REQUIRES: External synchronization.
class SagaChapter {
 public:
  // `display` must outlive it. `start`: the demo's start, for time stamps.
  // `dir`: the demo's directory; the chapter works in dir/saga.
  SagaChapter(const DemoOptions& options, SagaBinaries binaries,
              Display* display, std::function<bool()> interrupted,
              absl::Time start, std::string dir);
  ~SagaChapter();  // stops what still runs
  SagaChapter(const SagaChapter&) = delete;
  SagaChapter& operator=(const SagaChapter&) = delete;

  // Runs the chapter and prints its table. Errors:
  //   kDataLoss            an audit check fired (the message says which);
  //   kFailedPrecondition  a step did not happen as told (not as many
  //                        refunds as planned);
  //   kDeadlineExceeded    nothing moved for stall_timeout;
  //   kCancelled, kInternal, others as Story::Run.
  absl::Status Run();

 private:
  absl::Status Prepare();
  absl::Status StartReceiver();
  absl::Status Sell();
  absl::Status StopReceiver();
  absl::Status Audit();
  absl::Status ReadStore(std::vector<SagaSale>* sales);
  absl::Status CheckStory() const;
  absl::Status Tick();
  void Event(absl::string_view text);

  const DemoOptions options_;
  const SagaBinaries binaries_;
  Display* const display_;
  const std::function<bool()> interrupted_;
  const absl::Time start_;
  const std::string dir_;
  std::string secret_path_;
  std::unique_ptr<audit::SinkLogTail> log_;
  std::unique_ptr<sink::SinkProcess> sink_;
  std::unique_ptr<Till> till_;
  int64_t declines_ = 0;  // planned
  int64_t refunds_ = 0;   // planned
};

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_SAGA_H_
