// Copyright (c) edge-outbox authors.

#include "webhooks/signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "platform/files.h"

namespace outbox {
namespace {

constexpr absl::string_view kSecretPrefix = "whsec_";
constexpr absl::string_view kVersion = "v1";
constexpr size_t kMacSize = 32;  // SHA-256

struct Mac {
  unsigned char bytes[kMacSize];
};

// HMAC-SHA256(key, "<id>.<timestamp>.<body>"). Returns false only if OpenSSL
// itself fails (allocation failure, or a provider configuration without
// SHA-256), which a caller cannot fix by retrying with other input.
bool ComputeMac(const WebhookSecret& secret, absl::string_view id,
                int64_t timestamp, absl::string_view body, Mac* mac) {
  const std::string& key = secret.key();
  if (key.size() > static_cast<size_t>(INT_MAX)) return false;
  const std::string content = absl::StrCat(id, ".", timestamp, ".", body);
  unsigned int mac_len = 0;
  // key.data() is never null, even for an empty key: OpenSSL 3 rejects a
  // null key pointer.
  const unsigned char* out =
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(content.data()),
           content.size(), mac->bytes, &mac_len);
  return out != nullptr && mac_len == kMacSize;
}

bool IsBase64Char(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '+' ||
         c == '/' || c == '=';
}

}  // namespace

absl::StatusOr<WebhookSecret> ParseWebhookSecret(absl::string_view text) {
  // The messages below name what is wrong, never the text itself: the text
  // is a secret, and error messages end up in logs.
  if (!absl::StartsWith(text, kSecretPrefix)) {
    return absl::InvalidArgumentError(
        "webhook secret must start with \"whsec_\" followed by base64");
  }
  absl::string_view encoded = text.substr(kSecretPrefix.size());
  for (char c : encoded) {
    if (!IsBase64Char(c)) {
      return absl::InvalidArgumentError(
          "webhook secret has a character outside the base64 alphabet after "
          "\"whsec_\"");
    }
  }
  std::string key;
  if (!absl::Base64Unescape(encoded, &key)) {
    return absl::InvalidArgumentError(
        "webhook secret is not valid base64 after \"whsec_\"");
  }
  if (key.empty()) {
    return absl::InvalidArgumentError(
        "webhook secret has an empty key after \"whsec_\"");
  }
  return WebhookSecret(std::move(key));
}

absl::StatusOr<std::vector<WebhookSecret>> ParseSecretsText(
    absl::string_view text) {
  std::vector<WebhookSecret> secrets;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    absl::StatusOr<WebhookSecret> secret = ParseWebhookSecret(line);
    if (!secret.ok()) {
      // ParseWebhookSecret's messages never contain the text they reject.
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_number, ": ", secret.status().message()));
    }
    secrets.push_back(*std::move(secret));
  }
  if (secrets.empty()) {
    return absl::InvalidArgumentError(
        "holds no secret; write one \"whsec_<base64>\" per line");
  }
  return secrets;
}

absl::StatusOr<std::vector<WebhookSecret>> ReadSecretsFile(
    const std::string& path) {
  ReadFileOptions options;
  options.what = "secrets file";
  options.require_private = true;
  options.max_bytes = size_t{64} << 10;
  absl::StatusOr<std::string> text = ReadFileChecked(path, options);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<WebhookSecret>> secrets = ParseSecretsText(*text);
  if (!secrets.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("secrets file ", path, " ", secrets.status().message()));
  }
  return secrets;
}

std::string Sign(const WebhookSecret& secret, absl::string_view id,
                 int64_t timestamp, absl::string_view body) {
  Mac mac;
  if (!ComputeMac(secret, id, timestamp, body, &mac)) {
    // Sending unsigned would be silently wrong and there is no status to
    // return through this signature: HMAC-SHA256 failing means the crypto
    // library is unusable, so stop loudly.
    std::fprintf(stderr, "outbox: HMAC-SHA256 failed in OpenSSL\n");
    std::abort();
  }
  return absl::StrCat(
      kVersion, ",",
      absl::Base64Escape(absl::string_view(
          reinterpret_cast<const char*>(mac.bytes), sizeof(mac.bytes))));
}

std::string SignatureHeader(absl::Span<const WebhookSecret> secrets,
                            absl::string_view id, int64_t timestamp,
                            absl::string_view body) {
  std::string header;
  for (const WebhookSecret& secret : secrets) {
    if (!header.empty()) header.push_back(' ');
    header += Sign(secret, id, timestamp, body);
  }
  return header;
}

bool VerifySignature(absl::Span<const WebhookSecret> secrets,
                     absl::string_view id, int64_t timestamp,
                     absl::string_view body, absl::string_view header) {
  std::vector<Mac> expected;
  expected.reserve(secrets.size());
  for (const WebhookSecret& secret : secrets) {
    Mac mac;
    if (ComputeMac(secret, id, timestamp, body, &mac)) expected.push_back(mac);
  }
  bool matched = false;
  for (absl::string_view entry :
       absl::StrSplit(header, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    const size_t comma = entry.find(',');
    if (comma == absl::string_view::npos) continue;
    if (entry.substr(0, comma) != kVersion) continue;  // e.g. v1a (ed25519)
    std::string given;
    if (!absl::Base64Unescape(entry.substr(comma + 1), &given) ||
        given.size() != kMacSize) {
      continue;
    }
    // No early exit: every entry is compared against every key, so the time
    // taken does not reveal which one matched.
    for (const Mac& mac : expected) {
      matched |= CRYPTO_memcmp(given.data(), mac.bytes, kMacSize) == 0;
    }
  }
  return matched;
}

bool TimestampWithinTolerance(int64_t timestamp, absl::Time now,
                              absl::Duration tolerance) {
  const absl::Duration skew =
      absl::AbsDuration(now - absl::FromUnixSeconds(timestamp));
  return skew <= tolerance;
}

}  // namespace outbox
