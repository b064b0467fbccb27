// Copyright (c) edge-outbox authors.
//
// The story's receivers: MakeReceiver picks one by --transport, and this
// file holds the one of webhook and batch, outbox-sink with the faults of
// ReceiverFaults. Down is a port reserved before the tills start
// (ReservedPort: connecting is refused); up is the sink listening on it.
// With batch, each till's destination gets a batch {} block, so the sink
// gets NDJSON batches, answers (and faults) each batch once and logs one
// line per sale.

#include "tools/demo/receiver.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "platform/reserved_port.h"
#include "tools/demo/demo_files.h"
#include "tools/sink/sink_process.h"

namespace outbox::demo {
namespace {

std::string Percent(double rate) {
  return absl::StrFormat("%.0f%%", rate * 100);
}

// REQUIRES: External synchronization.
class SinkReceiver : public StoryReceiver {
 public:
  SinkReceiver(const DemoOptions& options, ReceiverSetup setup)
      : options_(options), setup_(std::move(setup)) {}
  ~SinkReceiver() override {
    if (sink_ != nullptr) sink_->Stop().IgnoreError();
  }

  absl::Status PrepareDown() override {
    config_.secret_path = setup_.dir + "/receiver.whsec";
    OUTBOX_RETURN_IF_ERROR(WriteSecretFile(config_.secret_path));
    OUTBOX_ASSIGN_OR_RETURN(port_, ReservedPort::Reserve());
    config_.port = port_->port();
    return absl::OkStatus();
  }

  std::string DestinationText(const std::string&) const override {
    const std::string batch =
        batched()
            ? absl::StrCat("  batch { max_events: ", options_.batch_max_events,
                           " max_wait: \"0s\" }\n")
            : "";
    return HttpDestinationText(config_, "receiver", "/sales", batch);
  }

  std::string DownText() const override {
    return absl::StrCat(
        "receiver down: the tills deliver to 127.0.0.1:", config_.port,
        ", where nothing listens yet",
        batched() ? absl::StrCat(", in batches of up to ",
                                 options_.batch_max_events, " sales (NDJSON)")
                  : "");
  }

  absl::Status BringUp() override {
    const ReceiverFaults& f = options_.faults;
    port_->Release();
    OUTBOX_ASSIGN_OR_RETURN(
        sink_,
        sink::SinkProcess::Start(
            {setup_.sink_binary, "--secret-file", config_.secret_path, "--log",
             setup_.log_path, "--fail-rate", absl::StrCat(f.fail_rate),
             "--throttle-rate", absl::StrCat(f.throttle_rate), "--retry-after",
             f.retry_after, "--drop-rate", absl::StrCat(f.drop_rate),
             "--delay-ms", absl::StrCat(f.delay_ms), "--seed",
             absl::StrCat(f.seed)},
            setup_.dir, absl::Seconds(30), config_.port));
    return absl::OkStatus();
  }

  std::string UpText() const override {
    const ReceiverFaults& f = options_.faults;
    return absl::StrCat(
        "receiver up: outbox-sink on 127.0.0.1:", config_.port, " answers ",
        Percent(f.fail_rate), " with 503, ", Percent(f.throttle_rate),
        " with 429 + Retry-After: ", f.retry_after, ", loses ",
        Percent(f.drop_rate), " of its answers",
        batched() ? " (each fault hits a whole batch: every sale in it is "
                    "retried, or resent)"
                  : "");
  }

  absl::Status Stop() override { return sink_->StopCleanly(); }
  bool InjectsAnswers() const override { return true; }
  bool Signed() const override { return true; }
  bool DrainsInMilliseconds() const override { return false; }

 private:
  bool batched() const { return options_.transport == Transport::kBatch; }

  const DemoOptions options_;
  const ReceiverSetup setup_;
  TillConfig config_;
  std::unique_ptr<ReservedPort> port_;
  std::unique_ptr<sink::SinkProcess> sink_;
};

}  // namespace

absl::Status TransportBuilt(Transport transport) {
  switch (transport) {
    case Transport::kMqtt:
      return MqttTransportBuilt();
    case Transport::kKafka:
      return KafkaTransportBuilt();
    case Transport::kWebhook:
    case Transport::kBatch:
      break;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<StoryReceiver>> MakeReceiver(
    const DemoOptions& options, const ReceiverSetup& setup) {
  switch (options.transport) {
    case Transport::kMqtt:
      return MakeMqttReceiver(options, setup);
    case Transport::kKafka:
      return MakeKafkaReceiver(options, setup);
    case Transport::kWebhook:
    case Transport::kBatch:
      break;
  }
  return std::unique_ptr<StoryReceiver>(new SinkReceiver(options, setup));
}

}  // namespace outbox::demo
