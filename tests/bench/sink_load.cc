// Copyright (c) edge-outbox authors.

#include "tests/bench/sink_load.h"

#include <curl/curl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/bench/bench_ops.h"
#include "webhooks/signature.h"

namespace outbox::bench {
namespace {

// One request, signed and with its header list built before the run.
struct Prepared {
  std::string body;
  curl_slist* headers = nullptr;
};

size_t Discard(char*, size_t size, size_t count, void*) { return size * count; }

std::vector<Prepared> Prepare(const WebhookSecret& secret, int total,
                              const std::string& id_prefix) {
  const int64_t timestamp = absl::ToUnixSeconds(absl::Now());
  std::vector<Prepared> requests(total);
  for (int i = 0; i < total; ++i) {
    const std::string id = absl::StrCat(id_prefix, "-", i);
    Prepared& r = requests[i];
    r.body = SalePayload(0, i);
    const std::string headers[] = {
        "Content-Type: application/json",
        absl::StrCat(kWebhookIdHeader, ": ", id),
        absl::StrCat(kWebhookTimestampHeader, ": ", timestamp),
        absl::StrCat(kWebhookSignatureHeader, ": ",
                     SignatureHeader({secret}, id, timestamp, r.body)),
        absl::StrCat("Idempotency-Key: ", id),
        "x-event-type: sale.created",
        "Expect:",  // no 100-continue round trip
    };
    for (const std::string& h : headers) {
      r.headers = curl_slist_append(r.headers, h.c_str());
    }
  }
  return requests;
}

// `in_flight` easy handles on one multi handle, which keeps their
// connections alive between requests. REQUIRES: External synchronization.
class Sender {
 public:
  Sender(const std::string& url, int in_flight)
      : url_(url), multi_(curl_multi_init()), started_(in_flight) {
    for (int slot = 0; slot < in_flight; ++slot) {
      easy_.push_back(curl_easy_init());
    }
  }
  ~Sender() {
    for (CURL* easy : easy_) {
      curl_multi_remove_handle(multi_, easy);
      curl_easy_cleanup(easy);
    }
    curl_multi_cleanup(multi_);
  }

  void Start(int slot, const Prepared& request) {
    CURL* easy = easy_[slot];
    curl_easy_setopt(easy, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE,
                     static_cast<long>(request.body.size()));
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, request.headers);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, Discard);
    curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy, CURLOPT_PRIVATE,
                     reinterpret_cast<void*>(static_cast<intptr_t>(slot)));
    started_[slot] = Stopwatch();
    curl_multi_add_handle(multi_, easy);
  }

  // Runs transfers until some finish; calls done(slot, ok) for each.
  template <typename Done>
  void Poll(Done done) {
    int running = 0;
    curl_multi_perform(multi_, &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      void* slot_ptr = nullptr;
      long code = 0;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &slot_ptr);
      curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
      const bool ok = msg->data.result == CURLE_OK && code / 100 == 2;
      curl_multi_remove_handle(multi_, msg->easy_handle);
      const int slot = static_cast<int>(reinterpret_cast<intptr_t>(slot_ptr));
      done(slot, ok, started_[slot].Elapsed());
    }
    curl_multi_poll(multi_, nullptr, 0, 100, nullptr);
  }

 private:
  const std::string url_;
  CURLM* const multi_;
  std::vector<CURL*> easy_;
  std::vector<Stopwatch> started_;
};

}  // namespace

absl::StatusOr<Throughput> LoadSink(const std::string& url,
                                    const std::string& secret, int total,
                                    int in_flight,
                                    const std::string& id_prefix) {
  absl::StatusOr<WebhookSecret> key = ParseWebhookSecret(secret);
  if (!key.ok()) return key.status();
  std::vector<Prepared> requests = Prepare(*key, total, id_prefix);
  Throughput figures;
  int next = 0, done = 0, failed = 0;
  {
    Sender sender(url, in_flight);
    Stopwatch wall;
    for (; next < total && next < in_flight; ++next) {
      sender.Start(next, requests[next]);
    }
    while (done < total) {
      sender.Poll([&](int slot, bool ok, absl::Duration took) {
        ++done;
        if (!ok) ++failed;
        figures.latencies.Add(took);
        if (next < total) sender.Start(slot, requests[next++]);
      });
    }
    figures.ops = total;
    figures.elapsed = wall.Elapsed();
  }
  for (Prepared& r : requests) curl_slist_free_all(r.headers);
  if (failed > 0) {
    return absl::UnavailableError(
        absl::StrCat("load generator: ", failed, " of ", total, " requests to ",
                     url, " failed or were not answered 2xx"));
  }
  return figures;
}

}  // namespace outbox::bench
