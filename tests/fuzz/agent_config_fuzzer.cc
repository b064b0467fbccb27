// Copyright (c) edge-outbox authors.
//
// Fuzzes the agent configuration parser, ParseAgentConfig
// (agent/config/config.h): protobuf text format, then validation, secrets
// files, header value files and TLS file checks.
//
// Files: the configuration is parsed as if it were <scratch>/agent.textproto,
// so relative paths resolve inside a scratch directory made at start-up and
// holding the files the seeds name (secrets/backend.whsec,
// secrets/backend.auth, certs/...), plus a few broken ones. Inputs whose
// strings could reach outside it (an absolute path, a ".." anywhere) are
// skipped: a fuzzer must not open arbitrary files of the machine it runs on
// (a device could do harm).
//
// Properties checked besides "no crash, no sanitizer report, no leak":
//   - failures have one of the documented codes and name the source first;
//   - a configuration that loads keeps the documented promises: destinations
//     exist with unique names and valid retry schedules, routes name them,
//     and Route() answers with one of them.

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "agent/config/config.h"
#include "agent/retry/retry_policy.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/message.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/text_format.h"
#include "proto/agent_config.pb.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace fs = std::filesystem;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// The scratch directory, and the name the input is parsed under.
std::string* scratch_dir = nullptr;
std::string* source_name = nullptr;

void WriteFile(const fs::path& path, absl::string_view text, mode_t mode) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  FUZZ_CHECK(chmod(path.c_str(), mode) == 0, "chmod in the scratch directory");
}

void RemoveScratch() {
  std::error_code ignored;
  fs::remove_all(*scratch_dir, ignored);
}

// Makes the scratch directory and the files configurations may name.
void MakeScratch() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
      "/outbox-config-fuzz-XXXXXX";
  FUZZ_CHECK(mkdtemp(pattern.data()) != nullptr, "mkdtemp");
  scratch_dir = new std::string(pattern);
  source_name = new std::string(*scratch_dir + "/agent.textproto");
  std::atexit(RemoveScratch);

  const fs::path dir(*scratch_dir);
  // Good secrets (the first is the Standard Webhooks documentation's example),
  // with a comment and a blank line as the format allows.
  WriteFile(dir / "secrets/backend.whsec",
            "# rotated 2024-03\n\nwhsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n"
            "whsec_dGhpcyBpcyBhIHNlY29uZCBrZXk=\n",
            0600);
  WriteFile(dir / "secrets/group-readable.whsec",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", 0640);
  WriteFile(dir / "secrets/empty.whsec", "# nothing yet\n", 0600);
  WriteFile(dir / "secrets/malformed.whsec", "whsec_not*base64\n", 0600);
  // Header value files: good, readable by others, and two lines.
  WriteFile(dir / "secrets/backend.auth", "Bearer replace-me\n", 0600);
  WriteFile(dir / "secrets/open.auth", "Bearer replace-me\n", 0644);
  WriteFile(dir / "secrets/two-lines.auth", "a\r\nb\n", 0600);
  // TLS files are only checked to be readable files (or a directory).
  WriteFile(dir / "certs/backend-ca.pem", "-----BEGIN CERTIFICATE-----\n",
            0644);
  WriteFile(dir / "certs/client.pem", "-----BEGIN CERTIFICATE-----\n", 0644);
  WriteFile(dir / "certs/client.key", "-----BEGIN PRIVATE KEY-----\n", 0600);
  fs::create_directories(dir / "certs/ca.d");
}

// True if `text` could name a file outside the scratch directory.
bool CouldEscape(const std::string& text) {
  return absl::StartsWith(text, "/") || absl::StrContains(text, "..");
}

// True if any string in `message`, at any depth, could escape. Every string,
// not only today's path fields, so that a path field added later is covered.
bool AnyStringCouldEscape(const Message& message) {
  const Reflection* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const bool repeated = field->is_repeated();
    const int count = repeated ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < count; ++i) {
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        std::string scratch;
        const std::string& value =
            repeated ? reflection->GetRepeatedStringReference(message, field, i,
                                                              &scratch)
                     : reflection->GetStringReference(message, field, &scratch);
        if (CouldEscape(value)) return true;
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        const Message& child =
            repeated ? reflection->GetRepeatedMessage(message, field, i)
                     : reflection->GetMessage(message, field);
        if (AnyStringCouldEscape(child)) return true;
      }
    }
  }
  return false;
}

// Discards the parser's errors: ParseAgentConfig reports its own.
class NoErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, int, const std::string&) override {}
};

void CheckLoaded(const outbox::AgentConfig& config) {
  FUZZ_CHECK(!config.destinations.empty(), "loaded without a destination");
  FUZZ_CHECK(outbox::ValidateRetryPolicy(config.retry).ok(),
             "loaded an invalid top-level retry policy");
  absl::flat_hash_set<std::string> names;
  for (const outbox::Destination& d : config.destinations) {
    FUZZ_CHECK(names.insert(d.name).second, "two destinations share a name");
    FUZZ_CHECK(outbox::ValidateRetryPolicy(d.retry).ok(),
               "loaded an invalid destination retry policy");
    FUZZ_CHECK(d.connect_timeout > absl::ZeroDuration() &&
                   d.timeout >= d.connect_timeout,
               "loaded timeouts out of order");
    FUZZ_CHECK(d.secrets_file.empty() == d.secrets.empty(),
               "a secrets file without secrets, or secrets without a file");
  }
  absl::flat_hash_set<std::string> patterns;
  for (const outbox::RouteRule& rule : config.routes) {
    FUZZ_CHECK(names.contains(rule.destination),
               "a route names a missing destination");
    FUZZ_CHECK(patterns.insert(rule.event_type).second,
               "two routes share a pattern");
    // Routing a type the rule itself matches must find some destination.
    const std::string type =
        rule.kind == outbox::RouteRule::Kind::kExact    ? rule.event_type
        : rule.kind == outbox::RouteRule::Kind::kPrefix ? rule.prefix + "x"
                                                        : "any.type";
    const absl::StatusOr<const outbox::Destination*> d =
        outbox::Route(config, type, "");
    FUZZ_CHECK(d.ok(), "a routed type finds no destination");
    FUZZ_CHECK(names.contains((*d)->name), "Route() returned a stranger");
  }
  for (const outbox::Destination& d : config.destinations) {
    const absl::StatusOr<const outbox::Destination*> found =
        outbox::Route(config, "", d.name);
    FUZZ_CHECK(found.ok() && *found == &d,
               "an explicit destination does not route to itself");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A parse of junk makes protobuf log; thousands of lines a second would
  // only slow the fuzzer down.
  google::protobuf::SetLogHandler(nullptr);
  MakeScratch();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  {
    // The same parse ParseAgentConfig starts with, to see the strings.
    outbox::config::AgentConfig proto;
    NoErrors errors;
    google::protobuf::TextFormat::Parser parser;
    parser.RecordErrorsTo(&errors);
    if (parser.ParseFromString(text, &proto) && AnyStringCouldEscape(proto)) {
      return -1;  // Skipped; libFuzzer may also keep it out of the corpus.
    }
  }

  const absl::StatusOr<outbox::AgentConfig> config =
      outbox::ParseAgentConfig(text, *source_name);
  if (config.ok()) {
    CheckLoaded(*config);
    return 0;
  }
  const absl::StatusCode code = config.status().code();
  FUZZ_CHECK(code == absl::StatusCode::kInvalidArgument ||
                 code == absl::StatusCode::kNotFound ||
                 code == absl::StatusCode::kPermissionDenied ||
                 code == absl::StatusCode::kFailedPrecondition,
             "a failure with an undocumented code");
  FUZZ_CHECK(absl::StartsWith(config.status().message(), *source_name),
             "an error that does not start with the source name");
  return 0;
}
