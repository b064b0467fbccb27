// Copyright (c) edge-outbox authors.

#include "tests/testing/test_certs.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace outbox::testing {

absl::Status MakeTestCerts(const std::string& dir, TestCerts* certs) {
  certs->ca_cert = dir + "/ca.pem";
  certs->server_cert = dir + "/server.pem";
  certs->server_key = dir + "/server.key";
  certs->client_cert = dir + "/client.pem";
  certs->client_key = dir + "/client.key";
  certs->other_host_cert = dir + "/other.pem";
  certs->other_host_key = dir + "/other.key";
  const std::string log = dir + "/openssl.log";
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1";
  std::ofstream(dir + "/server.ext")
      << "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
      << "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n";
  std::ofstream(dir + "/client.ext")
      << "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n";
  std::ofstream(dir + "/other.ext")
      << "subjectAltName=DNS:other-host.invalid\n"
      << "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n";
  std::string script =
      absl::StrCat("set -e; cd '", dir, "'; ", "openssl req -x509 ", ec,
                   " -nodes -keyout ca.key -out ca.pem -days 2",
                   " -subj '/CN=edge-outbox test CA'; ");
  for (const char* who : {"server", "client", "other"}) {
    const std::string cn =
        std::string(who) == "other" ? "other-host.invalid" : "localhost";
    absl::StrAppend(
        &script, "openssl req ", ec, " -nodes -keyout ", who, ".key -out ", who,
        ".csr -subj '/CN=", cn, "'; ", "openssl x509 -req -in ", who,
        ".csr -CA ca.pem -CAkey ca.key", " -CAcreateserial -days 2 -extfile ",
        who, ".ext -out ", who, ".pem; ");
  }
  const std::string command =
      absl::StrCat("sh -c \"", script, "\" >'", log, "' 2>&1");
  if (std::system(command.c_str()) != 0) {
    std::stringstream output;
    output << std::ifstream(log).rdbuf();
    return absl::InternalError(absl::StrCat(
        "openssl failed making test certificates: ", output.str()));
  }
  return absl::OkStatus();
}

}  // namespace outbox::testing
