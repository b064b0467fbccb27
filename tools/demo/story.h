// Copyright (c) edge-outbox authors.
//
// The demo's story, step by step: tills commit sales while their receiver
// (receiver.h: outbox-sink, or a broker and its recorder, by --transport)
// is down, the receiver comes up (outbox-sink answering with faults), one
// till is SIGKILLed in the middle of its drain and restarted, every till
// drains, and every committed sale is audited against the receiver's log
// (see results.h for what "lost" means); then, with --transport webhook,
// the saga chapter (saga.h). Every process it starts is stopped when it
// returns, however it returns.

#ifndef OUTBOX_TOOLS_DEMO_STORY_H_
#define OUTBOX_TOOLS_DEMO_STORY_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/demo/demo_options.h"
#include "tools/demo/display.h"
#include "tools/demo/receiver.h"
#include "tools/demo/receiver_log.h"
#include "tools/demo/results.h"
#include "tools/demo/saga.h"
#include "tools/demo/till.h"

namespace outbox::demo {

struct Binaries {
  std::string sink;     // outbox-sink
  std::string pos_sim;  // outbox-pos-sim
  std::string routes;   // seed003_routes.json, for the saga chapter
};

// REQUIRES: External synchronization.
class Story {
 public:
  // `display` must outlive the Story. `interrupted` is asked between steps
  // and while waiting (a signal handler's flag).
  Story(DemoOptions options, Binaries binaries, Display* display,
        std::function<bool()> interrupted);
  // Stops every process still running (SIGTERM, then SIGKILL).
  ~Story();
  Story(const Story&) = delete;
  Story& operator=(const Story&) = delete;

  // Runs the story and prints the table. Errors:
  //   kDataLoss            a committed sale never reached the receiver, or
  //                        another audit check fired, the saga's included
  //                        (the message says which);
  //   kFailedPrecondition  a step did not happen as the story tells it (no
  //                        503 or 429 answered, the kill missed the drain,
  //                        fewer refunds than planned), or the receiver
  //                        needs a program that is not installed;
  //   kDeadlineExceeded    a step made no progress for stall_timeout;
  //   kCancelled           interrupted;
  //   kInternal            a till exited with an error or printed nonsense;
  //   others               from preparing files or starting processes.
  absl::Status Run();

  // Where the stores, configs and logs are (absolute).
  const std::string& dir() const { return dir_; }
  // The saga chapter ran (it does with --transport webhook only: workflow
  // steps are HTTP requests).
  bool saga_ran() const { return saga_ != nullptr; }

 private:
  absl::Status RunSteps();
  absl::Status Prepare();
  absl::Status StartTills();
  absl::Status CommitOffline();
  absl::Status BringReceiverUp();
  absl::Status KillOneMidDrain();
  absl::Status RunHeldTillIntoItsDrain();
  absl::Status DrainAll();
  absl::Status WaitAllReceived();
  absl::Status StopReceiver();
  absl::Status RunSaga();
  absl::Status Audit();
  absl::Status AuditTill(size_t i, TillResult* result);
  absl::Status CheckStory() const;

  // One round: reads the tills and the receiver's log, redraws the live
  // line, notes tills coming online. Errors: a till that failed.
  absl::Status Tick();
  // Ticks until `done` says so. Errors: Tick's; kCancelled; kDeadlineExceeded
  // naming `step` when nothing moves for stall_timeout.
  absl::Status WaitUntil(absl::string_view step,
                         const std::function<bool()>& done);
  int64_t Progress() const;
  std::string StateOf(size_t i) const;
  int64_t Pending(size_t i) const;
  void Event(absl::string_view text);
  void StopAll();

  const DemoOptions options_;
  const Binaries binaries_;
  Display* const display_;
  const std::function<bool()> interrupted_;
  std::string dir_;
  std::string sink_log_;
  std::unique_ptr<StoryReceiver> receiver_;
  std::vector<std::unique_ptr<Till>> tills_;
  std::vector<absl::Time> first_started_;
  std::vector<bool> seen_online_;
  std::vector<RateMeter> meters_;
  std::unique_ptr<ReceiverLog> log_;
  absl::Time start_;
  size_t victim_ = 1;  // the till SIGKILLed in its drain
  std::vector<TillResult> results_;
  std::unique_ptr<SagaChapter> saga_;
};

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_STORY_H_
