// Copyright (c) edge-outbox authors.
//
// Writes the binary seeds of the stored_entry and webhook_signature fuzz
// targets (tests/fuzz/corpus/<target>/), whose inputs are serialized messages
// and FuzzedDataProvider layouts that nobody should write by hand. The text
// seeds (agent_config, retry_after) are written by hand. Run from the fuzz
// build after a schema change:
//   cmake --build build/fuzz --target make_seeds
//   build/fuzz/bin/make_seeds tests/fuzz/corpus

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/codec.h"
#include "proto/storage.pb.h"
#include "webhooks/signature.h"

namespace {

using outbox::storage::OutboxEntry;

std::string root;  // the corpus directory, from argv

void Write(absl::string_view target, absl::string_view name,
           absl::string_view bytes) {
  const std::string path = absl::StrCat(root, "/", target, "/", name);
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out) {
    std::fprintf(stderr, "make_seeds: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

// stored_entry layout: kind byte, big-endian seq, value.
std::string StoredInput(uint8_t kind, uint64_t seq, absl::string_view value) {
  std::string input(1, static_cast<char>(kind));
  for (int shift = 56; shift >= 0; shift -= 8) {
    input.push_back(static_cast<char>((seq >> shift) & 0xff));
  }
  return absl::StrCat(input, value);
}

OutboxEntry NewEntry(uint64_t seq) {
  outbox::PendingEvent e;
  e.seq = seq;
  e.id = "018e0b7c-5f3a-7cc2-9d1e-3b5a2f4c6d7e";
  e.type = "sale.created";
  e.payload = R"({"sale":1042,"total_cents":1999})";
  e.content_type = "application/json";
  e.created = absl::FromUnixMillis(1709294400123);
  e.next_attempt = absl::InfinitePast();
  return outbox::ToEntry(e);
}

void StoredEntrySeeds() {
  constexpr absl::string_view t = "stored_entry";
  Write(t, "pending-new", StoredInput(0, 1, outbox::Encode(NewEntry(1))));

  OutboxEntry retried = NewEntry(77);
  retried.set_ordering_key("till-3");
  retried.set_destination("backend");
  retried.set_idempotency_key("pos-3/sale/1042");
  retried.set_attempts(4);
  retried.set_first_attempt_unix_ms(1709294401000);
  retried.set_next_attempt_unix_ms(1709294460000);
  retried.set_last_error("HTTP 503 from backend");
  retried.set_last_http_status(503);
  Write(t, "pending-retried", StoredInput(0, 77, outbox::Encode(retried)));
  // The same bytes under another key: a misplaced value.
  Write(t, "pending-wrong-key", StoredInput(0, 78, outbox::Encode(retried)));

  outbox::storage::DeadLetter dead;
  *dead.mutable_entry() = retried;
  dead.mutable_entry()->set_state(outbox::storage::ENTRY_STATE_DEAD);
  dead.set_reason("HTTP 400: dead-lettered");
  dead.set_dead_unix_ms(1709294500000);
  Write(t, "dead-letter", StoredInput(1, 0, outbox::Encode(dead)));

  outbox::storage::DeadLetter undecodable;
  undecodable.mutable_entry()->set_seq(9);
  undecodable.mutable_entry()->set_event_id("undecodable-0000000000000009");
  undecodable.set_reason("undecodable pending value");
  undecodable.set_undecodable_value("\x0a\xff\xff junk");
  undecodable.set_undecodable(true);
  Write(t, "dead-letter-undecodable",
        StoredInput(1, 0, outbox::Encode(undecodable)));

  outbox::storage::IdempotencyRecord record;
  record.add_event_ids("018e0b7c-5f3a-7cc2-9d1e-3b5a2f4c6d7e");
  record.add_event_ids("018e0b7c-5f3a-7cc2-9d1e-3b5a2f4c6d7f");
  record.set_response(R"({"ok":true})");
  record.set_committed_unix_ms(1709294400123);
  Write(t, "idempotency-record", StoredInput(2, 0, outbox::Encode(record)));

  outbox::storage::QueueState queue;
  queue.set_next_seq(78);
  queue.set_head_seq(1);
  queue.set_pending_count(2);
  queue.set_pending_bytes(321);
  queue.set_delivered_total(75);
  queue.set_dead_count(1);
  Write(t, "queue-state", StoredInput(3, 0, outbox::Encode(queue)));

  outbox::storage::StoreManifest manifest;
  manifest.set_schema_version(1);
  manifest.add_tables("sales");
  manifest.set_created_by("edge-outbox 0.1.0");
  manifest.set_created_unix_ms(1709294400000);
  Write(t, "store-manifest", StoredInput(4, 0, outbox::Encode(manifest)));
}

// webhook_signature layout: backslash-terminated strings from the front, the
// remaining bytes as the header, int64s from the back (last first, each
// little-endian and offset by 2^63, as FuzzedDataProvider reads them).
std::string Int64FromBack(int64_t value) {
  const uint64_t raw = static_cast<uint64_t>(value) ^ (uint64_t{1} << 63);
  std::string bytes;
  for (int i = 0; i < 8; ++i) {
    bytes.push_back(static_cast<char>((raw >> (8 * i)) & 0xff));
  }
  return bytes;
}

std::string WebhookInput(absl::string_view secret, absl::string_view id,
                         absl::string_view body, int64_t timestamp, int64_t now,
                         int64_t tolerance, absl::string_view header) {
  return absl::StrCat(secret, "\\|", id, "\\|", body, "\\|", header,
                      Int64FromBack(tolerance), Int64FromBack(now),
                      Int64FromBack(timestamp));
}

void WebhookSeeds() {
  constexpr absl::string_view t = "webhook_signature";
  constexpr absl::string_view kSecret =
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  constexpr absl::string_view kId = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
  constexpr absl::string_view kBody = R"({"test": 2432232314})";
  constexpr int64_t kTimestamp = 1674087231;
  const absl::StatusOr<outbox::WebhookSecret> secret =
      outbox::ParseWebhookSecret(kSecret);
  if (!secret.ok()) {
    std::fprintf(stderr, "make_seeds: the example secret does not parse\n");
    std::exit(1);
  }
  const std::string signature = outbox::Sign(*secret, kId, kTimestamp, kBody);
  Write(t, "valid",
        WebhookInput(kSecret, kId, kBody, kTimestamp, kTimestamp, 300,
                     signature));
  Write(t, "rotation",
        WebhookInput(kSecret, kId, kBody, kTimestamp, kTimestamp + 299, 300,
                     absl::StrCat("v1,bm90IHRoZSBvbGQga2V5 ",
                                  "v1a,ZWQyNTUxOQ== ", signature)));
  Write(t, "stale",
        WebhookInput(kSecret, kId, kBody, kTimestamp, kTimestamp + 301, 300,
                     signature));
  Write(t, "bad-secret",
        WebhookInput("whsec_****", kId, kBody, kTimestamp, kTimestamp, 300,
                     "v1,"));
  Write(t, "no-prefix",
        WebhookInput("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", kId, "", 0, 0, 0,
                     "v1,\tv1,====  v2,abc"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s tests/fuzz/corpus\n", argv[0]);
    return 2;
  }
  root = argv[1];
  StoredEntrySeeds();
  WebhookSeeds();
  return 0;
}
