// Copyright (c) edge-outbox authors.
//
// Board: one boot of the virtual board (tests/vm/README.md): Debian's
// kernel and the guest initramfs (build-guest.sh) in qemu-system-x86_64
// under TCG, its disk on outbox-lossy-disk over NBD on loopback, no
// network device. The console (ttyS0) is read line by line; the second
// serial port (ttyS1, outbox-sink's request log) is a file qemu writes,
// which outlives the power cut. A power cut is SIGKILL of qemu: nothing the
// guest had not sent out survives it, except what the disk keeps.
// REQUIRES: External synchronization.

#ifndef OUTBOX_TESTS_VM_BOARD_H_
#define OUTBOX_TESTS_VM_BOARD_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "platform/child_process.h"

namespace outbox::vm {

struct BoardConfig {
  std::string qemu;          // qemu-system-x86_64
  std::string kernel;        // vmlinux (PVH ELF)
  std::string initrd;        // initrd.cpio
  std::string disk_url;      // nbd://127.0.0.1:PORT (LossyDiskProcess::Url)
  std::string serial1_path;  // ttyS1's file, truncated at boot
  std::string stderr_path;   // qemu's own complaints, appended
  // Words added to the kernel command line (guest_init.sh reads its
  // outbox_* words there).
  std::vector<std::string> kernel_args;
  int memory_mb = 512;
};

// The qemu command line for `config`.
std::vector<std::string> BoardCommand(const BoardConfig& config);

class Board {
 public:
  // Starts qemu. Errors: ChildProcess::Start's.
  static absl::StatusOr<std::unique_ptr<Board>> Boot(const BoardConfig& config);

  // The next complete console line, without its "\r\n" (the guest's tty
  // adds the \r). As ChildProcess::ReadLine; kEof once qemu exited.
  ChildProcess::Read ReadConsole(absl::Time deadline, std::string* line);

  // The power cut: SIGKILL of qemu, reaped. Console lines already sent
  // stay readable. REQUIRES: not yet reaped.
  void Cut() { qemu_->Kill(); }

  // Waits for qemu to exit by itself (the guest powered off): its exit
  // code, or -1 on timeout.
  int Wait(absl::Time deadline) { return qemu_->Wait(deadline); }
  bool exited() const { return qemu_->reaped(); }

 private:
  explicit Board(std::unique_ptr<ChildProcess> qemu) : qemu_(std::move(qemu)) {}

  std::unique_ptr<ChildProcess> qemu_;
};

}  // namespace outbox::vm

#endif  // OUTBOX_TESTS_VM_BOARD_H_
