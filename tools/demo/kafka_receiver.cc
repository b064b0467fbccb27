// Copyright (c) edge-outbox authors.
//
// The receiver of --transport kafka: librdkafka's mock cluster in this
// process (tools/recorder/mock_kafka_cluster.h: a broker on a loopback
// port that speaks the Kafka protocol) holding the topic pos.sale.created,
// and a consumer that logs every record of it in outbox-sink's format
// (tools/recorder/kafka_recorder.h). Down: the broker is set down before
// the tills start (its port bound, not listening: refused). Up: set up
// again, and the recorder reads the topic from its beginning, so nothing
// the tills produced can pass it by. The broker goes down once, before
// anyone connected: the mock cluster aborts the process if another socket
// takes its port while it is down (tests/kill/pos_sim_kafka_kill_test.cc),
// and one short outage leaves that the least room.

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "tools/demo/receiver.h"
#include "tools/recorder/kafka_recorder.h"
#include "tools/recorder/mock_kafka_cluster.h"

namespace outbox::demo {
namespace {

constexpr char kTopic[] = "pos.sale.created";
// Each till's sales share one key (the till), so one partition holds them.
constexpr int kPartitions = 3;
// A cluster a LAN away rather than on loopback.
constexpr absl::Duration kRoundTrip = absl::Milliseconds(2);

// REQUIRES: External synchronization.
class KafkaReceiver : public StoryReceiver {
 public:
  explicit KafkaReceiver(ReceiverSetup setup) : setup_(std::move(setup)) {}
  ~KafkaReceiver() override {
    recorder_.reset();  // before the cluster it reads
  }

  absl::Status PrepareDown() override {
    OUTBOX_ASSIGN_OR_RETURN(cluster_, recorder::MockKafkaCluster::Start());
    OUTBOX_RETURN_IF_ERROR(cluster_->CreateTopic(kTopic, kPartitions));
    // Answered at once, a till drained its backlog in one scheduling slice
    // of a loaded machine, and the SIGKILL meant for its drain came after
    // it (about one run in three with the CPUs busy).
    OUTBOX_RETURN_IF_ERROR(cluster_->SetRoundTrip(kRoundTrip));
    cluster_->SetBrokersDown();
    return absl::OkStatus();
  }

  std::string DestinationText(const std::string&) const override {
    return absl::StrCat(
        "destinations {\n  name: \"receiver\"\n  kafka {\n",
        "    bootstrap_servers: \"", cluster_->bootstrap_servers(), "\"\n",
        "    topic: \"pos.{type}\"\n    message_timeout: \"5s\"\n  }\n}\n");
  }

  std::string DownText() const override {
    return absl::StrCat(
        "Kafka down: the tills produce to ", cluster_->bootstrap_servers(),
        " (librdkafka's mock cluster, in this process, answering after a ",
        absl::FormatDuration(kRoundTrip), " round trip), whose broker is ",
        "down; topic ", kTopic, ", ", kPartitions, " partitions");
  }

  absl::Status BringUp() override {
    cluster_->SetBrokersUp();
    OUTBOX_ASSIGN_OR_RETURN(
        recorder_,
        recorder::KafkaRecorder::Start(cluster_->bootstrap_servers(), kTopic,
                                       kPartitions, setup_.log_path));
    return absl::OkStatus();
  }

  std::string UpText() const override {
    return absl::StrCat(
        "Kafka up: the mock broker on ", cluster_->bootstrap_servers(),
        " accepts again; the recorder logs each record of ", kTopic,
        ". Kafka carries no signature and this broker refuses nothing: ",
        "this run's faults are the broker's downtime and the SIGKILL of a ",
        "till mid-drain");
  }

  absl::Status Stop() override {
    const absl::Status logged = recorder_->status();
    recorder_.reset();
    return logged;
  }

  bool InjectsAnswers() const override { return false; }
  bool Signed() const override { return false; }
  bool DrainsInMilliseconds() const override { return true; }

 private:
  const ReceiverSetup setup_;
  std::unique_ptr<recorder::MockKafkaCluster> cluster_;
  std::unique_ptr<recorder::KafkaRecorder> recorder_;
};

}  // namespace

absl::Status KafkaTransportBuilt() { return absl::OkStatus(); }

absl::StatusOr<std::unique_ptr<StoryReceiver>> MakeKafkaReceiver(
    const DemoOptions&, const ReceiverSetup& setup) {
  return std::unique_ptr<StoryReceiver>(new KafkaReceiver(setup));
}

}  // namespace outbox::demo
