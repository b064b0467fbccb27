// Copyright (c) edge-outbox authors.

#include "tools/recorder/delivery_log.h"

#include <utility>

namespace outbox::recorder {

absl::StatusOr<std::unique_ptr<DeliveryLog>> DeliveryLog::Open(
    const std::string& path) {
  absl::StatusOr<std::unique_ptr<sink::RequestLog>> log =
      sink::RequestLog::Open(path);
  if (!log.ok()) return log.status();
  return std::unique_ptr<DeliveryLog>(new DeliveryLog(*std::move(log)));
}

void DeliveryLog::Append(sink::LogRecord record) {
  // Under mu_ from the check to the write, so that `duplicate` agrees with
  // the order of the lines.
  absl::MutexLock lock(&mu_);
  record.duplicate = record.id && !logged_ids_.insert(*record.id).second;
  absl::Status appended = log_->Append(record);
  if (!appended.ok() && status_.ok()) status_ = std::move(appended);
}

absl::Status DeliveryLog::status() {
  absl::MutexLock lock(&mu_);
  return status_;
}

}  // namespace outbox::recorder
