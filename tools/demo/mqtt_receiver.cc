// Copyright (c) edge-outbox authors.
//
// The receiver of --transport mqtt: the real mosquitto broker (persistence
// on) and a recorder subscribed to pos/# under a persistent session
// (tools/recorder/), which logs every message it gets in outbox-sink's
// format. Down: the broker was started, the recorder subscribed, and the
// broker stopped, keeping that session; the tills' agents find nothing on
// its port. Up: the broker restarts on the same port with the session, so
// whatever the tills publish before the recorder is back is queued for it,
// not dropped for want of a subscriber.

#include <filesystem>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tools/demo/receiver.h"
#include "tools/recorder/mosquitto_broker.h"
#include "tools/recorder/mqtt_recorder.h"

namespace outbox::demo {
namespace {

constexpr char kRecorderId[] = "outbox-demo-recorder";
constexpr char kFilter[] = "pos/#";

// REQUIRES: External synchronization.
class MqttReceiver : public StoryReceiver {
 public:
  explicit MqttReceiver(ReceiverSetup setup) : setup_(std::move(setup)) {}
  ~MqttReceiver() override {
    recorder_.reset();  // before the broker it is connected to
    if (broker_ != nullptr) broker_->Stop().IgnoreError();
  }

  absl::Status PrepareDown() override {
    const std::string dir = setup_.dir + "/broker";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("cannot create ", dir, ": ", ec.message()));
    }
    recorder::BrokerConfig config;
    config.persistence = true;
    OUTBOX_ASSIGN_OR_RETURN(broker_,
                            recorder::MosquittoBroker::Start(dir, config));
    // Only to leave the subscription in the broker's store: nothing is
    // published yet, so this one logs nothing.
    OUTBOX_ASSIGN_OR_RETURN(auto subscriber,
                            recorder::MqttRecorder::Start(Options("")));
    subscriber.reset();
    return broker_->Stop();  // SIGTERM: it saves the session first
  }

  std::string DestinationText(const std::string& till) const override {
    return absl::StrCat("destinations {\n  name: \"receiver\"\n  mqtt {\n",
                        "    broker: \"mqtt://127.0.0.1:", broker_->port(),
                        "\"\n", "    client_id: \"", till, "\"\n",
                        "    topic: \"pos/{device}/{type}\"\n  }\n",
                        "  connect_timeout: \"2s\"\n}\n");
  }

  std::string DownText() const override {
    return absl::StrCat(
        "broker down: the tills publish to mqtt://127.0.0.1:", broker_->port(),
        ", where mosquitto (persistence on) is stopped; it keeps the ",
        "recorder's persistent session on ", kFilter);
  }

  absl::Status BringUp() override {
    OUTBOX_RETURN_IF_ERROR(broker_->Restart());
    OUTBOX_ASSIGN_OR_RETURN(
        recorder_, recorder::MqttRecorder::Start(Options(setup_.log_path)));
    return absl::OkStatus();
  }

  std::string UpText() const override {
    return absl::StrCat(
        "broker up: mosquitto on 127.0.0.1:", broker_->port(),
        ", QoS 1; the recorder logs each message it gets. MQTT carries no ",
        "signature and a broker answers no 503 or 429: this run's faults ",
        "are the broker's downtime and the SIGKILL of a till mid-drain");
  }

  absl::Status Stop() override {
    const absl::Status logged = recorder_->status();
    recorder_.reset();
    OUTBOX_RETURN_IF_ERROR(broker_->Stop());
    return logged;
  }

  bool InjectsAnswers() const override { return false; }
  bool Signed() const override { return false; }
  bool DrainsInMilliseconds() const override { return true; }

 private:
  recorder::MqttRecorderOptions Options(const std::string& log_path) const {
    recorder::MqttRecorderOptions o;
    o.port = broker_->plain_port();
    o.filter = kFilter;
    o.client_id = kRecorderId;
    o.log_path = log_path;
    return o;
  }

  const ReceiverSetup setup_;
  std::unique_ptr<recorder::MosquittoBroker> broker_;
  std::unique_ptr<recorder::MqttRecorder> recorder_;
};

}  // namespace

absl::Status MqttTransportBuilt() { return absl::OkStatus(); }

absl::StatusOr<std::unique_ptr<StoryReceiver>> MakeMqttReceiver(
    const DemoOptions&, const ReceiverSetup& setup) {
  return std::unique_ptr<StoryReceiver>(new MqttReceiver(setup));
}

}  // namespace outbox::demo
