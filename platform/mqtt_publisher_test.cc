// Copyright (c) edge-outbox authors.
//
// MqttPublisher against the real mosquitto broker on a free loopback port,
// with a subscriber recording what reaches it (tools/recorder/).

#include "platform/mqtt_publisher.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/mqtt_drive.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_certs.h"

namespace outbox {
namespace {

using ::outbox::recorder::BrokerConfig;
using ::outbox::recorder::MosquittoBroker;
using ::outbox::recorder::MqttRecorder;
using ::outbox::recorder::ReceivedMessage;
using ::outbox::testing::DriveUntil;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

MqttMessage Event(uint64_t tag,
                  const std::string& topic = "fleet/till-1/sale") {
  MqttMessage m;
  m.tag = tag;
  m.topic = topic;
  m.payload = absl::StrCat("{\"n\":", tag, "}");
  m.content_type = "application/json";
  m.event_id = absl::StrCat("id-", tag);
  m.event_type = "sale.created";
  m.ordering_key = "till-1";
  return m;
}

class MqttPublisherTest : public ::testing::Test {
 protected:
  MqttPublisherTest() { options_.client_id = "till-1"; }

  void StartBroker(const BrokerConfig& config = BrokerConfig()) {
    absl::StatusOr<std::unique_ptr<MosquittoBroker>> broker =
        MosquittoBroker::Start(dir_.path(), config);
    ASSERT_TRUE(broker.ok()) << broker.status();
    broker_ = std::move(*broker);
    options_.port = broker_->port();
  }
  void StartRecorder(const std::string& user = "",
                     const std::string& password = "") {
    recorder::MqttRecorderOptions options;
    options.port = broker_->plain_port();
    options.filter = "fleet/#";
    options.user = user;
    options.password = password;
    absl::StatusOr<std::unique_ptr<MqttRecorder>> recorder =
        MqttRecorder::Start(options);
    ASSERT_TRUE(recorder.ok()) << recorder.status();
    recorder_ = std::move(*recorder);
  }
  // Connects and drives until the CONNACK (or the failure) is in.
  void Connect() {
    if (publisher_ == nullptr) {
      absl::StatusOr<std::unique_ptr<MqttPublisher>> p =
          MqttPublisher::Create(options_);
      ASSERT_TRUE(p.ok()) << p.status();
      publisher_ = std::move(*p);
    }
    if (!publisher_->Connect().ok()) return;  // connection_status() says why
    ASSERT_TRUE(Drive([&] {
      return publisher_->state() != MqttPublisher::State::kConnecting;
    }));
  }
  bool Drive(const std::function<bool()>& done) {
    return DriveUntil(publisher_.get(), &results_, done);
  }
  bool DriveUntilResults(size_t n) {
    return Drive([&] { return results_.size() >= n; });
  }
  // Connects with options_, publishes event 1 and expects its PUBACK.
  void ConnectAndPublishOne() {
    Connect();
    ASSERT_EQ(publisher_->state(), MqttPublisher::State::kConnected)
        << publisher_->connection_status();
    ASSERT_TRUE(publisher_->Publish(Event(1)).ok());
    ASSERT_TRUE(DriveUntilResults(1));
    EXPECT_TRUE(results_[0].status.ok()) << results_[0].status;
  }

  testing::TempDir dir_;
  MqttOptions options_;
  std::unique_ptr<MosquittoBroker> broker_;
  std::unique_ptr<MqttRecorder> recorder_;
  std::unique_ptr<MqttPublisher> publisher_;
  std::vector<MqttResult> results_;
};

TEST_F(MqttPublisherTest, PublishArrivesWithItsPropertiesAtQos1) {
  StartBroker();
  StartRecorder();
  Connect();
  ASSERT_EQ(publisher_->state(), MqttPublisher::State::kConnected)
      << publisher_->connection_status();
  ASSERT_TRUE(publisher_->Publish(Event(7)).ok());
  ASSERT_TRUE(recorder_->WaitFor(1, absl::Seconds(20)));
  const ReceivedMessage got = recorder_->Received()[0];
  EXPECT_EQ(got.topic, "fleet/till-1/sale");
  EXPECT_EQ(got.payload, "{\"n\":7}");
  EXPECT_EQ(got.qos, 1);
  EXPECT_EQ(got.content_type, "application/json");
  EXPECT_THAT(got.user_properties,
              UnorderedElementsAre(Pair("event-id", "id-7"),
                                   Pair("event-type", "sale.created"),
                                   Pair("ordering-key", "till-1")));
}

TEST_F(MqttPublisherTest, EachPubackIsReportedByItsTag) {
  StartBroker();
  Connect();
  for (uint64_t tag = 100; tag < 120; ++tag) {
    ASSERT_TRUE(publisher_->Publish(Event(tag)).ok());
  }
  ASSERT_TRUE(DriveUntilResults(20));
  std::vector<uint64_t> tags;
  for (const MqttResult& r : results_) {
    EXPECT_TRUE(r.status.ok()) << r.status;
    EXPECT_NE(r.reason_code, -1);  // a PUBACK came
    tags.push_back(r.tag);
  }
  std::sort(tags.begin(), tags.end());
  std::vector<uint64_t> expected;
  for (uint64_t tag = 100; tag < 120; ++tag) expected.push_back(tag);
  EXPECT_EQ(tags, expected);
  EXPECT_EQ(publisher_->InFlight(), 0u);
}

TEST_F(MqttPublisherTest, MessagesArriveInPublishOrder) {
  StartBroker();
  StartRecorder();
  Connect();
  for (uint64_t tag = 0; tag < 50; ++tag) {
    ASSERT_TRUE(publisher_->Publish(Event(tag)).ok());
  }
  ASSERT_TRUE(DriveUntilResults(50));
  ASSERT_TRUE(recorder_->WaitFor(50, absl::Seconds(20)));
  std::vector<ReceivedMessage> got = recorder_->Received();
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].payload, Event(i).payload) << i;
  }
}

TEST_F(MqttPublisherTest, NoMatchingSubscribersCountsAsDelivered) {
  StartBroker();
  Connect();
  ASSERT_TRUE(publisher_->Publish(Event(1, "nobody/listens")).ok());
  ASSERT_TRUE(DriveUntilResults(1));
  EXPECT_TRUE(results_[0].status.ok()) << results_[0].status;
  EXPECT_EQ(results_[0].reason_code, 0x10);
}

TEST_F(MqttPublisherTest, NotAuthorizedPubackIsRejectedForGood) {
  BrokerConfig config;
  config.acl = "topic readwrite fleet/#";
  StartBroker(config);
  Connect();
  ASSERT_TRUE(publisher_->Publish(Event(1, "forbidden/topic")).ok());
  ASSERT_TRUE(DriveUntilResults(1));
  EXPECT_EQ(results_[0].reason_code, 0x87);
  EXPECT_EQ(results_[0].status.code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(MqttPublisherTest, BrokerDownAtConnectIsUnavailable) {
  StartBroker();
  broker_->Kill();
  Connect();
  EXPECT_EQ(publisher_->state(), MqttPublisher::State::kDisconnected);
  EXPECT_EQ(publisher_->connection_status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(publisher_->Publish(Event(1)).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_TRUE(results_.empty());
}

TEST_F(MqttPublisherTest, BrokerKilledBeforePubackFailsThePublishes) {
  StartBroker();
  Connect();
  ASSERT_TRUE(broker_->Pause().ok());  // it cannot acknowledge anything
  for (uint64_t tag = 1; tag <= 5; ++tag) {
    ASSERT_TRUE(publisher_->Publish(Event(tag)).ok());
  }
  broker_->Kill();
  ASSERT_TRUE(DriveUntilResults(5));
  for (const MqttResult& r : results_) {
    EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
    EXPECT_EQ(r.reason_code, -1);
  }
  EXPECT_EQ(publisher_->state(), MqttPublisher::State::kDisconnected);
  EXPECT_EQ(publisher_->connection_status().code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(MqttPublisherTest, AfterARestartResentEventsArriveWithTheSameIds) {
  StartBroker();
  Connect();
  ASSERT_TRUE(broker_->Pause().ok());
  for (uint64_t tag = 1; tag <= 3; ++tag) {
    ASSERT_TRUE(publisher_->Publish(Event(tag)).ok());
  }
  broker_->Kill();
  ASSERT_TRUE(DriveUntilResults(3));
  ASSERT_TRUE(broker_->Restart().ok()) << broker_->Stderr();
  StartRecorder();
  Connect();
  ASSERT_EQ(publisher_->state(), MqttPublisher::State::kConnected)
      << publisher_->connection_status();
  for (const MqttResult& failed : std::vector<MqttResult>(results_)) {
    ASSERT_TRUE(publisher_->Publish(Event(failed.tag)).ok());
  }
  ASSERT_TRUE(DriveUntilResults(6));
  ASSERT_TRUE(recorder_->WaitFor(3, absl::Seconds(20)));
  std::vector<std::string> ids;
  for (const ReceivedMessage& got : recorder_->Received()) {
    for (const auto& [name, value] : got.user_properties) {
      if (name == "event-id") ids.push_back(value);
    }
  }
  EXPECT_THAT(ids, UnorderedElementsAre("id-1", "id-2", "id-3"));
}

TEST_F(MqttPublisherTest, WrongPasswordIsAClearRefusal) {
  BrokerConfig config;
  config.user = "till";
  config.password = "right-secret";
  StartBroker(config);
  options_.username = "till";
  options_.password = "wrong-secret";
  Connect();
  EXPECT_EQ(publisher_->state(), MqttPublisher::State::kDisconnected);
  const absl::Status status = publisher_->connection_status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("username and password"));
  EXPECT_THAT(status.message(), Not(HasSubstr("secret")));
}

// The wrong password is refused whether or not it is sent at all; this is
// the test that the right one is sent: the broker admits no anonymous
// client once it has a password file.
TEST_F(MqttPublisherTest, RightPasswordConnectsAndPublishes) {
  BrokerConfig config;
  config.user = "till";
  config.password = "right-secret";
  StartBroker(config);
  StartRecorder("till", "right-secret");
  options_.username = "till";
  options_.password = "right-secret";
  ASSERT_NO_FATAL_FAILURE(ConnectAndPublishOne());
  ASSERT_TRUE(recorder_->WaitFor(1, absl::Seconds(20)));
  EXPECT_EQ(recorder_->Received()[0].payload, "{\"n\":1}");
}

TEST_F(MqttPublisherTest, SessionPersistsAcrossReconnects) {
  StartBroker();
  Connect();
  ASSERT_EQ(publisher_->state(), MqttPublisher::State::kConnected);
  EXPECT_FALSE(publisher_->session_present());
  publisher_->Disconnect(&results_);
  Connect();
  ASSERT_EQ(publisher_->state(), MqttPublisher::State::kConnected)
      << publisher_->connection_status();
  EXPECT_TRUE(publisher_->session_present());
}

class MqttPublisherTlsTest : public MqttPublisherTest {
 protected:
  void SetUp() override { StartTlsBroker(/*other_host=*/false); }
  // A broker with the CA's certificate for 127.0.0.1, or for another host.
  void StartTlsBroker(bool other_host) {
    ASSERT_TRUE(testing::MakeTestCerts(dir_.path(), &certs_).ok());
    BrokerConfig config;
    config.ca_file = certs_.ca_cert;
    config.cert_file = other_host ? certs_.other_host_cert : certs_.server_cert;
    config.key_file = other_host ? certs_.other_host_key : certs_.server_key;
    StartBroker(config);
    options_.use_tls = true;
    options_.tls.client_cert_file = certs_.client_cert;
    options_.tls.client_key_file = certs_.client_key;
  }
  testing::TestCerts certs_;
};

TEST_F(MqttPublisherTlsTest, ClientCertificateConnectsAndPublishes) {
  options_.tls.ca_file = certs_.ca_cert;
  ASSERT_NO_FATAL_FAILURE(ConnectAndPublishOne());
}

TEST_F(MqttPublisherTlsTest, WrongCaIsAClearTlsError) {
  testing::TempDir other;
  testing::TestCerts other_certs;
  ASSERT_TRUE(testing::MakeTestCerts(other.path(), &other_certs).ok());
  options_.tls.ca_file = other_certs.ca_cert;
  Connect();
  EXPECT_EQ(publisher_->state(), MqttPublisher::State::kDisconnected);
  const absl::Status status = publisher_->connection_status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_THAT(status.message(), HasSubstr("CA file"));
}

// A certificate the CA signed for another host: the chain is good, the
// name is not 127.0.0.1's, so a client that checks host names refuses it
// (as HTTP's CurlTransport does).
class MqttPublisherOtherHostTest : public MqttPublisherTlsTest {
 protected:
  void SetUp() override { StartTlsBroker(/*other_host=*/true); }
};

TEST_F(MqttPublisherOtherHostTest, CertificateForAnotherHostIsAClearTlsError) {
  options_.tls.ca_file = certs_.ca_cert;
  Connect();
  EXPECT_EQ(publisher_->state(), MqttPublisher::State::kDisconnected);
  const absl::Status status = publisher_->connection_status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
}

}  // namespace
}  // namespace outbox
