// Copyright (c) edge-outbox authors.
//
// What every recorder (mqtt_recorder.h, kafka_recorder.h) does with a
// message it got: append it to a file in outbox-sink's request-log format,
// flagged `duplicate` when its event id was logged before, as the sink
// flags a resend, and remember the first append that failed.

#ifndef OUTBOX_TOOLS_RECORDER_DELIVERY_LOG_H_
#define OUTBOX_TOOLS_RECORDER_DELIVERY_LOG_H_

#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tools/sink/request_log.h"

namespace outbox::recorder {

// Thread-safe; lines are in the order of the Append calls.
class DeliveryLog {
 public:
  // Errors: sink::RequestLog::Open's.
  static absl::StatusOr<std::unique_ptr<DeliveryLog>> Open(
      const std::string& path);

  // Appends `record`, its `duplicate` set here. A failure is kept for
  // status(); the caller goes on receiving.
  void Append(sink::LogRecord record) ABSL_LOCKS_EXCLUDED(mu_);
  // The first append that failed (kUnavailable: disk full), or OK.
  absl::Status status() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  explicit DeliveryLog(std::unique_ptr<sink::RequestLog> log)
      : log_(std::move(log)) {}

  const std::unique_ptr<sink::RequestLog> log_;
  absl::Mutex mu_;
  std::set<std::string> logged_ids_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace outbox::recorder

#endif  // OUTBOX_TOOLS_RECORDER_DELIVERY_LOG_H_
