// Copyright (c) edge-outbox authors.

#include "examples/pos_sim/pos_sim_flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace outbox::pos_sim {
namespace {

absl::Status Bad(absl::string_view flag, absl::string_view want,
                 absl::string_view got) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, ": want ", want, ", got \"", got, "\""));
}

absl::Status ParseEvery(absl::string_view flag, const std::string& value,
                        int64_t* every) {
  if (!absl::SimpleAtoi(value, every) || *every < 1) {
    return Bad(flag, "a count >= 1", value);
  }
  return absl::OkStatus();
}

absl::Status SetFlag(const std::string& flag, const std::string& value,
                     PosSimFlags* f) {
  if (flag == "--db") {
    f->db = value;
  } else if (flag == "--config") {
    f->config = value;
  } else if (flag == "--till") {
    f->till = value;
  } else if (flag == "--sales") {
    if (!absl::SimpleAtoi(value, &f->sales) || f->sales < 0) {
      return Bad("sales", "a count >= 0", value);
    }
  } else if (flag == "--rate") {
    if (!absl::SimpleAtod(value, &f->rate) || !(f->rate > 0)) {
      return Bad("rate", "sales per second > 0", value);
    }
  } else if (flag == "--fsync") {
    if (value != "on" && value != "off") {
      return Bad("fsync", "on or off", value);
    }
    f->fsync = value == "on";
  } else if (flag == "--print-after") {
    if (!absl::ParseDuration(value, &f->print_after) ||
        f->print_after < absl::ZeroDuration() ||
        f->print_after > absl::Seconds(10)) {
      return Bad("print-after", "a duration from 0 to 10s, like 200ms", value);
    }
  } else if (flag == "--saga") {
    if (value == "whole") {
      f->mix.saga = SaleMix::Saga::kWhole;
    } else if (value == "per_step") {
      f->mix.saga = SaleMix::Saga::kPerStep;
    } else {
      return Bad("saga", "whole or per_step", value);
    }
  } else if (flag == "--decline-every") {
    return ParseEvery("decline-every", value, &f->mix.decline_every);
  } else if (flag == "--refund-every") {
    return ParseEvery("refund-every", value, &f->mix.refund_every);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("bad argument '", flag, "'"));
  }
  return absl::OkStatus();
}

absl::Status CheckFlags(const PosSimFlags& f) {
  if (f.db.empty() || f.config.empty() || f.sales < 0) {
    return absl::InvalidArgumentError("--db, --config and --sales are needed");
  }
  if (f.mix.saga == SaleMix::Saga::kNone &&
      (f.mix.decline_every > 0 || f.mix.refund_every > 0)) {
    return absl::InvalidArgumentError(
        "--decline-every and --refund-every need --saga");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PosSimFlags> ParsePosSimFlags(
    const std::vector<std::string>& args) {
  PosSimFlags f;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      f.help = true;
      return f;
    }
    if (i + 1 == args.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad argument '", args[i], "'"));
    }
    OUTBOX_RETURN_IF_ERROR(SetFlag(args[i], args[i + 1], &f));
    ++i;
  }
  OUTBOX_RETURN_IF_ERROR(CheckFlags(f));
  return f;
}

std::string PosSimUsage() {
  return R"(usage: outbox-pos-sim --db DIR --config FILE --sales N [--rate R] [--till T]
                      [--fsync off] [--print-after D]
                      [--saga MODE [--decline-every K] [--refund-every K]]
  --sales N   total sales to make (a restart continues the count)
  --rate R    sales per second (default 50)
  --till T    till name: ordering key and sale-id prefix (default till-1)
  --fsync off for tests only: commits without fsync (Options::sync false),
              so an acknowledged sale can vanish at a power cut; the
              broken store tests/vm's power cuts must catch (default on)
  --print-after D
              for tests only: waits D (at most 10s) between each commit and
              its "sale" line, so that a kill aimed there lands with the
              sale committed and never acknowledged (default 0)
  --saga MODE commit seed 003's order for a workflow (event type
              sale.created): "whole", every step gets the whole order, or
              "per_step", one member per step: reserve, fraud, shipping,
              billing. Sale n's riskScore is (37n + 11) mod 100 and its
              shippingType "international" if n mod 3 = 2, else "domestic"
  --decline-every K
              sale n's card is declined when n mod K = K - 1: its billing
              request carries "simulate": "decline"
  --refund-every K
              once every sale is delivered, refund each sale n with
              n mod K = K - 1 that was not declined: a later Txn marks it
              refunded and cancels its workflow (Txn::Cancel), then prints
              "refund <sale-id> <event-id>"
)";
}

}  // namespace outbox::pos_sim
