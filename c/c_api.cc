// Copyright (c) edge-outbox authors.
//
// outbox/outbox.h over the C++ API. Errors become a status code plus a
// malloc()ed message; nothing throws across the C boundary (the library
// uses no exceptions).

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "outbox/agent.h"
#include "outbox/outbox.h"
#include "outbox/store.h"

struct outbox_store {
  std::unique_ptr<outbox::Store> store;
};

struct outbox_txn {
  outbox::Txn txn;
};

struct outbox_agent {
  std::unique_ptr<outbox::Agent> agent;
  std::thread thread;
  absl::Status result;  // written by the thread, read after join
};

namespace {

// Reports `status` through `errptr`; returns its code (0 for OK).
int Report(const absl::Status& status, char** errptr) {
  if (status.ok()) return 0;
  if (errptr != nullptr) {
    std::free(*errptr);
    const std::string message = status.ToString();
    *errptr = static_cast<char*>(std::malloc(message.size() + 1));
    if (*errptr != nullptr) {
      std::memcpy(*errptr, message.c_str(), message.size() + 1);
    }
  }
  return static_cast<int>(status.code());
}

absl::StatusOr<std::unique_ptr<outbox::Agent>> NewAgent(
    outbox_store* store, const char* config_path) {
  if (store == nullptr || config_path == nullptr) {
    return absl::InvalidArgumentError("store and config_path are required");
  }
  outbox::AgentOptions options;
  options.config_path = config_path;
  return outbox::Agent::Create(store->store.get(), std::move(options));
}

}  // namespace

extern "C" {

void outbox_free(void* ptr) { std::free(ptr); }

const char* outbox_code_name(int code) {
  static thread_local std::string name;
  name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  return name.c_str();
}

outbox_store* outbox_open(const char* path, const char* const* tables,
                          size_t num_tables, char** errptr) {
  if (path == nullptr || (tables == nullptr && num_tables > 0)) {
    Report(absl::InvalidArgumentError("outbox_open: path and tables needed"),
           errptr);
    return nullptr;
  }
  outbox::Options options;
  for (size_t i = 0; i < num_tables; ++i)
    options.tables.emplace_back(tables[i]);
  auto store = outbox::Store::Open(options, path);
  if (!store.ok()) {
    Report(store.status(), errptr);
    return nullptr;
  }
  return new outbox_store{*std::move(store)};
}

int outbox_close(outbox_store* store, char** errptr) {
  if (store == nullptr) return 0;
  const absl::Status status = store->store->Close();
  delete store;
  return Report(status, errptr);
}

outbox_txn* outbox_txn_begin(void) { return new outbox_txn(); }

void outbox_txn_destroy(outbox_txn* txn) { delete txn; }

void outbox_txn_put(outbox_txn* txn, const char* table, const char* key,
                    size_t key_len, const char* value, size_t value_len) {
  txn->txn.Put(table, absl::string_view(key, key_len),
               absl::string_view(value, value_len));
}

void outbox_txn_delete(outbox_txn* txn, const char* table, const char* key,
                       size_t key_len) {
  txn->txn.Delete(table, absl::string_view(key, key_len));
}

void outbox_txn_emit(outbox_txn* txn, const char* type,
                     const char* ordering_key, const char* payload,
                     size_t payload_len, const char* content_type,
                     char id_out[OUTBOX_EVENT_ID_LEN + 1]) {
  outbox::Event event;
  event.type = type != nullptr ? type : "";
  if (ordering_key != nullptr) event.ordering_key = ordering_key;
  if (payload != nullptr) event.payload.assign(payload, payload_len);
  if (content_type != nullptr) event.content_type = content_type;
  const std::string id = txn->txn.Emit(std::move(event));
  if (id_out != nullptr) {
    std::memcpy(id_out, id.c_str(), OUTBOX_EVENT_ID_LEN);
    id_out[OUTBOX_EVENT_ID_LEN] = '\0';
  }
}

void outbox_txn_set_idempotency_key(outbox_txn* txn, const char* key) {
  txn->txn.SetIdempotencyKey(key != nullptr ? key : "");
}

void outbox_txn_cancel(outbox_txn* txn, const char* event_id,
                       const char* reason) {
  txn->txn.Cancel(event_id != nullptr ? event_id : "",
                  reason != nullptr ? reason : "");
}

void outbox_txn_cancel_by_idempotency_key(outbox_txn* txn, const char* key,
                                          const char* reason) {
  txn->txn.CancelByIdempotencyKey(key != nullptr ? key : "",
                                  reason != nullptr ? reason : "");
}

int outbox_commit(outbox_store* store, const outbox_txn* txn, int* duplicate,
                  char** errptr) {
  auto result = store->store->Commit(txn->txn);
  if (!result.ok()) return Report(result.status(), errptr);
  if (duplicate != nullptr) *duplicate = result->duplicate ? 1 : 0;
  return 0;
}

int outbox_get(outbox_store* store, const char* table, const char* key,
               size_t key_len, char** value, size_t* value_len, char** errptr) {
  auto got = store->store->Get(table, absl::string_view(key, key_len));
  if (!got.ok()) return Report(got.status(), errptr);
  *value = static_cast<char*>(std::malloc(got->size() + 1));
  if (*value == nullptr) {
    return Report(absl::ResourceExhaustedError("out of memory"), errptr);
  }
  std::memcpy(*value, got->data(), got->size());
  (*value)[got->size()] = '\0';  // convenient for text; length is authoritative
  *value_len = got->size();
  return 0;
}

int outbox_get_stats(outbox_store* store, outbox_stats* stats, char** errptr) {
  auto s = store->store->GetStats();
  if (!s.ok()) return Report(s.status(), errptr);
  stats->pending_events = s->pending_events;
  stats->pending_bytes = s->pending_bytes;
  stats->oldest_pending_age_ms =
      absl::ToInt64Milliseconds(s->oldest_pending_age);
  stats->dead_letters = s->dead_letters;
  stats->delivered_total = s->delivered_total;
  stats->dead_letters_purged = s->dead_letters_purged;
  stats->workflows_needing_attention = s->workflows_needing_attention;
  stats->disk_bytes = s->disk_bytes;
  return 0;
}

outbox_agent* outbox_agent_start(outbox_store* store, const char* config_path,
                                 char** errptr) {
  auto agent = NewAgent(store, config_path);
  if (!agent.ok()) {
    Report(agent.status(), errptr);
    return nullptr;
  }
  auto* handle = new outbox_agent{*std::move(agent), {}, absl::OkStatus()};
  handle->thread =
      std::thread([handle] { handle->result = handle->agent->Run(); });
  return handle;
}

int outbox_agent_stop(outbox_agent* agent, char** errptr) {
  if (agent == nullptr) return 0;
  agent->agent->Stop();
  agent->thread.join();
  const absl::Status result = agent->result;
  delete agent;
  return Report(result, errptr);
}

int outbox_drain(outbox_store* store, const char* config_path,
                 uint64_t* pending, char** errptr) {
  auto agent = NewAgent(store, config_path);
  if (!agent.ok()) return Report(agent.status(), errptr);
  auto left = (*agent)->Drain();
  if (!left.ok()) return Report(left.status(), errptr);
  if (pending != nullptr) *pending = *left;
  return 0;
}

}  // extern "C"
