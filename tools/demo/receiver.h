// Copyright (c) edge-outbox authors.
//
// The story's receiver, one kind per --transport: what the tills' agents
// deliver to. It is down while they commit and comes up for their drain,
// and whatever it receives ends up in one log in outbox-sink's request-log
// format (tools/sink/request_log.h), which the story reads as the tills
// drain (receiver_log.h) and audits at the end. outbox-sink writes that log
// itself (webhook, batch); for a broker, a recorder subscribed to it does
// (tools/recorder/).

#ifndef OUTBOX_TOOLS_DEMO_RECEIVER_H_
#define OUTBOX_TOOLS_DEMO_RECEIVER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/demo/demo_options.h"

namespace outbox::demo {

// REQUIRES: External synchronization.
class StoryReceiver {
 public:
  // Stops whatever it still runs.
  virtual ~StoryReceiver() = default;

  // Sets it up, down: a till's agent finds nothing to deliver to until
  // BringUp(). Errors: kFailedPrecondition when something it needs is not
  // installed (the message says how to install it); others from making
  // files or starting processes.
  virtual absl::Status PrepareDown() = 0;
  // The `destinations { name: "receiver" ... }` block of till `till`'s
  // agent configuration. REQUIRES: PrepareDown() succeeded.
  virtual std::string DestinationText(const std::string& till) const = 0;
  // What the story tells after PrepareDown(): where the tills deliver.
  virtual std::string DownText() const = 0;

  // Brings it up where the tills deliver. Errors: as PrepareDown().
  virtual absl::Status BringUp() = 0;
  // What the story tells after BringUp(): what it does, and the faults of
  // this run.
  virtual std::string UpText() const = 0;

  // Stops it once everything it received is in the log. Errors: a receiver
  // that did not stop cleanly, or could not log (kUnavailable).
  virtual absl::Status Stop() = 0;

  // The receiver answers some requests 503 and some 429, which the story
  // then checks it saw (a broker does neither).
  virtual bool InjectsAnswers() const = 0;
  // Every delivery carries a signature to verify (MQTT and Kafka carry
  // none, so the audit does not ask for one).
  virtual bool Signed() const = 0;
  // A till drains its backlog to it in milliseconds, faster than the story
  // watches (a broker on loopback acknowledges at once; outbox-sink delays
  // each answer), so the story holds the till it kills (Story::
  // KillHeldTillInItsDrain).
  virtual bool DrainsInMilliseconds() const = 0;
};

// Where a receiver keeps its files and which binaries it runs.
struct ReceiverSetup {
  std::string dir;         // the demo's directory
  std::string log_path;    // the request log it writes
  std::string sink_binary;  // outbox-sink
};

// The receiver of options.transport. Errors: TransportBuilt's.
absl::StatusOr<std::unique_ptr<StoryReceiver>> MakeReceiver(
    const DemoOptions& options, const ReceiverSetup& setup);

// One pair per optional transport, from the file CMake picks: the real one
// (mqtt_receiver.cc) or one that says how to build it in
// (mqtt_receiver_none.cc: kFailedPrecondition from both).
absl::Status MqttTransportBuilt();
absl::StatusOr<std::unique_ptr<StoryReceiver>> MakeMqttReceiver(
    const DemoOptions& options, const ReceiverSetup& setup);
absl::Status KafkaTransportBuilt();
absl::StatusOr<std::unique_ptr<StoryReceiver>> MakeKafkaReceiver(
    const DemoOptions& options, const ReceiverSetup& setup);

}  // namespace outbox::demo

#endif  // OUTBOX_TOOLS_DEMO_RECEIVER_H_
