// Copyright (c) edge-outbox authors.
//
// The power-cut soak's driver: cycles of {open the store over the
// fault-injecting file system with an agent delivering to a Receiver; commit,
// deliver, replay and purge at random; cut the power at a named crash point,
// at a file operation, during reopen, or not at all; reopen; check the
// SoakModel}. See power_cut_soak_test.cc for the invariant.

#ifndef OUTBOX_TESTS_CRASH_POWER_CUT_SOAK_H_
#define OUTBOX_TESTS_CRASH_POWER_CUT_SOAK_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "agent/agent_variant.h"
#include "lib/store_impl.h"
#include "outbox/agent.h"
#include "outbox/clock.h"
#include "tests/crash/soak_report.h"
#include "tests/fault_fs/fault_injection_fs.h"
#include "tests/testing/recording_transport.h"

namespace outbox::testing {

struct SoakOptions {
  // Cycles to run; the soak stops early after the first cycle whose check
  // found a violation. Default: 2000.
  int cycles = 2000;
  // For the broken variants' runs: stop only once a violation of this kind
  // fired, collecting the others on the way (a variant's damage may show
  // under another check first, in a cycle where its own check saw nothing
  // to judge). Unset (the default): stop at the first violation.
  std::optional<ViolationKind> until;
  // Seeds the workload, the receiver's answers and the cut plans. Where a
  // cut at a file operation lands also depends on when RocksDB's background
  // compactions run, and a cut in a burst on how its committer threads
  // interleave, so a replayed seed may part ways with the original run
  // after its first such cut. Default: 1.
  uint64_t seed = 1;
  // The store and the agent under test; their broken variants prove the
  // soak can fail.
  StoreTestOptions store_test;
  AgentTestOptions agent_test;
  // Settled (delivered) transactions re-read per cycle, round robin; the
  // last cycle re-reads all of them. Default: 16.
  size_t rolling_checks = 16;
  // Prints a progress line to stdout every this many cycles (0: never), so
  // a long soak shows it is alive. Default: 0.
  int progress_every = 0;
};

// Options for the agent of a device whose power is `fs`: its requests reach
// `receiver` only while `fs` is alive (a dead one lost its power), on
// `clock`, network changes not watched. All borrowed; they must outlive the
// agent.
AgentOptions PoweredAgentOptions(std::string config_text, Receiver* receiver,
                                 FaultInjectionFileSystem* fs, Clock* clock);

// Runs the soak in a fresh temporary directory. Installs the process-wide
// crash hook (lib/crash_points.h) for its duration.
// REQUIRES: no other soak or crash hook in the process at the same time.
SoakReport RunPowerCutSoak(const SoakOptions& options);

}  // namespace outbox::testing

#endif  // OUTBOX_TESTS_CRASH_POWER_CUT_SOAK_H_
