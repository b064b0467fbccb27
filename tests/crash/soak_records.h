// Copyright (c) edge-outbox authors.
//
// The shape of the soak's business data, chosen so that "both or neither"
// can be checked from what a reopened store holds, without the model: every
// record's value names the ids of its transaction's events, and every
// event's payload names the keys of its transaction's records.

#ifndef OUTBOX_TESTS_CRASH_SOAK_RECORDS_H_
#define OUTBOX_TESTS_CRASH_SOAK_RECORDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace outbox::testing {

// The record table every soak transaction writes.
inline constexpr char kSoakTable[] = "sales";

// "t<serial>-r<index>": record keys are unique per transaction.
std::string SoakRecordKey(uint64_t serial, int index);

// "events=<id>,<id>,...".
std::string SoakRecordValue(const std::vector<std::string>& event_ids);
// The ids a record value names; empty if it is not one.
std::vector<std::string> EventIdsOfRecord(absl::string_view value);

// {"txn":<serial>,"n":<index>,"records":["<key>",...]}
std::string SoakPayload(uint64_t serial, int index,
                        const std::vector<std::string>& record_keys);
// The record keys a payload names; empty if it is not one.
std::vector<std::string> RecordKeysOfPayload(absl::string_view payload);

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_SOAK_RECORDS_H_
