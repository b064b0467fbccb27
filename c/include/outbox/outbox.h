/* Copyright (c) edge-outbox authors.
 *
 * The C API of edge-outbox, for firmware written in C. A thin layer over the
 * C++ API (outbox/store.h, outbox/agent.h) with the same guarantees: a
 * transaction's records and events are committed together or not at all,
 * and every committed event reaches its receiver at least once with the
 * same id.
 *
 * Conventions (as in LevelDB's C API):
 *   - Functions that can fail take `char** errptr`. On failure they store a
 *     malloc()ed message there (free it with outbox_free) and return a
 *     non-zero absl::StatusCode value (see outbox_code_name); on success they
 *     return 0 and leave *errptr untouched. Pass a pointer to NULL.
 *   - Objects returned by outbox_*_open/begin/start are owned by the caller
 *     and released by the matching close/destroy/stop function.
 *   - Byte strings are (pointer, length); names and keys given as plain C
 *     strings are NUL-terminated.
 *
 * Thread-safety: an outbox_store may be used from several threads at once.
 * An outbox_txn belongs to one thread at a time. An outbox_agent runs on a
 * thread of its own; outbox_agent_stop may be called from any thread.
 */

#ifndef OUTBOX_C_INCLUDE_OUTBOX_OUTBOX_H_
#define OUTBOX_C_INCLUDE_OUTBOX_OUTBOX_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct outbox_store outbox_store;
typedef struct outbox_txn outbox_txn;
typedef struct outbox_agent outbox_agent;

/* Length of an event id (a UUIDv7 in text form) without its NUL. */
#define OUTBOX_EVENT_ID_LEN 36

/* Store::GetStats's figures (outbox/store.h says what each counts). Fields
 * are only ever added at the end; the library and this header come together
 * (it links statically), so a caller's struct always has them all. */
typedef struct outbox_stats {
  uint64_t pending_events;
  uint64_t pending_bytes;
  int64_t oldest_pending_age_ms; /* 0 when nothing is pending */
  uint64_t dead_letters;
  uint64_t delivered_total;
  uint64_t dead_letters_purged; /* since the store was created */
  /* Workflows stopped on a revert that failed for good, waiting for an
   * operator (outboxctl show / retry-step). */
  uint64_t workflows_needing_attention;
  uint64_t disk_bytes; /* the store directory's files */
} outbox_stats;

/* Frees what the API malloc()ed: error messages and outbox_get values. */
void outbox_free(void* ptr);

/* "OK", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", ... for a returned code. */
const char* outbox_code_name(int code);

/* Opens (creating it if missing) the store at `path` with the record tables
 * `tables[0..num_tables)`, commits fsync'ed. NULL on failure. A new store's
 * directory is made 0700; one that group or others can reach is refused
 * (FAILED_PRECONDITION; the message says the chmod 700). */
outbox_store* outbox_open(const char* path, const char* const* tables,
                          size_t num_tables, char** errptr);

/* Syncs and closes the store. REQUIRES: no agent is running on it. */
int outbox_close(outbox_store* store, char** errptr);

/* A new, empty transaction. Never NULL. */
outbox_txn* outbox_txn_begin(void);
void outbox_txn_destroy(outbox_txn* txn);

void outbox_txn_put(outbox_txn* txn, const char* table, const char* key,
                    size_t key_len, const char* value, size_t value_len);
void outbox_txn_delete(outbox_txn* txn, const char* table, const char* key,
                       size_t key_len);

/* Adds an event and writes its id (OUTBOX_EVENT_ID_LEN chars + NUL) to
 * `id_out`. `ordering_key` and `content_type` may be NULL (no ordering;
 * "application/json"). */
void outbox_txn_emit(outbox_txn* txn, const char* type,
                     const char* ordering_key, const char* payload,
                     size_t payload_len, const char* content_type,
                     char id_out[OUTBOX_EVENT_ID_LEN + 1]);

/* Makes the commit idempotent under `key` (see Txn::SetIdempotencyKey). */
void outbox_txn_set_idempotency_key(outbox_txn* txn, const char* key);

/* Cancels the workflow of event `event_id` in the same commit as the rest of
 * the transaction, typically the business change (a sale's status set to
 * cancelled); see Txn::Cancel. The agent starts no further step of it and
 * reverts the steps that completed, last first. The first cancel wins:
 * cancelling again is a no-op. `event_id` is 1..64 bytes; `reason` (for
 * operators, may be NULL) at most 1024 bytes: outbox_commit refuses a txn
 * with either out of range (INVALID_ARGUMENT), writing nothing. */
void outbox_txn_cancel(outbox_txn* txn, const char* event_id,
                       const char* reason);

/* Cancels, as outbox_txn_cancel does, the workflows of the events committed
 * with the idempotency key `key` (see Txn::CancelByIdempotencyKey): the
 * caller needs only its own business key. A key the store no longer
 * remembers (after Options::idempotency_window, 24 hours by default) makes
 * outbox_commit fail with NOT_FOUND, writing nothing. `key` is 1..512
 * bytes. */
void outbox_txn_cancel_by_idempotency_key(outbox_txn* txn, const char* key,
                                          const char* reason);

/* Commits the transaction in one atomic, fsync'ed write. If `duplicate` is
 * not NULL it is set to 1 when the idempotency key had already been
 * committed (nothing was written). The txn stays the caller's to destroy. */
int outbox_commit(outbox_store* store, const outbox_txn* txn, int* duplicate,
                  char** errptr);

/* Reads a record into a malloc()ed buffer (free with outbox_free).
 * Returns 5 (NOT_FOUND) if the key is absent. */
int outbox_get(outbox_store* store, const char* table, const char* key,
               size_t key_len, char** value, size_t* value_len, char** errptr);

int outbox_get_stats(outbox_store* store, outbox_stats* stats, char** errptr);

/* Starts the delivery agent on a thread of its own, configured by the
 * protobuf-text file `config_path`. NULL on failure. */
outbox_agent* outbox_agent_start(outbox_store* store, const char* config_path,
                                 char** errptr);

/* Stops the agent (requests in flight get a few seconds), joins its thread
 * and frees it. Returns the agent's own error, if it stopped on one. */
int outbox_agent_stop(outbox_agent* agent, char** errptr);

/* Delivers on the calling thread until nothing is due (see Agent::Drain);
 * stores the number of events still pending in `*pending`. */
int outbox_drain(outbox_store* store, const char* config_path,
                 uint64_t* pending, char** errptr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OUTBOX_C_INCLUDE_OUTBOX_OUTBOX_H_ */
