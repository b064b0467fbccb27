// Copyright (c) edge-outbox authors.

#include "tests/testing/skip.h"

#include <cstdlib>

#include "absl/strings/str_split.h"

namespace outbox::testing {

bool FeatureRequired(absl::string_view feature) {
  const char* required = std::getenv("OUTBOX_REQUIRE");
  if (required == nullptr) return false;
  for (absl::string_view name : absl::StrSplit(required, ',')) {
    if (name == "all" || name == feature) return true;
  }
  return false;
}

}  // namespace outbox::testing
