// Copyright (c) edge-outbox authors.
//
// outbox-agent: delivers the events of an outbox store.
//
//   outbox-agent --db DIR --config FILE [--drain-and-exit]
//                [--log-format text|json]
//
// SIGTERM/SIGINT stop it cleanly: requests in flight get a few seconds to
// finish; the rest stay pending and are sent again, with the same ids, next
// time. SIGHUP reads the configuration and credential files again: checked
// in full first (a wrong one is logged and the old goes on), then the
// requests in flight finish under the old, and the agent goes on with the
// new one, the store open throughout. Exit codes: 0 stopped or drained empty; 1
// error; 2 usage; 3 drained but events remain pending (waiting for a retry or a
// receiver).

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/config/config.h"
#include "agent/telemetry/log_format.h"
#include "outbox/agent.h"
#include "outbox/store.h"

namespace {

constexpr char kUsage[] =
    "usage: outbox-agent --db DIR --config FILE [--drain-and-exit]\n"
    "                    [--log-format text|json]\n"
    "\n"
    "Delivers the pending events of the outbox store in DIR to the\n"
    "destinations configured in FILE (protobuf text format; see\n"
    "agent/config/testdata/agent.textproto). Runs until SIGTERM or SIGINT;\n"
    "SIGHUP reads FILE and its credential files again (a wrong one is\n"
    "logged and the running configuration goes on).\n"
    "\n"
    "  --db DIR          the store (created by the application)\n"
    "  --config FILE     agent configuration\n"
    "  --drain-and-exit  deliver what can be delivered now, then exit:\n"
    "                    0 if nothing is pending, 3 if events wait for a\n"
    "                    retry time or an unreachable receiver\n"
    "  --log-format F    how log lines (stderr) look: text (default),\n"
    "                    or json, one object per line with ts, level,\n"
    "                    event, event_id, destination and msg\n";

struct Flags {
  std::string db, config;
  bool drain = false;
  outbox::LogFormat log_format = outbox::LogFormat::kText;
};

std::atomic<outbox::Agent*> g_agent{nullptr};
std::atomic<bool> g_reload{false};
std::atomic<bool> g_stop{false};

void OnSignal(int signal) {
  (signal == SIGHUP ? g_reload : g_stop).store(true);
  outbox::Agent* agent = g_agent.load();
  if (agent == nullptr) return;  // before or after the agent: main looks
  if (signal == SIGHUP) {
    agent->Interrupt();  // async-signal-safe
  } else {
    agent->Stop();  // async-signal-safe
  }
}

// Set once by main before anything is logged.
outbox::LogFormat g_log_format = outbox::LogFormat::kText;

void Log(const outbox::LogRecord& record) {
  // One line per record, written at once; stderr is unbuffered. Never
  // payloads or secrets: the agent does not put them in records.
  std::cerr << outbox::FormatLogLine(record, g_log_format, "outbox-agent") +
                   "\n";
}

void Log(outbox::LogSeverity severity, outbox::LogEvent event,
         std::string message) {
  outbox::LogRecord record;
  record.time = absl::Now();
  record.severity = severity;
  record.event = event;
  record.message = std::move(message);
  Log(record);
}

int Fail(absl::string_view what, const absl::Status& status) {
  Log(outbox::LogSeverity::kError, outbox::LogEvent::kFatalError,
      absl::StrCat(what, ": ", status.ToString()));
  return 1;
}

int Usage(absl::string_view problem) {
  std::cerr << "outbox-agent: " << problem << "\n\n" << kUsage;
  return 2;
}

// Fills `flags` from argv; returns -1 to go on, else the exit code.
int ParseFlags(int argc, char** argv, Flags* flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if ((arg == "--db" || arg == "--config") && has_value) {
      (arg == "--db" ? flags->db : flags->config) = argv[++i];
    } else if (arg == "--log-format" && has_value) {
      absl::StatusOr<outbox::LogFormat> format =
          outbox::ParseLogFormat(argv[++i]);
      if (!format.ok()) return Usage(format.status().message());
      flags->log_format = *format;
    } else if (arg == "--drain-and-exit") {
      flags->drain = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      return Usage(absl::StrCat("unknown or incomplete argument '", arg, "'"));
    }
  }
  if (flags->db.empty() || flags->config.empty()) {
    return Usage("--db and --config are required");
  }
  return -1;
}

absl::StatusOr<std::unique_ptr<outbox::Agent>> MakeAgent(
    outbox::Store* store, const std::string& config) {
  outbox::AgentOptions options;
  options.config_path = config;
  options.log = [](const outbox::LogRecord& r) { Log(r); };
  return outbox::Agent::Create(store, std::move(options));
}

// SIGHUP: Agent::Reload reads `config` and its credential files again and
// checks them in full; a wrong one is refused (config_reload_refused) and
// the running one goes on. Otherwise the requests in flight finish under
// the old configuration (within the shutdown grace; any left are resent
// later under the same ids) and the agent goes on with the new one
// (config_reloaded).
// An error is logged by the agent; the configuration that ran before goes
// on, or, if it could not be set up again either, the next Run() fails.
void Reload(const std::string& config, outbox::Agent* agent) {
  agent->Reload(config, "").IgnoreError();
}

// Runs `*agent` until SIGTERM or SIGINT, reloading on SIGHUP; returns the
// exit code.
int RunUntilStopped(const std::string& config, outbox::Agent* agent) {
  while (true) {
    absl::Status s = agent->Run();  // logs agent_stopped when asked to
    if (!s.ok()) return Fail("delivering", s);
    if (g_stop.load() || !g_reload.exchange(false)) return 0;  // stopped
    Reload(config, agent);
    if (g_stop.load()) return 0;  // SIGTERM while reloading
  }
}

}  // namespace

// The handlers go in before anything that takes time: opening a store with
// a day's backlog takes a while, and a SIGHUP without a handler (a
// `systemctl reload` issued at boot) would kill the agent. A signal that
// comes before the agent exists is only noted (OnSignal): main acts on it
// once the agent is there (RunAgent).
void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

// Runs the agent as the flags say; returns the exit code. A SIGTERM noted
// during startup stops it before it delivers anything; a SIGHUP noted then
// is the reload it asked for, before the first round (the configuration it
// started with may have been read before the file changed).
int RunAgent(const Flags& flags, outbox::Agent* agent) {
  g_agent.store(agent);
  if (!g_stop.load() && g_reload.exchange(false)) Reload(flags.config, agent);
  if (g_stop.load()) return 0;  // SIGTERM at startup or reload: none sent
  if (flags.drain) {
    absl::StatusOr<uint64_t> pending = agent->Drain();
    if (!pending.ok()) return Fail("delivering", pending.status());
    Log(outbox::LogSeverity::kInfo, outbox::LogEvent::kDrained,
        absl::StrCat("drained; ", *pending, " event(s) still pending"));
    return *pending == 0 ? 0 : 3;
  }
  Log(outbox::LogSeverity::kInfo, outbox::LogEvent::kAgentStarted,
      absl::StrCat("delivering from ", flags.db));
  return RunUntilStopped(flags.config, agent);
}

int main(int argc, char** argv) {
  InstallSignalHandlers();
  Flags flags;
  if (int code = ParseFlags(argc, argv, &flags); code >= 0) return code;
  g_log_format = flags.log_format;
  const std::string& db = flags.db;
  const std::string& config = flags.config;

  // Read first for the store's memory profile; Agent::Create reads it again
  // (and says the same thing if it is wrong).
  absl::StatusOr<outbox::AgentConfig> settings =
      outbox::LoadAgentConfig(config);
  if (!settings.ok()) return Fail("configuration", settings.status());

  // The application created the store and its tables; open it with all of
  // them (a store must be opened with every table it has).
  absl::StatusOr<std::vector<std::string>> tables =
      outbox::Store::ListTables(db);
  if (!tables.ok()) return Fail("opening the store", tables.status());
  outbox::Options options;
  options.tables = *tables;
  options.create_if_missing = false;
  options.memory_profile = settings->agent.memory_profile;
  options.event_classes = settings->classes;
  auto store = outbox::Store::Open(options, db);
  if (!store.ok()) return Fail("opening the store", store.status());

  auto agent = MakeAgent(store->get(), config);
  if (!agent.ok()) return Fail("configuration", agent.status());

  int code = RunAgent(flags, agent->get());
  const outbox::AgentStats stats = (*agent)->stats();
  Log(outbox::LogSeverity::kInfo, outbox::LogEvent::kAgentExit,
      absl::StrCat("requests=", stats.requests, " delivered=", stats.delivered,
                   " retries=", stats.retries_scheduled,
                   " dead_lettered=", stats.dead_lettered,
                   " offline_results=", stats.offline_results));
  g_agent.store(nullptr);
  agent->reset();
  absl::Status closed = (*store)->Close();
  if (!closed.ok() && code == 0) code = Fail("closing the store", closed);
  return code;
}
