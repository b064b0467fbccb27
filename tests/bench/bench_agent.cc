// Copyright (c) edge-outbox authors.

#include "tests/bench/bench_agent.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "lib/store_impl.h"
#include "tests/bench/bench_env.h"
#include "tests/testing/target_command.h"
#include "tools/json_fields.h"

namespace outbox::bench {

absl::StatusOr<std::unique_ptr<BenchSink>> BenchSink::Start(
    const std::string& dir, const std::vector<std::string>& args) {
  std::filesystem::create_directories(dir);
  std::unique_ptr<BenchSink> sink(new BenchSink);
  sink->log_ = dir + "/sink.log";
  sink->secrets_file_ = dir + "/sink.whsec";
  std::ofstream(sink->secrets_file_) << kSecret << "\n";
  chmod(sink->secrets_file_.c_str(), 0600);  // the agent insists
  std::vector<std::string> all = {"--secret-file", sink->secrets_file_, "--log",
                                  sink->log_};
  all.insert(all.end(), args.begin(), args.end());
  OUTBOX_ASSIGN_OR_RETURN(
      sink->process_,
      sink::SinkProcess::Start(testing::TargetCommand(OUTBOX_SINK_BINARY, all),
                               dir));
  return sink;
}

BenchSink::~BenchSink() {
  if (process_ != nullptr) process_->Stop().IgnoreError();
}

int BenchSink::port() const { return process_->port(); }

std::string BenchSink::url() const {
  return absl::StrCat("http://127.0.0.1:", process_->port(), "/hook");
}

absl::Status BenchSink::CheckLogged(const std::string& id_prefix,
                                    int requests) const {
  const std::vector<std::string> lines = sink::ReadLines(log_);
  int valid = 0, prefixed = 0;
  for (const std::string& line : lines) {
    if (JsonField(line, "signature_valid") == "true") ++valid;
    const std::string id = JsonString(line, "id");
    if (absl::StartsWith(id, id_prefix)) ++prefixed;
  }
  if (valid != static_cast<int>(lines.size()) || prefixed != requests) {
    return absl::InternalError(
        absl::StrCat("outbox-sink logged ", lines.size(), " requests, ", valid,
                     " with a valid signature, ", prefixed,
                     " from the load generator; ", requests, " were sent"));
  }
  return absl::OkStatus();
}

std::string AgentConfig(const std::string& url, const std::string& secrets_file,
                        int max_in_flight, const std::string& batch,
                        const std::string& agent_fields,
                        const std::string& destination_fields) {
  const std::string secrets =
      secrets_file.empty()
          ? ""
          : absl::StrCat("secrets_file: \"", secrets_file, "\"");
  return absl::StrCat(
      "destinations { name: \"sink\" url: \"", url, "\" ", secrets,
      batch.empty() ? "" : " batch { ", batch, batch.empty() ? "" : " }", " ",
      destination_fields, " }\n",
      "routes { event_type: \"*\" destination: \"sink\" }\n",
      "agent { max_in_flight: ", max_in_flight, " ", agent_fields, " }\n");
}

absl::StatusOr<std::unique_ptr<SteppedAgent>> SteppedAgent::Create(
    Store* store, const std::string& config, int64_t events) {
  AgentOptions options;
  options.config_text = config;
  options.watch_network = false;  // loopback only; netlink is noise here
  OUTBOX_ASSIGN_OR_RETURN(std::unique_ptr<Agent> agent,
                          Agent::Create(store, std::move(options)));
  return std::unique_ptr<SteppedAgent>(
      new SteppedAgent(store, std::move(agent), events));
}

absl::Duration SteppedAgent::Cpu() const { return ThreadCpu() + SyncerCpu(); }

absl::Duration SteppedAgent::SyncerCpu() const {
  auto* impl = dynamic_cast<StoreImpl*>(store_);
  std::thread::native_handle_type syncer;
  if (impl != nullptr && impl->TEST_SyncerThread(&syncer)) {
    return ThreadCpu(syncer);
  }
  return absl::ZeroDuration();
}

absl::StatusOr<Throughput> SteppedAgent::Deliver(int count) {
  const uint64_t before = delivered();
  const uint64_t target =
      std::min<uint64_t>(before + count, static_cast<uint64_t>(events_));
  StartCountingSkips();
  const absl::Duration cpu = Cpu();
  const absl::Duration syncer_cpu = SyncerCpu();
  const absl::Duration kernel_cpu = ThreadKernelCpu();
  const int64_t written = WriteBytes();
  Stopwatch wall, progress;
  for (uint64_t seen = before; delivered() < target;) {
    OUTBOX_RETURN_IF_ERROR(
        agent_->RunOnce(absl::Now() + absl::Milliseconds(100)));
    ++rounds_;
    if (delivered() != seen) {
      seen = delivered();
      progress = Stopwatch();
    } else if (progress.Elapsed() > absl::Minutes(1)) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the agent delivered nothing for a minute (", seen, " of ", events_,
          ", ", agent_->stats().requests, " requests)"));
    }
  }
  Throughput t;
  t.elapsed = wall.Elapsed();
  t.ops = static_cast<int64_t>(delivered() - before);
  cpu_ += Cpu() - cpu;
  syncer_cpu_ += SyncerCpu() - syncer_cpu;
  kernel_cpu_ += ThreadKernelCpu() - kernel_cpu;
  written_ += WriteBytes() - written;
  const Skipped skipped = CountedSkips();
  skipped_.tombstones += skipped.tombstones;
  skipped_.keys += skipped.keys;
  return t;
}

double SteppedAgent::cpu_us_per_event() const {
  return absl::ToDoubleMicroseconds(cpu_) / std::max<uint64_t>(delivered(), 1);
}

double SteppedAgent::syncer_cpu_us_per_event() const {
  return absl::ToDoubleMicroseconds(syncer_cpu_) /
         std::max<uint64_t>(delivered(), 1);
}

double SteppedAgent::kernel_cpu_us_per_event() const {
  return absl::ToDoubleMicroseconds(kernel_cpu_) /
         std::max<uint64_t>(delivered(), 1);
}

double SteppedAgent::rounds_per_event() const {
  return static_cast<double>(rounds_) / std::max<uint64_t>(delivered(), 1);
}

double SteppedAgent::written_per_event() const {
  return static_cast<double>(written_) / std::max<uint64_t>(delivered(), 1);
}

Subject DeliverySubject(SteppedAgent* agent) {
  return Subject([agent](int64_t, int count) { return agent->Deliver(count); });
}

absl::StatusOr<std::unique_ptr<BackgroundAgent>> BackgroundAgent::Start(
    Store* store, const std::string& config) {
  std::unique_ptr<BackgroundAgent> running(new BackgroundAgent);
  AgentOptions options;
  options.config_text = config;
  options.watch_network = false;  // probes on the timer only, as measured
  std::atomic<bool>* offline = &running->offline_;
  options.log = [offline](const LogRecord& r) {
    if (r.event == LogEvent::kDestinationUnreachable) offline->store(true);
  };
  OUTBOX_ASSIGN_OR_RETURN(running->agent_,
                          Agent::Create(store, std::move(options)));
  BackgroundAgent* self = running.get();
  running->thread_ =
      std::thread([self] { self->run_status_ = self->agent_->Run(); });
  running->handle_ = running->thread_.native_handle();
  return running;
}

BackgroundAgent::~BackgroundAgent() { Stop().IgnoreError(); }

absl::Duration BackgroundAgent::Cpu() const { return ThreadCpu(handle_); }

absl::Status BackgroundAgent::WaitOffline(absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  while (!offline_.load()) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          "the agent did not find its destination unreachable");
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return absl::OkStatus();
}

absl::Status BackgroundAgent::Stop() {
  if (!thread_.joinable()) return run_status_;
  agent_->Stop();
  thread_.join();
  return run_status_;
}

}  // namespace outbox::bench
