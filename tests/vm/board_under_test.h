// Copyright (c) edge-outbox authors.
//
// The board a test of this folder boots: this build's PC board (the
// OUTBOX_QEMU_SYSTEM_BINARY, OUTBOX_VM_KERNEL and OUTBOX_VM_INITRD compile
// definitions, CMakeLists.txt here), or the one the environment names
// instead (BoardFromEnvironment: the ARM board of arm_board.cmake). For
// tests only: a bad environment is a test failure.

#ifndef OUTBOX_TESTS_VM_BOARD_UNDER_TEST_H_
#define OUTBOX_TESTS_VM_BOARD_UNDER_TEST_H_

#include "gtest/gtest.h"
#include "tests/testing/status.h"
#include "tests/vm/board.h"

namespace outbox::vm {

inline BoardConfig BoardUnderTest() {
  BoardConfig board;
  board.qemu = OUTBOX_QEMU_SYSTEM_BINARY;
  board.kernel = OUTBOX_VM_KERNEL;
  board.initrd = OUTBOX_VM_INITRD;
  EXPECT_OUTBOX_OK(BoardFromEnvironment(&board));
  return board;
}

}  // namespace outbox::vm

#endif  // OUTBOX_TESTS_VM_BOARD_UNDER_TEST_H_
