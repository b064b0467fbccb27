// Copyright (c) edge-outbox authors.

#include "tests/crash/soak_records.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace outbox::testing {
namespace {

constexpr absl::string_view kEventsPrefix = "events=";
constexpr absl::string_view kRecordsField = "\"records\":[";

}  // namespace

std::string SoakRecordKey(uint64_t serial, int index) {
  return absl::StrCat("t", serial, "-r", index);
}

std::string SoakRecordValue(const std::vector<std::string>& event_ids) {
  return absl::StrCat(kEventsPrefix, absl::StrJoin(event_ids, ","));
}

std::vector<std::string> EventIdsOfRecord(absl::string_view value) {
  if (!absl::ConsumePrefix(&value, kEventsPrefix) || value.empty()) return {};
  return absl::StrSplit(value, ',');
}

std::string SoakPayload(uint64_t serial, int index,
                        const std::vector<std::string>& record_keys) {
  return absl::StrCat("{\"txn\":", serial, ",\"n\":", index, ",", kRecordsField,
                      "\"", absl::StrJoin(record_keys, "\",\""), "\"]}");
}

std::vector<std::string> RecordKeysOfPayload(absl::string_view payload) {
  const size_t at = payload.find(kRecordsField);
  if (at == absl::string_view::npos) return {};
  absl::string_view list = payload.substr(at + kRecordsField.size());
  const size_t end = list.find(']');
  if (end == absl::string_view::npos) return {};
  list = list.substr(0, end);
  std::vector<std::string> keys;
  for (absl::string_view quoted : absl::StrSplit(list, ',')) {
    if (!absl::ConsumePrefix(&quoted, "\"") ||
        !absl::ConsumeSuffix(&quoted, "\"") || quoted.empty()) {
      return {};
    }
    keys.emplace_back(quoted);
  }
  return keys;
}

}  // namespace outbox::testing
