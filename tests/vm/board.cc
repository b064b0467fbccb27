// Copyright (c) edge-outbox authors.

#include "tests/vm/board.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace outbox::vm {

std::vector<std::string> BoardCommand(const BoardConfig& c) {
  // quiet loglevel=1: the kernel keeps off the console, whose lines the
  // harness parses. panic=-1 with -no-reboot: a panicking guest ends qemu
  // instead of hanging until the stall timeout.
  std::vector<std::string> append = {"console=ttyS0", "quiet", "loglevel=1",
                                     "panic=-1"};
  append.insert(append.end(), c.kernel_args.begin(), c.kernel_args.end());
  const std::vector<std::vector<std::string>> groups = {
      {c.qemu, "-machine", "q35,accel=tcg", "-smp", "1"},
      {"-m", absl::StrCat(c.memory_mb)},
      {"-display", "none", "-monitor", "none", "-no-reboot"},
      // Nothing beyond the guest's loopback.
      {"-nic", "none"},
      {"-kernel", c.kernel, "-initrd", c.initrd},
      {"-append", absl::StrJoin(append, " ")},
      {"-serial", "stdio"},
      {"-serial", absl::StrCat("file:", c.serial1_path)},
      // cache=none: qemu passes the guest's FLUSH and FUA on to the disk,
      // and the guest sees a volatile write cache. 4 KiB sectors: the
      // guest assumes no atomicity finer than the disk's block
      // (outbox-lossy-disk never tears inside one).
      {"-drive", absl::StrCat("file=", c.disk_url,
                              ",format=raw,if=none,id=d0,cache=none")},
      {"-device",
       "virtio-blk-pci,drive=d0,logical_block_size=4096,"
       "physical_block_size=4096"},
  };
  std::vector<std::string> command;
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
