// Copyright (c) edge-outbox authors.
//
// Fuzzes the Standard Webhooks code (webhooks/signature.h) on what a
// configuration or a delivery can carry: ParseWebhookSecret on secret text,
// VerifySignature on a `webhook-signature` header, TimestampWithinTolerance
// on a `webhook-timestamp`.
//
// Input (FuzzedDataProvider): secret text, webhook id and body as
// backslash-terminated strings from the front, the timestamp, `now` and a
// tolerance from the back, and the signature header from what is left.
//
// Properties checked besides "no crash, no sanitizer report":
//   - a rejected secret's message does not depend on the secret;
//   - what SignatureHeader signs verifies, also behind junk entries, and
//     stops verifying when the body or the timestamp changes;
//   - the tolerance check is exact at its edges (0 skew, negative tolerance).

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "tests/fuzz/fuzz_check.h"
#include "webhooks/signature.h"

namespace {

using outbox::WebhookSecret;

// The Standard Webhooks documentation's example secret: always one of the
// keys, so that signing and verifying run whether or not the input's own
// secret text parses.
constexpr char kKnownSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

// `text` with every letter and digit replaced by the next one of its kind
// (a->b, z->a, 9->0): the same shape, none of the same secret.
std::string Rotate(absl::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = c == 'z' ? 'a' : c + 1;
    if (c >= 'A' && c <= 'Z') c = c == 'Z' ? 'A' : c + 1;
    if (c >= '0' && c <= '9') c = c == '9' ? '0' : c + 1;
  }
  return out;
}

void CheckSecretText(const std::string& text,
                     std::vector<WebhookSecret>* secrets) {
  const absl::StatusOr<WebhookSecret> secret = outbox::ParseWebhookSecret(text);
  if (secret.ok()) {
    FUZZ_CHECK(absl::StartsWith(text, "whsec_"), "accepted without whsec_");
    FUZZ_CHECK(!secret->key().empty(), "accepted an empty key");
    secrets->push_back(*secret);
    return;
  }
  FUZZ_CHECK(secret.status().code() == absl::StatusCode::kInvalidArgument,
             "ParseWebhookSecret failed with a code other than "
             "kInvalidArgument");
  // The message must not depend on the secret itself, only on what is wrong
  // with it: a different secret of the same shape gets the same message.
  const bool prefixed = absl::StartsWith(text, "whsec_");
  const std::string other =
      prefixed ? absl::StrCat("whsec_", Rotate(text.substr(6))) : Rotate(text);
  if (absl::StartsWith(other, "whsec_") != prefixed) return;
  const absl::StatusOr<WebhookSecret> other_secret =
      outbox::ParseWebhookSecret(other);
  if (!other_secret.ok()) {
    FUZZ_CHECK(other_secret.status().message() == secret.status().message(),
               "a rejected secret's message depends on the secret");
  }
}

void CheckSigning(const std::vector<WebhookSecret>& secrets,
                  const std::string& id, int64_t timestamp,
                  const std::string& body, const std::string& junk) {
  // Sign() requires an id without '.'; the agent generates UUIDs.
  const std::string signing_id = absl::StrReplaceAll(id, {{".", ""}});
  const std::string header =
      outbox::SignatureHeader(secrets, signing_id, timestamp, body);
  FUZZ_CHECK(
      outbox::VerifySignature(secrets, signing_id, timestamp, body, header),
      "a signature header does not verify");
  FUZZ_CHECK(outbox::VerifySignature(secrets, signing_id, timestamp, body,
                                     junk + " " + header),
             "junk entries before a valid one made it fail");
  for (const WebhookSecret& secret : secrets) {
    FUZZ_CHECK(
        outbox::VerifySignature({secret}, signing_id, timestamp, body, header),
        "one secret alone does not verify its entry");
  }
  FUZZ_CHECK(!outbox::VerifySignature(secrets, signing_id, timestamp,
                                      body + "x", header),
             "a changed body still verifies");
  if (timestamp < std::numeric_limits<int64_t>::max()) {
    FUZZ_CHECK(!outbox::VerifySignature(secrets, signing_id, timestamp + 1,
                                        body, header),
               "a changed timestamp still verifies");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string secret_text = in.ConsumeRandomLengthString(256);
  const std::string id = in.ConsumeRandomLengthString(128);
  const std::string body = in.ConsumeRandomLengthString(4096);
  const int64_t timestamp = in.ConsumeIntegral<int64_t>();
  const absl::Time now = absl::FromUnixSeconds(in.ConsumeIntegral<int64_t>());
  const absl::Duration tolerance = absl::Seconds(in.ConsumeIntegral<int64_t>());
  const std::string header = in.ConsumeRemainingBytesAsString();

  std::vector<WebhookSecret> secrets;
  CheckSecretText(secret_text, &secrets);
  // What a receiver does with an untrusted header: must not crash, and with
  // no keys nothing can verify.
  outbox::VerifySignature(secrets, id, timestamp, body, header);
  FUZZ_CHECK(!outbox::VerifySignature({}, id, timestamp, body, header),
             "verified without any secret");

  const absl::StatusOr<WebhookSecret> known =
      outbox::ParseWebhookSecret(kKnownSecret);
  FUZZ_CHECK(known.ok(), "the example secret does not parse");
  secrets.push_back(*known);
  CheckSigning(secrets, id, timestamp, body, header);

  const bool within =
      outbox::TimestampWithinTolerance(timestamp, now, tolerance);
  if (tolerance < absl::ZeroDuration()) {
    FUZZ_CHECK(!within, "within a negative tolerance");
  }
  if (absl::FromUnixSeconds(timestamp) == now &&
      tolerance >= absl::ZeroDuration()) {
    FUZZ_CHECK(within, "zero skew is outside the tolerance");
  }
  return 0;
}
