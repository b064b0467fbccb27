// Copyright (c) edge-outbox authors.
//
// Standard Webhooks signatures (https://www.standardwebhooks.com, spec 1.0):
// a delivery carries `webhook-id`, `webhook-timestamp` (unix seconds) and
// `webhook-signature`, a space-separated list of `v1,<base64 HMAC-SHA256>`
// entries over the bytes "<id>.<timestamp>.<body>". One entry per active
// secret lets a destination rotate its secret without downtime: the sender
// signs with the old and the new key, the receiver accepts either.
//
// Only the symmetric scheme (`v1`, `whsec_` secrets) is implemented; `v1a`
// (ed25519) entries are ignored by VerifySignature, as the spec asks of a
// receiver that does not trust that scheme.

#ifndef OUTBOX_WEBHOOKS_SIGNATURE_H_
#define OUTBOX_WEBHOOKS_SIGNATURE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace outbox {

// Header names, lower case as the spec writes them (HTTP header names are
// case-insensitive on the wire).
inline constexpr absl::string_view kWebhookIdHeader = "webhook-id";
inline constexpr absl::string_view kWebhookTimestampHeader =
    "webhook-timestamp";
inline constexpr absl::string_view kWebhookSignatureHeader =
    "webhook-signature";

// The spec's recommended replay window for `webhook-timestamp`.
inline constexpr absl::Duration kDefaultTimestampTolerance = absl::Minutes(5);

// An HMAC key decoded from its `whsec_<base64>` form. The key bytes are
// reachable only through key(), and nothing here prints them: a secret must
// never reach a log. Immutable after construction, so safe for concurrent
// access without external synchronization.
class WebhookSecret {
 public:
  // REQUIRES: `key` is the decoded key, not the `whsec_` text.
  explicit WebhookSecret(std::string key) : key_(std::move(key)) {}

  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Decodes a `whsec_` + base64 secret (padding optional). The spec asks
// senders for 24..64 random bytes; shorter keys are accepted so that a
// receiver configured by someone else still works, but an empty key is not.
// Errors: kInvalidArgument when the prefix is missing, the rest is not
// base64, or the key is empty. The message never contains the secret.
absl::StatusOr<WebhookSecret> ParseWebhookSecret(absl::string_view text);

// The secrets of a secrets file's text: one `whsec_` secret per line, blank
// lines and '#' comments skipped, whitespace around each line ignored.
// Several secrets are for rotation: all of them sign, any of them verifies.
// Errors: kInvalidArgument, phrased to follow the name of what holds the
// text: "line <n>: <why>" for a malformed line (never the line itself), or
// "holds no secret; ..." when there is none.
absl::StatusOr<std::vector<WebhookSecret>> ParseSecretsText(
    absl::string_view text);

// The secrets of the secrets file at `path` (ParseSecretsText), which must be
// a regular file of at most 64 KiB that only its owner can access
// (mode & 077 == 0): anyone who can read a secret can forge deliveries.
// Shared by the agent's configuration and outbox-sink, which both read the
// same files. Messages name the file as "secrets file <path>".
// Errors: kNotFound, kPermissionDenied (this process cannot read it),
// kFailedPrecondition (accessible to group/others: the message says the
// chmod; or not a regular file), kInvalidArgument (a malformed line, named
// by number; no secret at all; larger than 64 KiB), other PosixError codes.
absl::StatusOr<std::vector<WebhookSecret>> ReadSecretsFile(
    const std::string& path);

// One signature entry, "v1,<base64(HMAC-SHA256(key, id.timestamp.body))>".
// REQUIRES: `id` contains no '.' (the spec's guard against ambiguous signed
// content); callers generate ids, so this is not checked at run time.
std::string Sign(const WebhookSecret& secret, absl::string_view id,
                 int64_t timestamp, absl::string_view body);

// The `webhook-signature` header value: one entry per secret, in order,
// separated by single spaces. Empty when `secrets` is empty.
std::string SignatureHeader(absl::Span<const WebhookSecret> secrets,
                            absl::string_view id, int64_t timestamp,
                            absl::string_view body);

// True if any `v1` entry of `header` is a valid signature of
// (id, timestamp, body) under any of `secrets`. MACs are compared in constant
// time (CRYPTO_memcmp) so a receiver cannot be used as a signing oracle.
// Malformed entries, other versions and surplus whitespace are skipped, never
// an error. Does not check the timestamp's age: see TimestampWithinTolerance.
bool VerifySignature(absl::Span<const WebhookSecret> secrets,
                     absl::string_view id, int64_t timestamp,
                     absl::string_view body, absl::string_view header);

// True if `timestamp` (unix seconds) is within `tolerance` of `now`, in
// either direction. Receivers reject stale timestamps to stop replays.
bool TimestampWithinTolerance(int64_t timestamp, absl::Time now,
                              absl::Duration tolerance);

}  // namespace outbox

#endif  // OUTBOX_WEBHOOKS_SIGNATURE_H_
