// Copyright (c) edge-outbox authors.

#ifndef OUTBOX_TESTS_TESTING_TEST_CERTS_H_
#define OUTBOX_TESTS_TESTING_TEST_CERTS_H_

#include <string>

#include "absl/status/status.h"

namespace outbox::testing {

// A CA and a server certificate for 127.0.0.1/localhost signed by it, a
// client certificate signed by the same CA, and a server certificate signed
// by the same CA for another host (other-host.invalid only), so that a
// client checking the chain but not the name would accept it (P-256 keys:
// instant to make), written into `dir` with the openssl CLI.
struct TestCerts {
  std::string ca_cert, server_cert, server_key, client_cert, client_key;
  std::string other_host_cert, other_host_key;
};
absl::Status MakeTestCerts(const std::string& dir, TestCerts* certs);

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_TESTING_TEST_CERTS_H_
