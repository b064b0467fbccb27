// Copyright (c) edge-outbox authors.
//
// outboxctl emit: commits one record and one event together, as firmware
// would; for demos, tests and repairs by hand.

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"
#include "outbox/txn.h"
#include "tools/ctl/command.h"
#include "tools/ctl/store_access.h"
#include "tools/ctl/text.h"

namespace outbox::ctl {
namespace {

constexpr char kEmitUsage[] =
    "usage: outboxctl --db DIR emit --table T --key K --value V --type TYPE\n"
    "                 --payload BODY [--ordering-key K] [--idempotency-key K]\n"
    "                 [--destination D] [--content-type CT]\n"
    "\n"
    "Writes V under K in the record table T and emits an event of TYPE with\n"
    "BODY, in one atomic commit (T is created if the store lacks it). Prints\n"
    "the event id; with an idempotency key that was already committed,\n"
    "nothing is written and the first commit's ids are printed followed by\n"
    "\"duplicate\". Writes: stop outbox-agent first. The store must exist\n"
    "unless --create is given.\n"
    "\n"
    "  --table T            record table (1..64 of [A-Za-z0-9_.-])\n"
    "  --key K              record key (not empty)\n"
    "  --value V            record value\n"
    "  --type TYPE          event type, e.g. sale.created (routes the event)\n"
    "  --payload BODY       event body; checked to be JSON when the content\n"
    "                       type is JSON\n"
    "  --ordering-key K     deliver in commit order with others of key K\n"
    "  --idempotency-key K  commit at most once per key (1..512 bytes)\n"
    "  --destination D      deliver to destination D instead of by type\n"
    "  --content-type CT    default application/json\n"
    "  --create             create the store if DIR is missing or empty\n";

// application/json and the structured-syntax suffix form (RFC 6839), such
// as application/cloudevents+json, with or without parameters.
bool IsJsonMediaType(absl::string_view content_type) {
  std::string type =
      absl::AsciiStrToLower(content_type.substr(0, content_type.find(';')));
  absl::StripAsciiWhitespace(&type);
  return type == "application/json" || absl::EndsWith(type, "+json");
}

// OK if `text` is one JSON text (RFC 8259, UTF-8); otherwise kInvalidArgument
// naming the end of the token the parser refused (1-based), but not what it
// read: that is the payload.
absl::Status CheckJson(absl::string_view text) {
  try {
    const nlohmann::json parsed =
        nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("syntax error near byte ", e.byte));
  }
  return absl::OkStatus();
}

absl::StatusOr<Txn> BuildTxn(const ParsedArgs& args) {
  OUTBOX_ASSIGN_OR_RETURN(const std::string table, RequiredFlag(args, "table"));
  OUTBOX_ASSIGN_OR_RETURN(const std::string key, RequiredFlag(args, "key"));
  OUTBOX_ASSIGN_OR_RETURN(const std::string value, RequiredFlag(args, "value"));
  Event event;
  OUTBOX_ASSIGN_OR_RETURN(event.type, RequiredFlag(args, "type"));
  OUTBOX_ASSIGN_OR_RETURN(event.payload, RequiredFlag(args, "payload"));
  if (key.empty()) return UsageError("--key must not be empty");
  if (event.type.empty()) return UsageError("--type must not be empty");
  event.content_type = args.Value("content-type", event.content_type);
  event.ordering_key = args.Value("ordering-key");
  event.destination = args.Value("destination");
  if (IsJsonMediaType(event.content_type)) {
    absl::Status json = CheckJson(event.payload);
    if (!json.ok()) {
      return UsageError(absl::StrCat(
          "--payload is not valid JSON (", json.message(),
          "); pass --content-type for a payload that is not JSON"));
    }
  }
  Txn txn;
  txn.Put(table, key, value);
  txn.Emit(std::move(event));
  if (args.Has("idempotency-key")) {
    const std::string idempotency_key = args.Value("idempotency-key");
    if (idempotency_key.empty()) {
      return UsageError("--idempotency-key must not be empty");
    }
    txn.SetIdempotencyKey(idempotency_key);
  }
  return txn;
}

absl::Status RunEmit(const CommandContext& context, const ParsedArgs& args) {
  if (!args.positional.empty()) {
    return UsageError("emit takes flags only (quote values with spaces)");
  }
  OUTBOX_ASSIGN_OR_RETURN(const Txn txn, BuildTxn(args));
  OUTBOX_ASSIGN_OR_RETURN(
      std::unique_ptr<Store> store,
      OpenForWriting(context.db, args.Value("table"), args.Has("create")));
  absl::StatusOr<CommitResult> result = store->Commit(txn);
  absl::Status closed = CloseStore(std::move(store));
  if (!result.ok()) return result.status();
  // Commit fsync'ed the batch already; a failed close is still reported so
  // that nothing about the store's state goes unsaid.
  OUTBOX_RETURN_IF_ERROR(closed);
  for (const std::string& id : result->event_ids) {
    Write(context.out,
          absl::StrCat(Quote(id), result->duplicate ? " duplicate" : "", "\n"));
  }
  return absl::OkStatus();
}

}  // namespace

const Command& EmitCommand() {
  static const Command* const command =
      new Command{"emit",
                  "commit a record and an event together",
                  kEmitUsage,
                  {{"table", true},
                   {"key", true},
                   {"value", true},
                   {"type", true},
                   {"payload", true},
                   {"ordering-key", true},
                   {"idempotency-key", true},
                   {"destination", true},
                   {"content-type", true},
                   {"create", false}},
                  RunEmit};
  return *command;
}

}  // namespace outbox::ctl
