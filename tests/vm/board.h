// Copyright (c) edge-outbox authors.
//
// Board: one boot of a virtual board (tests/vm/README.md): Debian's
// kernel and the guest initramfs (build-guest.sh) in qemu-system-x86_64 or
// qemu-system-aarch64 (BoardArch) under TCG, its disk on outbox-lossy-disk
// over NBD on loopback, no network device. The console is read line by
// line; the log port (outbox-sink's request log) is a file qemu writes,
// which outlives the power cut. A power cut is SIGKILL of qemu: nothing the
// guest had not sent out survives it, except what the disk keeps.
// REQUIRES: External synchronization.

#ifndef OUTBOX_TESTS_VM_BOARD_H_
#define OUTBOX_TESTS_VM_BOARD_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "platform/child_process.h"

namespace outbox::vm {

// The board's machine. kX86_64: a PC (q35), console on ttyS0 and the
// sink's log on ttyS1. kAarch64: qemu's ARM board (virt, one Cortex-A57),
// console on the PL011 (ttyAMA0), the sink's log on a virtio console
// (hvc0: virt has one UART), the disk on virtio-mmio.
enum class BoardArch { kX86_64, kAarch64 };
// "x86_64" or "aarch64". Errors: kInvalidArgument naming the others.
absl::StatusOr<BoardArch> ParseBoardArch(absl::string_view name);

struct BoardConfig {
  BoardArch arch = BoardArch::kX86_64;
  std::string qemu;          // qemu-system-x86_64 or qemu-system-aarch64
  std::string kernel;        // vmlinux (PVH ELF) or arm64 Image
  std::string initrd;        // initrd.cpio
  std::string disk_url;      // nbd://127.0.0.1:PORT (LossyDiskProcess::Url)
  std::string serial1_path;  // the log port's file (ttyS1 or hvc0)
  std::string stderr_path;   // qemu's own complaints, appended
  // Words added to the kernel command line (guest_init.sh reads its
  // outbox_* words there).
  std::vector<std::string> kernel_args;
  int memory_mb = 512;
};

// The board the environment names, on top of `config` (whose qemu, kernel
// and initrd are the PC's, this build's): OUTBOX_VM_ARCH=aarch64 with
// OUTBOX_VM_QEMU_BINARY, OUTBOX_VM_KERNEL_FILE and OUTBOX_VM_INITRD_FILE
// (tests/vm/arm_board.cmake sets them), and OUTBOX_VM_MEMORY_MB (default
// 512). Errors: kInvalidArgument for an unknown architecture or a file the
// environment leaves unnamed.
absl::Status BoardFromEnvironment(BoardConfig* config);

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
