// Copyright (c) edge-outbox authors.

#include "tools/json_bytes.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace outbox {

bool IsValidUtf8(absl::string_view s) {
  // nlohmann's serializer checks UTF-8 as it escapes, and with the strict
  // handler (its default) reports the first bad byte as type_error 316.
  try {
    const std::string dumped = nlohmann::json(std::string(s)).dump();
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
  return true;
}

void SetBytes(absl::string_view name, absl::string_view bytes,
              nlohmann::ordered_json* object) {
  if (IsValidUtf8(bytes)) {
    (*object)[std::string(name)] = std::string(bytes);
  } else {
    (*object)[absl::StrCat(name, "_base64")] = absl::Base64Escape(bytes);
  }
}

std::string DumpJson(const nlohmann::ordered_json& value) {
  return value.dump(/*indent=*/-1, /*indent_char=*/' ', /*ensure_ascii=*/false,
                    nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace outbox
