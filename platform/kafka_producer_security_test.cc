// Copyright (c) edge-outbox authors.
//
// KafkaProducer's option checks, its idempotence, TLS and SASL: TLS against a
// cpp-httplib SSLServer with the test certificates (the handshake is all these
// tests need; the HTTP server then hangs up on the Kafka bytes), SASL against
// librdkafka's mock cluster, which supports no SASL at all (so a right
// password is shown reaching the client's configuration, not a broker).

#include <librdkafka/rdkafka.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "platform/kafka_client_setup.h"
#include "platform/kafka_producer.h"
#include "tests/testing/kafka_cluster.h"
#include "tests/testing/status.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/transport_test_util.h"

namespace outbox {
namespace {

using ::outbox::testing::DriveUntil;
using ::outbox::testing::MockKafkaCluster;
using ::outbox::testing::ServerThread;
using ::testing::HasSubstr;
using ::testing::Not;

KafkaMessage Event() {
  KafkaMessage m;
  m.tag = 1;
  m.topic = "sales";
  m.payload = "{}";
  return m;
}

// Produces one message and drives the producer until connection_status()
// is not OK, which it then returns (OK if that never happened).
absl::Status FirstClusterError(const KafkaOptions& options) {
  absl::StatusOr<std::unique_ptr<KafkaProducer>> producer =
      KafkaProducer::Create(options);
  EXPECT_TRUE(producer.ok()) << producer.status();
  if (!producer.ok()) return absl::OkStatus();
  EXPECT_OUTBOX_OK((*producer)->Produce(Event()));
  std::vector<KafkaResult> results;
  EXPECT_TRUE(DriveUntil(producer->get(), &results, [&] {
    return !(*producer)->connection_status().ok();
  }));
  return (*producer)->connection_status();
}

class KafkaProducerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OUTBOX_OK(outbox::testing::MakeTestCerts(dir_.path(), &certs_));
    options_.security = KafkaSecurity::kSsl;
  }
  // `other_host`: with the CA's certificate for other-host.invalid instead
  // of 127.0.0.1's.
  void StartServer(bool require_client_cert = false, bool other_host = false) {
    server_ = std::make_unique<httplib::SSLServer>(
        (other_host ? certs_.other_host_cert : certs_.server_cert).c_str(),
        (other_host ? certs_.other_host_key : certs_.server_key).c_str(),
        require_client_cert ? certs_.ca_cert.c_str() : nullptr);
    ASSERT_TRUE(server_->is_valid());
    // It waits this long for an HTTP request line before hanging up on
    // the Kafka bytes.
    server_->set_read_timeout(1, 0);
    thread_ = std::make_unique<ServerThread>(server_.get());
    options_.bootstrap_servers = absl::StrCat("127.0.0.1:", thread_->port());
  }

  outbox::testing::TempDir dir_;
  outbox::testing::TestCerts certs_;
  std::unique_ptr<httplib::SSLServer> server_;
  std::unique_ptr<ServerThread> thread_;  // stops before server_ dies
  KafkaOptions options_;
};

TEST_F(KafkaProducerTlsTest, UntrustedBrokerCertificateIsAFailedPrecondition) {
  StartServer();  // its CA is not in the system store
  const absl::Status status = FirstClusterError(options_);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_THAT(status.message(), HasSubstr("certificate verify failed"));
}

TEST_F(KafkaProducerTlsTest, TrustedCaPassesTheHandshake) {
  StartServer();
  options_.tls.ca_file = certs_.ca_cert;
  // Past TLS, the HTTP server hangs up on the Kafka request: unreachable,
  // not a TLS failure.
  const absl::Status status = FirstClusterError(options_);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
}

// The chain is good, the name is not 127.0.0.1's: refused as TLS, where a
// producer that did not check host names would get past the handshake.
TEST_F(KafkaProducerTlsTest, CertificateForAnotherHostIsAFailedPrecondition) {
  StartServer(/*require_client_cert=*/false, /*other_host=*/true);
  options_.tls.ca_file = certs_.ca_cert;
  const absl::Status status = FirstClusterError(options_);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
}

TEST_F(KafkaProducerTlsTest, ClientCertificateIsPresented) {
  StartServer(/*require_client_cert=*/true);
  options_.tls.ca_file = certs_.ca_cert;
  options_.tls.client_cert_file = certs_.client_cert;
  options_.tls.client_key_file = certs_.client_key;
  const absl::Status status = FirstClusterError(options_);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
}

TEST_F(KafkaProducerTlsTest, MissingClientCertificateIsAFailedPrecondition) {
  StartServer(/*require_client_cert=*/true);
  options_.tls.ca_file = certs_.ca_cert;
  // Under TLS 1.3 the server refuses it after the handshake: librdkafka
  // reports __TRANSPORT with OpenSSL's "alert certificate required".
  const absl::Status status = FirstClusterError(options_);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
}

TEST(KafkaProducerSaslTest, FailureIsAFailedPreconditionWithoutThePassword) {
  absl::StatusOr<std::unique_ptr<MockKafkaCluster>> cluster =
      MockKafkaCluster::Start();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  KafkaOptions options;
  options.bootstrap_servers = (*cluster)->bootstrap_servers();
  options.security = KafkaSecurity::kSaslPlaintext;
  options.username = "till-1";
  options.password = "s3cret-Pa55";
  const absl::Status status = FirstClusterError(options);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_THAT(status.message(), HasSubstr("_AUTHENTICATION"));
  EXPECT_THAT(status.message(), Not(HasSubstr("s3cret")));
}

// librdkafka's mock cluster has no SASL (its handlers lack SaslHandshake
// and SaslAuthenticate), so no test here can log in with the right password.
// What this code owns is handing the client the credentials: the
// configuration it builds carries the mechanism, user name and password as
// given (librdkafka puts them on the wire).
std::string ConfValue(rd_kafka_conf_t* conf, const char* name) {
  char value[256] = "";
  size_t size = sizeof(value);
  if (rd_kafka_conf_get(conf, name, value, &size) != RD_KAFKA_CONF_OK) {
    return "<unset>";
  }
  return value;
}

TEST(KafkaProducerSaslTest, TheCredentialsGoToTheClient) {
  KafkaOptions options;
  options.bootstrap_servers = "127.0.0.1:9";
  options.security = KafkaSecurity::kSaslPlaintext;
  options.sasl_mechanism = "SCRAM-SHA-256";
  options.username = "till-1";
  options.password = "s3cret-Pa55";
  absl::StatusOr<rd_kafka_conf_t*> conf = NewKafkaConf(options);
  ASSERT_OUTBOX_OK(conf);
  EXPECT_EQ(ConfValue(*conf, "security.protocol"), "sasl_plaintext");
  EXPECT_EQ(ConfValue(*conf, "sasl.mechanisms"), "SCRAM-SHA-256");
  EXPECT_EQ(ConfValue(*conf, "sasl.username"), "till-1");
  EXPECT_EQ(ConfValue(*conf, "sasl.password"), "s3cret-Pa55");
  rd_kafka_conf_destroy(*conf);
}

// Idempotence is what keeps librdkafka's own retries (a lost connection, an
// unanswered request) from writing a message twice or reordering a
// partition (docs/transports.md, "The producer itself guarantees"); the
// mock cluster never loses an answer after writing, so only the
// configuration can show it is on, with the acks=all it needs.
TEST(KafkaProducerConfTest, TheProducerIsIdempotent) {
  KafkaOptions options;
  options.bootstrap_servers = "127.0.0.1:9";
  absl::StatusOr<rd_kafka_conf_t*> conf = NewKafkaConf(options);
  ASSERT_OUTBOX_OK(conf);
  EXPECT_EQ(ConfValue(*conf, "enable.idempotence"), "true");
  EXPECT_EQ(ConfValue(*conf, "acks"), "-1");  // all
  rd_kafka_conf_destroy(*conf);
}

TEST(KafkaProducerCreateTest, RejectsBadOptions) {
  KafkaOptions options;
  EXPECT_STATUS_CODE(KafkaProducer::Create(options),
                     absl::StatusCode::kInvalidArgument);  // no servers
  options.bootstrap_servers = "127.0.0.1:1";
  KafkaOptions sasl = options;
  sasl.security = KafkaSecurity::kSaslSsl;
  EXPECT_STATUS_CODE(KafkaProducer::Create(sasl),
                     absl::StatusCode::kInvalidArgument);  // no credentials
  sasl.username = "u";
  sasl.password = "p";
  sasl.sasl_mechanism = "GSSAPI";
  EXPECT_STATUS_CODE(KafkaProducer::Create(sasl),
                     absl::StatusCode::kInvalidArgument);
  KafkaOptions tls = options;
  tls.security = KafkaSecurity::kSsl;
  tls.tls.client_key_file = "/tmp/key.pem";
  EXPECT_STATUS_CODE(KafkaProducer::Create(tls),
                     absl::StatusCode::kInvalidArgument);  // key, no cert
  KafkaOptions zero = options;
  zero.max_in_flight = 0;
  EXPECT_STATUS_CODE(KafkaProducer::Create(zero),
                     absl::StatusCode::kInvalidArgument);
}

TEST(KafkaProducerCreateTest, MissingCaFileIsAFailedPrecondition) {
  KafkaOptions options;
  options.bootstrap_servers = "127.0.0.1:1";
  options.security = KafkaSecurity::kSsl;
  options.tls.ca_file = "/nonexistent/ca.pem";
  const absl::StatusOr<std::unique_ptr<KafkaProducer>> p =
      KafkaProducer::Create(options);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition)
      << p.status();
}

}  // namespace
}  // namespace outbox
