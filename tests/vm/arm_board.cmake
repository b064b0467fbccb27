# The ARM board (issue 28): the aarch64 build's fully static outbox-pos-sim
# and outbox-sink in qemu-system-aarch64 (virt, Cortex-A57, 256 MiB), Debian's
# arm64 kernel, on the same outbox-lossy-disk, driven by the same harness
# (the native build's power_cut_test with OUTBOX_VM_ARCH=aarch64). Included
# by CMakeLists.txt here in the aarch64 build only.
#
# The harness and the disk are host programs: they come from the native
# build, OUTBOX_NATIVE_BIN (default <source>/build/bin; `make test-aarch64`
# builds it first). ctest fails, saying so, when they are missing.

if(NOT OUTBOX_FULLY_STATIC OR NOT TARGET outbox-sink)
  message(STATUS "ARM board power cuts: not built (the guest takes the fully "
    "static outbox-pos-sim and outbox-sink: OUTBOX_FULLY_STATIC=ON)")
  return()
endif()
# Required, not optional: CI must not pass without the board's run.
find_program(OUTBOX_QEMU_SYSTEM_AARCH64 qemu-system-aarch64)
if(NOT OUTBOX_QEMU_SYSTEM_AARCH64)
  message(FATAL_ERROR "qemu-system-aarch64 not found, which the ARM board's "
    "tests need (apt-get install qemu-system-arm; toolchains/build-sysroot.sh "
    "aarch64 installs it)")
endif()
set(OUTBOX_NATIVE_BIN ${PROJECT_SOURCE_DIR}/build/bin CACHE PATH
  "The native build's programs (the power-cut harness, outbox-lossy-disk)")

set(guest ${CMAKE_CURRENT_BINARY_DIR}/guest)
add_custom_command(
  OUTPUT ${guest}/Image ${guest}/initrd.cpio
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/build-guest.sh --arch aarch64
    ${guest} ${CMAKE_CURRENT_SOURCE_DIR}/guest_init.sh
    $<TARGET_FILE:outbox-pos-sim> $<TARGET_FILE:outbox-sink>
  DEPENDS build-guest.sh guest_init.sh outbox-pos-sim outbox-sink
  COMMENT "Building the ARM board's guest (arm64 kernel, static initramfs)"
  VERBATIM)
add_custom_target(outbox-vm-guest-aarch64 ALL DEPENDS ${guest}/initrd.cpio)

# run_harness.sh checks that the native programs are there, then runs the
# harness's soak test on the ARM board.
set(env
  OUTBOX_VM_ARCH=aarch64
  OUTBOX_VM_QEMU_BINARY=${OUTBOX_QEMU_SYSTEM_AARCH64}
  OUTBOX_VM_KERNEL_FILE=${guest}/Image
  OUTBOX_VM_INITRD_FILE=${guest}/initrd.cpio
  OUTBOX_VM_MEMORY_MB=256)
set(run bash ${CMAKE_CURRENT_SOURCE_DIR}/run_harness.sh ${OUTBOX_NATIVE_BIN}
  power_cut_test
  --gtest_filter=VmPowerCutTest.AcknowledgedSalesSurvivePowerCutsOnALossyDisk)

# `make test-aarch64`: one cut after a sale, one mid-delivery, one
# mid-acknowledgement, one in a held FLUSH, then the boot that drains. The
# in_flush cut is there because it always meets unflushed writes: the soak
# fails a run in which no cut did (the disk cache's loss never tested), and
# the other three plans met none in one CI run on a loaded host.
add_test(NAME ArmBoardPowerCut.FourCuts COMMAND ${run})
set_tests_properties(ArmBoardPowerCut.FourCuts PROPERTIES LABELS unit
  ENVIRONMENT "${env};OUTBOX_VM_CUTS=4;OUTBOX_VM_PLANS=after_sale,mid_delivery,mid_acknowledgement,in_flush"
  TIMEOUT 1200 COST 600)
# `ctest --preset aarch64-board-soak`: 300 cuts, every plan and cache mode in
# turn, seed fixed so that a run can be replayed.
add_test(NAME ArmBoardPowerCut.ThreeHundredCuts COMMAND ${run})
set_tests_properties(ArmBoardPowerCut.ThreeHundredCuts PROPERTIES LABELS soak
  ENVIRONMENT "${env};OUTBOX_VM_CUTS=300;OUTBOX_VM_SEED=2828;OUTBOX_VM_MODES=drop,subset,reorder"
  TIMEOUT 64800)
# `ctest --preset aarch64-board-memory`: outbox-pos-sim's VmRSS and VmHWM
# in the 256 MiB guest with 0, 10,000 and 100,000 pending, both memory
# profiles (board_memory_test.cc).
add_test(NAME ArmBoardMemory.PendingBacklogs
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_harness.sh ${OUTBOX_NATIVE_BIN}
    board_memory_test)
set_tests_properties(ArmBoardMemory.PendingBacklogs PROPERTIES LABELS bench
  ENVIRONMENT "${env}" TIMEOUT 7200)
