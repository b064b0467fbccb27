// Copyright (c) edge-outbox authors.

#include "tests/vm/board.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace outbox::vm {

absl::StatusOr<BoardArch> ParseBoardArch(absl::string_view name) {
  if (name == "x86_64") return BoardArch::kX86_64;
  if (name == "aarch64") return BoardArch::kAarch64;
  return absl::InvalidArgumentError(
      absl::StrCat("board architecture \"", name, "\": use x86_64 or aarch64"));
}

namespace {

absl::Status EnvFile(const char* name, std::string* value) {
  const char* set = std::getenv(name);
  if (set == nullptr || *set == '\0') {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must name the board's file with OUTBOX_VM_ARCH"));
  }
  *value = set;
  return absl::OkStatus();
}

}  // namespace

absl::Status BoardFromEnvironment(BoardConfig* config) {
  const char* memory = std::getenv("OUTBOX_VM_MEMORY_MB");
  if (memory != nullptr && !absl::SimpleAtoi(memory, &config->memory_mb)) {
    return absl::InvalidArgumentError(
        absl::StrCat("OUTBOX_VM_MEMORY_MB=", memory, ": not a number"));
  }
  const char* arch = std::getenv("OUTBOX_VM_ARCH");
  if (arch == nullptr) return absl::OkStatus();
  absl::StatusOr<BoardArch> parsed = ParseBoardArch(arch);
  if (!parsed.ok()) return parsed.status();
  config->arch = *parsed;
  if (absl::Status s = EnvFile("OUTBOX_VM_QEMU_BINARY", &config->qemu);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = EnvFile("OUTBOX_VM_KERNEL_FILE", &config->kernel);
      !s.ok()) {
    return s;
  }
  return EnvFile("OUTBOX_VM_INITRD_FILE", &config->initrd);
}

namespace {

// The machine, its console, the log port and the disk's transport.
struct Machine {
  std::vector<std::string> qemu_args;
  std::string console;  // the kernel's console=
  std::vector<std::string> log_port;
  std::string log_device;   // in the guest; empty: guest_init.sh's default
  std::string disk_device;  // qemu's virtio-blk flavour
};

Machine MachineFor(const BoardConfig& c) {
  if (c.arch == BoardArch::kAarch64) {
    // Cortex-A57, not "max": max adds pointer authentication, which TCG
    // emulates slowly, and a gateway's cores have none.
    return {{"-machine", "virt,accel=tcg", "-cpu", "cortex-a57"},
            "ttyAMA0",
            {"-device", "virtio-serial-device", "-chardev",
             absl::StrCat("file,id=log,path=", c.serial1_path), "-device",
             "virtconsole,chardev=log"},
            "/dev/hvc0",
            "virtio-blk-device"};
  }
  return {{"-machine", "q35,accel=tcg"},
          "ttyS0",
          {"-serial", absl::StrCat("file:", c.serial1_path)},
          "",
          "virtio-blk-pci"};
}

}  // namespace

std::vector<std::string> BoardCommand(const BoardConfig& c) {
  const Machine machine = MachineFor(c);
  // quiet loglevel=1: the kernel keeps off the console, whose lines the
  // harness parses. panic=-1 with -no-reboot: a panicking guest ends qemu
  // instead of hanging until the stall timeout.
  std::vector<std::string> append = {"console=" + machine.console, "quiet",
                                     "loglevel=1", "panic=-1"};
  if (!machine.log_device.empty()) {
    append.push_back("outbox_log=" + machine.log_device);
  }
  append.insert(append.end(), c.kernel_args.begin(), c.kernel_args.end());
  std::vector<std::string> command = {c.qemu};
  command.insert(command.end(), machine.qemu_args.begin(),
                 machine.qemu_args.end());
  const std::vector<std::vector<std::string>> groups = {
      {"-smp", "1", "-m", absl::StrCat(c.memory_mb)},
      {"-display", "none", "-monitor", "none", "-no-reboot"},
      // Nothing beyond the guest's loopback.
      {"-nic", "none"},
      {"-kernel", c.kernel, "-initrd", c.initrd},
      {"-append", absl::StrJoin(append, " ")},
      {"-serial", "stdio"},
      machine.log_port,
      // cache=none: qemu passes the guest's FLUSH and FUA on to the disk,
      // and the guest sees a volatile write cache. 4 KiB sectors: the
      // guest assumes no atomicity finer than the disk's block
      // (outbox-lossy-disk never tears inside one).
      {"-drive", absl::StrCat("file=", c.disk_url,
                              ",format=raw,if=none,id=d0,cache=none")},
      {"-device", absl::StrCat(machine.disk_device,
                               ",drive=d0,logical_block_size=4096,"
                               "physical_block_size=4096")},
  };
  for (const std::vector<std::string>& group : groups) {
    command.insert(command.end(), group.begin(), group.end());
  }
  return command;
}

absl::StatusOr<std::unique_ptr<Board>> Board::Boot(const BoardConfig& config) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> qemu =
      ChildProcess::Start(BoardCommand(config), config.stderr_path);
  if (!qemu.ok()) return qemu.status();
  return std::unique_ptr<Board>(new Board(std::move(*qemu)));
}

ChildProcess::Read Board::ReadConsole(absl::Time deadline, std::string* line) {
  const ChildProcess::Read read = qemu_->ReadLine(deadline, line);
  if (read == ChildProcess::Read::kLine && !line->empty() &&
      line->back() == '\r') {
    line->pop_back();
  }
  return read;
}

}  // namespace outbox::vm
