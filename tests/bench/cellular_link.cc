// Copyright (c) edge-outbox authors.

#include "tests/bench/cellular_link.h"

#include <unistd.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "tests/testing/network_namespace.h"
#include "tests/testing/sink_process.h"

namespace outbox::bench {
namespace {

// The path of an iproute2 program (no PATH search in ChildProcess), or "".
std::string FindProgram(const std::string& name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"}) {
    const std::string path = absl::StrCat(dir, name);
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// The figure after `word` in `text` ("Sent 1234 bytes": after "Sent").
bool FigureAfter(absl::string_view text, absl::string_view word,
                 uint64_t* value) {
  std::vector<absl::string_view> words =
      absl::StrSplit(text, absl::ByAnyChar(" ,()\t\n"), absl::SkipEmpty());
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == word) return absl::SimpleAtoi(words[i + 1], value);
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CellularLink>> CellularLink::Enter(
    int64_t bits_per_second, const std::string& dir) {
  const std::string tc = FindProgram("tc"), ip = FindProgram("ip");
  if (tc.empty() || ip.empty()) {
    return absl::NotFoundError(
        "the cellular link needs tc and ip (Debian: apt-get install "
        "iproute2)");
  }
  std::filesystem::create_directories(dir);  // for tc's output files
  OUTBOX_RETURN_IF_ERROR(testing::EnterPrivateNetworkNamespace());
  OUTBOX_RETURN_IF_ERROR(testing::BringLoopbackUp());
  std::unique_ptr<CellularLink> link(
      new CellularLink(bits_per_second, dir, tc, ip));
  OUTBOX_RETURN_IF_ERROR(link->Run(ip, "link set dev lo mtu 1500").status());
  return link;
}

absl::StatusOr<std::string> CellularLink::Run(const std::string& program,
                                              const std::string& args) const {
  OUTBOX_ASSIGN_OR_RETURN(
      sink::ExitResult r,
      sink::RunToExit(program, dir_,
                      absl::StrSplit(args, ' ', absl::SkipEmpty())));
  if (r.exit_code != 0) {
    return absl::UnavailableError(absl::StrCat(
        program, " ", args, " exited with ", r.exit_code, ": ", r.err));
  }
  return r.out;
}

absl::Status CellularLink::Shape(int port) {
  // Deleting a root qdisc that is not there fails; that is fine.
  Run(tc_, "qdisc del dev lo root").IgnoreError();
  // A queue of 1 MB: a cellular modem buffers deeply, and a drop here
  // would cost loopback TCP a retransmission timeout no real link has.
  const std::string tbf =
      absl::StrCat("tbf rate ", bits_per_second_, "bit burst 4kb limit 1mb");
  for (const std::string& command : {
           // This kernel has no prio qdisc: htb classes, unlimited, sort
           // the packets, and the token buckets below them shape.
           std::string("qdisc add dev lo root handle 1: htb default 30"),
           std::string(
               "class add dev lo parent 1: classid 1:10 htb rate 10gbit"),
           std::string(
               "class add dev lo parent 1: classid 1:20 htb rate 10gbit"),
           std::string(
               "class add dev lo parent 1: classid 1:30 htb rate 10gbit"),
           absl::StrCat("qdisc add dev lo parent 1:10 handle 10: ", tbf),
           absl::StrCat("qdisc add dev lo parent 1:20 handle 20: ", tbf),
           absl::StrCat("filter add dev lo parent 1: protocol ip prio 1 u32 "
                        "match ip dport ",
                        port, " 0xffff flowid 1:10"),
           absl::StrCat("filter add dev lo parent 1: protocol ip prio 2 u32 "
                        "match ip sport ",
                        port, " 0xffff flowid 1:20"),
       }) {
    OUTBOX_RETURN_IF_ERROR(Run(tc_, command).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<ShapedBytes> CellularLink::Counted(
    const std::string& handle) const {
  OUTBOX_ASSIGN_OR_RETURN(const std::string out,
                          Run(tc_, "-s qdisc show dev lo"));
  // "qdisc tbf 10: parent 1:1 rate ...\n Sent 1234 bytes 5 pkt (dropped 0,
  // overlimits 7 requeues 0)\n ..."
  const std::string head = absl::StrCat("qdisc tbf ", handle, " ");
  const size_t at = out.find(head);
  ShapedBytes counted;
  if (at == std::string::npos) {
    return absl::InternalError(absl::StrCat("no ", head, "in tc's output"));
  }
  const absl::string_view rest = absl::string_view(out).substr(at);
  const size_t next = rest.find("qdisc ", head.size());
  const absl::string_view stats = rest.substr(0, next);
  if (!FigureAfter(stats, "Sent", &counted.bytes) ||
      !FigureAfter(stats, "dropped", &counted.dropped)) {
    return absl::InternalError(
        absl::StrCat("cannot read tc's statistics: ", stats));
  }
  return counted;
}

}  // namespace outbox::bench
