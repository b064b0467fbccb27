// Copyright (c) edge-outbox authors.

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/config/internal.h"
#include "base/status_macros.h"
#include "proto/agent_config.pb.h"

namespace outbox::config_internal {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

const FieldDescriptor* Checker::Field(const Node& node,
                                      absl::string_view field) const {
  return node.message->GetDescriptor()->FindFieldByName(std::string(field));
}

int Checker::Line(const Node& node, absl::string_view field, int index) const {
  const FieldDescriptor* fd = Field(node, field);
  // ParseInfoTree treats a wrong kind of index as a fatal programming error,
  // so an error about a whole repeated field goes to the node's line.
  if (node.tree == nullptr || fd == nullptr ||
      (fd->is_repeated() && index < 0)) {
    return node.line;
  }
  const int line =
      node.tree->GetLocation(fd, fd->is_repeated() ? index : -1).line;
  return line >= 0 ? line + 1 : node.line;
}

namespace {

// "destinations[1].url"; the node's own path when `field` is empty.
std::string PathOf(const Node& node, absl::string_view field, int index) {
  if (field.empty()) return node.path;
  std::string path = node.path.empty() ? std::string(field)
                                       : absl::StrCat(node.path, ".", field);
  if (index >= 0) absl::StrAppend(&path, "[", index, "]");
  return path;
}

}  // namespace

Node Checker::Child(const Node& node, absl::string_view field,
                    int index) const {
  const FieldDescriptor* fd = Field(node, field);
  const int slot = fd->is_repeated() ? index : -1;
  const auto* reflection = node.message->GetReflection();
  const Message& message =
      fd->is_repeated()
          ? reflection->GetRepeatedMessage(*node.message, fd, index)
          : reflection->GetMessage(*node.message, fd);
  return Node{
      &message,
      node.tree == nullptr ? nullptr : node.tree->GetTreeForNested(fd, slot),
      PathOf(node, field, slot), Line(node, field, slot)};
}

absl::Status Checker::Error(const Node& node, absl::string_view field,
                            int index, absl::string_view what,
                            absl::StatusCode code) const {
  const int line = Line(node, field, index);
  const std::string where =
      line > 0 ? absl::StrCat(source_, ":", line) : source_;
  return absl::Status(
      code, absl::StrCat(where, ": ", PathOf(node, field, index), ": ", what));
}

absl::StatusOr<std::string> Checker::Resolve(const std::string& path) const {
  for (const absl::string_view prefix :
       {"$CREDENTIALS_DIRECTORY/", "${CREDENTIALS_DIRECTORY}/"}) {
    if (!absl::StartsWith(path, prefix)) continue;
    if (credentials_dir_.empty()) {
      return absl::FailedPreconditionError(
          "names $CREDENTIALS_DIRECTORY, which is not set: systemd sets it "
          "for a service with LoadCredential= (docs/operations.md, \"Running "
          "on a device\"); outside systemd, set it to the directory holding "
          "the file, or write the file's own path");
    }
    return absl::StrCat(credentials_dir_, "/", path.substr(prefix.size()));
  }
  if (path.empty() || path.front() == '/' || dir_.empty()) return path;
  return dir_ == "/" ? absl::StrCat("/", path) : absl::StrCat(dir_, "/", path);
}

absl::Status Checker::Duration(const Node& node, absl::string_view field,
                               Bound bound, absl::Duration* out) const {
  const std::string text = node.message->GetReflection()->GetString(
      *node.message, Field(node, field));
  if (text.empty()) return absl::OkStatus();
  absl::Duration value;
  if (!absl::ParseDuration(text, &value) || value == absl::InfiniteDuration() ||
      value == -absl::InfiniteDuration()) {
    return Error(node, field, -1,
                 absl::StrCat("\"", absl::CEscape(text),
                              "\" is not a duration; write e.g. \"500ms\", "
                              "\"10s\", \"2m\" or \"72h\""));
  }
  if (value < absl::ZeroDuration() ||
      (bound == Bound::kPositive && value == absl::ZeroDuration())) {
    return Error(
        node, field, -1,
        absl::StrCat("must be ", bound == Bound::kPositive ? "> 0" : ">= 0",
                     ", got \"", text, "\""));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ApplyRetry(const Checker& c, const Node& node,
                        RetryPolicy* policy) {
  using Bound = Checker::Bound;
  const auto& retry = static_cast<const config::RetryConfig&>(*node.message);
  OUTBOX_RETURN_IF_ERROR(
      c.Duration(node, "base_delay", Bound::kPositive, &policy->base_delay));
  OUTBOX_RETURN_IF_ERROR(
      c.Duration(node, "max_delay", Bound::kPositive, &policy->max_delay));
  OUTBOX_RETURN_IF_ERROR(
      c.Duration(node, "max_age", Bound::kPositive, &policy->max_age));
  OUTBOX_RETURN_IF_ERROR(c.Duration(
      node, "max_retry_after", Bound::kNonNegative, &policy->max_retry_after));
  if (retry.has_max_attempts()) {
    if (retry.max_attempts() < 1) {
      return c.Error(node, "max_attempts", -1,
                     absl::StrCat("must be >= 1, got ", retry.max_attempts()));
    }
    policy->max_attempts = retry.max_attempts();
  }
  // Checked on the effective policy: a destination may raise base_delay
  // above the max_delay it inherits without writing max_delay itself.
  if (policy->max_delay < policy->base_delay) {
    return c.Error(
        node, "max_delay", -1,
        absl::StrCat("must be >= base_delay (effective max_delay ",
                     absl::FormatDuration(policy->max_delay), ", base_delay ",
                     absl::FormatDuration(policy->base_delay), ")"));
  }
  // The checks above cover every rule today; this keeps a rule added to
  // RetryPolicy later from slipping through, at the retry block's line.
  const absl::Status valid = ValidateRetryPolicy(*policy);
  if (!valid.ok()) return c.Error(node, "", -1, valid.message());
  return absl::OkStatus();
}

}  // namespace outbox::config_internal
