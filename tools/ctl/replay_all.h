// Copyright (c) edge-outbox authors.
//
// `outboxctl replay --all`, apart from the command so that its handling of
// failures can be tested against a store that fails on purpose.

#ifndef OUTBOX_TOOLS_CTL_REPLAY_ALL_H_
#define OUTBOX_TOOLS_CTL_REPLAY_ALL_H_

#include <cstdio>

#include "absl/status/status.h"
#include "outbox/store.h"

namespace outbox::ctl {

// Replays every dead letter of `store`, printing "replayed ID" or "skipped
// ID (undecodable)" per dead letter and a summary line to `out`. Undecodable
// dead letters cannot be replayed and are skipped, which is not a failure.
// A failed replay is counted and the rest are still tried, except after
// kResourceExhausted (the queue is full: every later one would fail too).
// Errors: if any replay failed, the first failure's code with a message
// giving the counts; a failure to list dead letters as is.
absl::Status ReplayAll(Store* store, std::FILE* out);

}  // namespace outbox::ctl

#endif  // OUTBOX_TOOLS_CTL_REPLAY_ALL_H_
