// Copyright (c) edge-outbox authors.

#include "agent/expr/value_ref.h"

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace outbox::workflow {
namespace {

using Json = nlohmann::json;

bool IsDottedNameChar(char c) {
  return absl::ascii_isalnum(c) || c == '_' || c == '-';
}

// "$.a[0].b" -> "/a/0/b". REQUIRES: `path` starts with '$'.
absl::StatusOr<std::string> DottedToPointer(absl::string_view path) {
  auto bad = [path](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("path \"", absl::CEscape(path), "\": ", why,
                     " (dotted paths are $, .name and [index]; names of "
                     "letters, digits, '_' and '-'; anything else: write a "
                     "JSON Pointer such as \"/a/b\")"));
  };
  std::string pointer;
  size_t i = 1;
  while (i < path.size()) {
    if (path[i] == '.') {
      const size_t start = ++i;
      while (i < path.size() && IsDottedNameChar(path[i])) ++i;
      if (i == start) return bad("a '.' is not followed by a name");
      absl::StrAppend(&pointer, "/", path.substr(start, i - start));
    } else if (path[i] == '[') {
      const size_t start = ++i;
      while (i < path.size() && absl::ascii_isdigit(path[i])) ++i;
      if (i == start || i == path.size() || path[i] != ']') {
        return bad("'[' must hold a decimal index and be closed by ']'");
      }
      if (path[start] == '0' && i - start > 1) {
        return bad("an index has a leading zero");
      }
      absl::StrAppend(&pointer, "/", path.substr(start, i - start));
      ++i;
    } else {
      return bad(absl::StrCat("unexpected '", absl::CEscape(path.substr(i, 1)),
                              "' at offset ", i));
    }
  }
  return pointer;
}

}  // namespace

absl::StatusOr<std::string> ToJsonPointer(absl::string_view path) {
  if (absl::StartsWith(path, "$")) return DottedToPointer(path);
  try {
    Json::json_pointer pointer{std::string(path)};
    return pointer.to_string();
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "path \"", absl::CEscape(path),
        "\" is not a JSON Pointer (RFC 6901: \"\" or \"/name/0\", '~' "
        "written as ~0 and '/' inside a name as ~1) nor a dotted \"$.name\""));
  }
}

absl::StatusOr<ValueRef> ParseValueRef(absl::string_view text) {
  ValueRef ref;
  ref.text = std::string(text);
  absl::string_view path = text;
  if (absl::ConsumePrefix(&path, "request:")) {
    ref.source = ValueRef::Source::kRequest;
  } else if (absl::ConsumePrefix(&path, "response:")) {
    ref.source = ValueRef::Source::kResponse;
    // A path right after "response:" (seed 003's extract): the step's own
    // answer. Step names never start with '$' or '/'.
    const bool own = !path.empty() && (path[0] == '$' || path[0] == '/');
    const size_t colon = own ? 0 : path.find(':');
    if (!own && (colon == 0 || colon == absl::string_view::npos)) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", absl::CEscape(text),
                       "\" names no step: write response:<step>:<path>, e.g. "
                       "response:reserve:/reservationId, or response:$.path "
                       "for the step's own answer"));
    }
    if (!own) {
      ref.step = std::string(path.substr(0, colon));
      path.remove_prefix(colon + 1);
    }
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", absl::CEscape(text),
                     "\" is not a value reference: write request:<path> or "
                     "response:<step>:<path>"));
  }
  absl::StatusOr<std::string> pointer = ToJsonPointer(path);
  if (!pointer.ok()) return pointer.status();
  ref.pointer = *std::move(pointer);
  return ref;
}

bool IsValueName(absl::string_view name) {
  if (name.empty() || name.size() > 64 || absl::ascii_isdigit(name[0])) {
    return false;
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

ValueResolver::ValueResolver(std::string request) {
  request_.raw = std::move(request);
}

void ValueResolver::AddResponse(const std::string& step, std::string body,
                                bool cut) {
  Document& doc = responses_[step];
  doc = Document();
  doc.raw = std::move(body);
  doc.cut = cut;
}

absl::StatusOr<const nlohmann::json*> ValueResolver::Parsed(
    Document& doc, const ValueRef& ref) {
  if (!doc.parsed.has_value() && !doc.invalid) {
    Json parsed = Json::parse(doc.raw, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
      doc.invalid = true;
    } else {
      doc.parsed = std::move(parsed);
    }
  }
  if (doc.invalid) {
    // A cut answer is JSON no more: say so, so that the fix (a larger
    // workflow_response_bytes, or a smaller answer) is plain.
    return absl::InvalidArgumentError(absl::StrCat(
        ref.text, ": the ",
        ref.source == ValueRef::Source::kRequest
            ? std::string("request payload")
            : absl::StrCat("response of step \"", ref.step, "\""),
        doc.cut ? absl::StrCat(" was cut at ", doc.raw.size(),
                               " bytes (agent.workflow_response_bytes) and is "
                               "no longer JSON")
                : std::string(" is not JSON")));
  }
  return &*doc.parsed;
}

absl::StatusOr<nlohmann::json> ValueResolver::Resolve(const ValueRef& ref) {
  Document* doc = &request_;
  if (ref.source == ValueRef::Source::kResponse) {
    auto it = responses_.find(ref.step);
    if (it == responses_.end()) {
      return absl::NotFoundError(
          absl::StrCat(ref.text, ": step \"", ref.step,
                       "\" has no response (it did not run before this one)"));
    }
    doc = &it->second;
  }
  absl::StatusOr<const Json*> parsed = Parsed(*doc, ref);
  if (!parsed.ok()) return parsed.status();
  try {
    return (*parsed)->at(Json::json_pointer(ref.pointer));
  } catch (const Json::exception&) {
    // out_of_range (no such member or index) or parse_error (a name where
    // an array needs an index): either way there is no value there.
    return absl::NotFoundError(
        absl::StrCat(ref.text, ": no value at this path"));
  }
}

}  // namespace outbox::workflow
