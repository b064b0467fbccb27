// Copyright (c) edge-outbox authors.

#include "lib/keys.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace outbox::keys {
namespace {

void AppendBigEndian64(uint64_t v, std::string* out) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

uint64_t ReadBigEndian64(absl::string_view b) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(b[i]);
  return v;
}

}  // namespace

std::string Seq(uint64_t seq) {
  std::string key;
  key.reserve(8);
  AppendBigEndian64(seq, &key);
  return key;
}

std::optional<uint64_t> ParseSeq(absl::string_view key) {
  if (key.size() != 8) return std::nullopt;
  return ReadBigEndian64(key);
}

std::string SeqForHumans(uint64_t seq) { return absl::StrFormat("%016x", seq); }

std::string IdempotencyRecordKey(absl::string_view idempotency_key) {
  return absl::StrCat("k", idempotency_key);
}

std::string IdempotencyExpiryKey(int64_t committed_ms,
                                 absl::string_view idempotency_key) {
  std::string key = kIdempotencyExpiryPrefix;
  // Times before 1970 clamp to 0 so the index stays ordered.
  AppendBigEndian64(committed_ms < 0 ? 0 : committed_ms, &key);
  key.append(idempotency_key.data(), idempotency_key.size());
  return key;
}

std::optional<ExpiryKey> ParseIdempotencyExpiryKey(absl::string_view key) {
  if (key.size() < 9 || key[0] != kIdempotencyExpiryPrefix[0]) {
    return std::nullopt;
  }
  return ExpiryKey{static_cast<int64_t>(ReadBigEndian64(key.substr(1, 8))),
                   std::string(key.substr(9))};
}

std::string WorkflowStateKey(absl::string_view event_id) {
  return absl::StrCat("s", event_id);
}

std::string WorkflowCancelKey(absl::string_view event_id) {
  return absl::StrCat("c", event_id);
}

// Event ids (UUIDs) never contain '/', so one event's prefix is never the
// start of another's.
std::string WorkflowResultPrefix(absl::string_view event_id) {
  return absl::StrCat("r", event_id, "/");
}

std::string WorkflowResultKey(absl::string_view event_id, uint32_t n) {
  std::string key = WorkflowResultPrefix(event_id);
  for (int shift = 24; shift >= 0; shift -= 8) {
    key.push_back(static_cast<char>((n >> shift) & 0xff));
  }
  return key;
}

std::string WorkflowHeadKey(absl::string_view event_id) {
  return absl::StrCat(kWorkflowHeadPrefix, event_id);
}

std::string WorkflowStepPrefix(absl::string_view event_id) {
  return absl::StrCat(kWorkflowStepPrefix, event_id, "/");
}

std::string WorkflowAnswerPrefix(absl::string_view event_id) {
  return absl::StrCat(kWorkflowAnswerPrefix, event_id, "/");
}

namespace {
std::string WithIndex(std::string prefix, uint32_t i) {
  prefix.push_back(static_cast<char>((i >> 8) & 0xff));
  prefix.push_back(static_cast<char>(i & 0xff));
  return prefix;
}
}  // namespace

std::string WorkflowStepKey(absl::string_view event_id, uint32_t i) {
  return WithIndex(WorkflowStepPrefix(event_id), i);
}

std::string WorkflowAnswerKey(absl::string_view event_id, uint32_t i) {
  return WithIndex(WorkflowAnswerPrefix(event_id), i);
}

std::optional<RowKey> ParseWorkflowRowKey(absl::string_view key) {
  const size_t slash = key.rfind('/');
  if (key.size() < 4 || slash != key.size() - 3 || slash < 2) {
    return std::nullopt;
  }
  const uint32_t i =
      (static_cast<uint32_t>(static_cast<uint8_t>(key[slash + 1])) << 8) |
      static_cast<uint8_t>(key[slash + 2]);
  return RowKey{std::string(key.substr(1, slash - 1)), i};
}

std::string WorkflowFinishedKey(int64_t finished_unix_ms,
                                absl::string_view event_id) {
  std::string key = kWorkflowFinishedPrefix;
  AppendBigEndian64(finished_unix_ms < 0 ? 0 : finished_unix_ms, &key);
  key.append(event_id.data(), event_id.size());
  return key;
}

std::optional<FinishedKey> ParseWorkflowFinishedKey(absl::string_view key) {
  if (key.size() < 9 || key[0] != kWorkflowFinishedPrefix[0]) {
    return std::nullopt;
  }
  return FinishedKey{static_cast<int64_t>(ReadBigEndian64(key.substr(1, 8))),
                     std::string(key.substr(9))};
}

std::string WorkflowDefinitionKey(absl::string_view definition_id) {
  return absl::StrCat(kWorkflowDefinitionPrefix, definition_id);
}

}  // namespace outbox::keys
