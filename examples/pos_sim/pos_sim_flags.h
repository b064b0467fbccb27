// Copyright (c) edge-outbox authors.
//
// outbox-pos-sim's command line (PosSimUsage() is its --help).

#ifndef OUTBOX_EXAMPLES_POS_SIM_POS_SIM_FLAGS_H_
#define OUTBOX_EXAMPLES_POS_SIM_POS_SIM_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "examples/pos_sim/pos_sim_sale.h"

namespace outbox::pos_sim {

// Plain data.
struct PosSimFlags {
  std::string db;
  std::string config;
  std::string till = "till-1";
  int64_t sales = -1;
  double rate = 50;
  // --fsync: false only for the broken store of tests/vm (see --help).
  bool fsync = true;
  // --print-after: a pause between each commit and its "sale" line, for
  // the kill soak (see --help).
  absl::Duration print_after = absl::ZeroDuration();
  SaleMix mix;
  bool help = false;
};

// Parses argv[1..]. Errors: kInvalidArgument naming the flag (a missing
// --db, --config or --sales included, unless --help).
absl::StatusOr<PosSimFlags> ParsePosSimFlags(
    const std::vector<std::string>& args);

std::string PosSimUsage();

}  // namespace outbox::pos_sim

#endif  // OUTBOX_EXAMPLES_POS_SIM_POS_SIM_FLAGS_H_
