// Copyright (c) edge-outbox authors.

#include "platform/http_token.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace outbox {

bool IsHttpToken(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) {
    return absl::ascii_isalnum(static_cast<unsigned char>(ch)) ||
           absl::StrContains(kHttpTokenPunctuation, ch);
  });
}

}  // namespace outbox
