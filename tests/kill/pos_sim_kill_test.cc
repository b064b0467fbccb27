// Copyright (c) edge-outbox authors.
//
// SIGKILL soak of the real binaries. outbox-pos-sim (a till committing sales
// while the agent delivers them on a thread) is started again and again on
// one store and SIGKILLed, each run in one of five phases (pos_sim_soak.h):
// starting (nothing printed yet), committing (between sales), between a
// commit and its printed line (the store's counter shows a sale no line
// acknowledged), delivering (every sale printed, not drained) and after
// "drained" (shutting down). The plans aimed at them take turns, those
// aimed at a phase without a kill first, and the phase each kill landed in
// is read back from the output and the store. One outbox-sink receives
// throughout, failing (503) and dropping (answer lost after processing)
// some requests. A last run drains everything and exits.
//
// Invariant, checked against the sink's log and the store reopened at the
// end (delivery_audit.cc; each part by named checks, in brackets, each
// proven by delivery_audit_test.cc):
//   1. Every acknowledged sale (its "sale" line was read; a torn last line
//      is not one) was answered 2xx by the sink, under the event id printed
//      for it.              [acknowledged_not_delivered,
//      acknowledged_id_not_sent]
//   2. One identity per sale: all requests for a sale carry one webhook-id,
//      and all requests with one id carry the same body. Resends, and the
//      duplicates among them, are allowed.
//                                       [sale_with_two_ids, id_with_two_bodies]
//   3. Nothing reached the sink that was not committed: every sale the sink
//      saw is a record in the store naming that event id. (A sale committed
//      but killed before its line was printed may be delivered.)
//                                           [not_committed,
//                                           committed_id_differs]
//   4. Sales are contiguous: the store's next-sale counter equals the final
//      --sales, every sale below it was answered 2xx, none above it was
//      sent, and the queue ends empty with no dead letters.
//          [counter_wrong, committed_not_delivered, beyond_counter,
//          not_drained]
//   5. Commit order per till: sale n is first sent only after sale n-1 was
//      answered 2xx, or behind it in the same batch.          [order_broken]
//   Also: each sale is acknowledged at most once and within the sales
//   [acknowledged_twice, acknowledged_out_of_range], every request is a sale
//   of the till [not_a_sale_event] and its signature valid [bad_signature].
// And of the soak itself: with 25 kills or more, every phase above got at
// least one. Counted: kills per plan and per phase (with the backlog of
// acknowledged, undelivered sales at the kill), sales committed,
// acknowledged and committed without a line, the sink's requests, 2xx
// answers, duplicates, resends, drops and failures, and violations.
//
// The batched test below runs it with batched requests;
// pos_sim_mqtt_kill_test.cc and pos_sim_kafka_kill_test.cc run the same
// soak and audit with the events going to an MQTT 5 broker and to Kafka.
// Environment: OUTBOX_KILL_SOAK_KILLS (default 50; the `soak`
// ctest entries set 500), OUTBOX_KILL_SOAK_SEED (default:
// random, printed; replays the kill plan, not the exact timing),
// OUTBOX_KILL_SOAK_DIR (run there and keep the store and logs for
// inspection).

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/kill/pos_sim_kill_fixture.h"
#include "tests/testing/sink_process.h"
#include "tests/testing/status.h"
#include "tests/testing/target_command.h"

namespace outbox::testing {
namespace {

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

// `destination_extra` goes inside the destination block.
std::string WriteAgentConfig(const std::string& dir, int port,
                             const std::string& secret_path,
                             const std::string& destination_extra = "") {
  const std::string path = dir + "/agent.textproto";
  // Short retry and probe delays so that a run delivers within its short
  // life; timeouts well above a loopback answer.
  std::ofstream(path) << "destinations {\n"
                      << "  name: \"sink\"\n"
                      << "  url: \"http://127.0.0.1:" << port << "/\"\n"
                      << "  secrets_file: \"" << secret_path << "\"\n"
                      << "  connect_timeout: \"2s\"\n"
                      << "  timeout: \"5s\"\n"
                      << destination_extra << "}\n"
                      << "routes { event_type: \"*\" destination: \"sink\" }\n"
                      << "retry { base_delay: \"20ms\" max_delay: \"200ms\" }\n"
                      << "agent { probe_interval_min: \"50ms\" "
                      << "probe_interval_max: \"300ms\" }\n";
  return path;
}

// The soak with webhooks to outbox-sink, which fails (503) and drops some
// requests.
class SinkKillTest : public PosSimKillTest {
 protected:
  // `destination_extra` goes in the agent's destination block.
  void SoakWithSink(const std::string& destination_extra, int default_kills) {
    const std::string secret_path = dir_ + "/secret";
    std::ofstream(secret_path) << kSecret << "\n";
    chmod(secret_path.c_str(), 0600);
    const std::string sink_log = dir_ + "/sink.log";
    auto sink = sink::SinkProcess::Start(
        TargetCommand(
            OUTBOX_SINK_BINARY,
            {"--secret-file", secret_path, "--log", sink_log, "--fail-rate",
             "0.1", "--drop-rate", "0.1", "--seed", absl::StrCat(seed_)}),
        dir_);
    ASSERT_OUTBOX_OK(sink);
    SoakAndAudit(WriteAgentConfig(dir_, (*sink)->port(), secret_path,
                                  destination_extra),
                 sink_log, default_kills, /*signed_requests=*/true);
    EXPECT_OUTBOX_OK((*sink)->Stop());
  }
};

TEST_F(SinkKillTest, AcknowledgedSalesAreDeliveredOnceInOrderUnderSigkill) {
  SoakWithSink("", /*default_kills=*/50);
}

// The same with batched requests: up to 8 sales in one request, signed once
// over the body; a 503 or a lost answer retries the batch as one, and the
// sink logs a line per sale, so the same audit judges each sale.
TEST_F(SinkKillTest,
       BatchedAcknowledgedSalesAreDeliveredOnceInOrderUnderSigkill) {
  SoakWithSink("  batch { max_events: 8 max_wait: \"20ms\" }\n",
               /*default_kills=*/50);
}

// The same with zstd-compressed batch bodies (Content-Encoding: zstd, the
// signature over the uncompressed body): the sink decodes each, so the
// same audit judges each sale.
TEST_F(SinkKillTest,
       CompressedBatchedAcknowledgedSalesAreDeliveredOnceInOrderUnderSigkill) {
  SoakWithSink(
      "  batch { max_events: 8 max_wait: \"20ms\" compression: \"zstd\" }\n",
      /*default_kills=*/25);
}

}  // namespace
}  // namespace outbox::testing
