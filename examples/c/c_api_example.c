/* Copyright (c) edge-outbox authors.
 *
 * A C program using edge-outbox the way C firmware would: commit a sale and
 * its event, see the idempotent repeat recognised, deliver with the agent on
 * its own thread, then commit once more and drain on this thread.
 *
 *   c_api_example DB_DIR CONFIG_FILE
 *
 * Exits 0 when everything went as expected; prints what failed otherwise.
 */

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "outbox/outbox.h"

static int Check(int code, char* err, const char* what) {
  if (code == 0) return 0;
  fprintf(stderr, "c_api_example: %s: %s (%s)\n", what, err ? err : "?",
          outbox_code_name(code));
  outbox_free(err);
  return 1;
}

static int CommitSale(outbox_store* store, const char* sale, int* duplicate) {
  char* err = NULL;
  char id[OUTBOX_EVENT_ID_LEN + 1];
  char payload[128];
  snprintf(payload, sizeof payload, "{\"sale\":\"%s\"}", sale);
  outbox_txn* txn = outbox_txn_begin();
  outbox_txn_put(txn, "sales", sale, strlen(sale), payload, strlen(payload));
  outbox_txn_emit(txn, "sale.created", "till-1", payload, strlen(payload), NULL,
                  id);
  outbox_txn_set_idempotency_key(txn, sale);
  int code = outbox_commit(store, txn, duplicate, &err);
  outbox_txn_destroy(txn);
  if (Check(code, err, "commit")) return 1;
  printf("committed %s event %s%s\n", sale, id,
         *duplicate ? " (duplicate)" : "");
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: c_api_example DB_DIR CONFIG_FILE\n");
    return 2;
  }
  char* err = NULL;
  const char* tables[] = {"sales"};
  outbox_store* store = outbox_open(argv[1], tables, 1, &err);
  if (store == NULL) return Check(3, err, "open");

  int duplicate = 0;
  if (CommitSale(store, "sale-1", &duplicate) || duplicate) return 1;
  if (CommitSale(store, "sale-1", &duplicate) || !duplicate) return 1;

  char* value = NULL;
  size_t value_len = 0;
  if (Check(outbox_get(store, "sales", "sale-1", 6, &value, &value_len, &err),
            err, "get")) {
    return 1;
  }
  printf("record sale-1 = %.*s\n", (int)value_len, value);
  outbox_free(value);

  /* Deliver with the agent on its own thread until the queue is empty
   * (bounded: 30 s). */
  outbox_agent* agent = outbox_agent_start(store, argv[2], &err);
  if (agent == NULL) return Check(3, err, "agent start");
  outbox_stats stats;
  for (int i = 0; i < 3000; ++i) {
    if (Check(outbox_get_stats(store, &stats, &err), err, "stats")) return 1;
    if (stats.pending_events == 0) break;
    struct timespec ten_ms = {0, 10 * 1000 * 1000};
    nanosleep(&ten_ms, NULL);
  }
  if (Check(outbox_agent_stop(agent, &err), err, "agent stop")) return 1;
  if (stats.pending_events != 0) {
    fprintf(stderr, "c_api_example: still %llu pending\n",
            (unsigned long long)stats.pending_events);
    return 1;
  }

  /* One more, drained on this thread. */
  if (CommitSale(store, "sale-2", &duplicate) || duplicate) return 1;
  uint64_t pending = 1;
  if (Check(outbox_drain(store, argv[2], &pending, &err), err, "drain")) {
    return 1;
  }
  if (Check(outbox_get_stats(store, &stats, &err), err, "stats")) return 1;
  printf("drained: %llu pending, %llu delivered\n", (unsigned long long)pending,
         (unsigned long long)stats.delivered_total);
  if (pending != 0 || stats.delivered_total != 2) return 1;
  return Check(outbox_close(store, &err), err, "close");
}
