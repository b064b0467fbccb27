# Cross-compiles for 64-bit ARM Linux gateways (Debian arm64) with Debian's
# g++-aarch64-linux-gnu against the sysroot from
# `bash toolchains/build-sysroot.sh aarch64`; tests run under
# qemu-aarch64-static. Use: cmake --preset aarch64 (or make test-aarch64).
# Options (OUTBOX_SYSROOT, OUTBOX_FULLY_STATIC): see cross-linux-gnu.cmake.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(OUTBOX_CROSS_ARCH aarch64)
set(OUTBOX_CROSS_TRIPLET aarch64-linux-gnu)
set(OUTBOX_CROSS_QEMU qemu-aarch64-static)
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)
