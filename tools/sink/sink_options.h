// Copyright (c) edge-outbox authors.
//
// Command-line options of outbox-sink, the test receiver.

#ifndef OUTBOX_TOOLS_SINK_SINK_OPTIONS_H_
#define OUTBOX_TOOLS_SINK_SINK_OPTIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace outbox::sink {

// How the sink misbehaves on purpose. The three rates share one draw per
// request, so they are exclusive and must add up to at most 1.
struct FaultOptions {
  // Fraction of requests whose connection is closed after the request was
  // read, without any response: the "sent but not acknowledged" case.
  double drop_rate = 0;
  // Fraction answered with `fail_status` (a 5xx by default).
  double fail_rate = 0;
  int fail_status = 503;
  // Fraction answered 429 with `Retry-After: <retry_after>`.
  double throttle_rate = 0;
  // Sent verbatim, so tests can use delta-seconds or any HTTP-date format.
  std::string retry_after = "1";
  // Sleep before answering (or dropping) every request.
  absl::Duration delay = absl::ZeroDuration();
  // Fixed status for requests whose `type_header` equals the key.
  std::map<std::string, int> status_for_type;
  std::string type_header = "x-event-type";
  // Seeds the fault draws; unset = from the OS, printed at start-up.
  std::optional<uint64_t> seed;
};

struct SinkOptions {
  int port = -1;  // 0 = any free port.
  std::string port_file;
  std::string bind_address = "127.0.0.1";
  std::string secret_file;
  std::string log_path;
  std::string tls_cert;
  std::string tls_key;
  std::string routes_path;  // --routes; empty: every POST is answered 200.
  absl::Duration timestamp_tolerance = absl::Minutes(5);
  FaultOptions faults;
  bool help = false;
};

// Parses argv[1..]. Both `--flag value` and `--flag=value` work.
// Errors: kInvalidArgument naming the flag and what is wrong with it.
absl::StatusOr<SinkOptions> ParseSinkFlags(
    const std::vector<std::string>& args);

// The --help text.
std::string SinkUsage();

}  // namespace outbox::sink

#endif  // OUTBOX_TOOLS_SINK_SINK_OPTIONS_H_
