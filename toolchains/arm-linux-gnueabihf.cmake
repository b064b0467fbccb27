# Cross-compiles for 32-bit ARMv7 hard-float Linux gateways (Debian armhf)
# with Debian's g++-arm-linux-gnueabihf against the sysroot from
# `bash toolchains/build-sysroot.sh armhf`; tests run under qemu-arm-static.
# Use: cmake --preset armhf (or make test-armhf).
# Options (OUTBOX_SYSROOT, OUTBOX_FULLY_STATIC): see cross-linux-gnu.cmake.
set(CMAKE_SYSTEM_PROCESSOR arm)
set(OUTBOX_CROSS_ARCH armhf)
set(OUTBOX_CROSS_TRIPLET arm-linux-gnueabihf)
set(OUTBOX_CROSS_QEMU qemu-arm-static)
# GCC notes that GCC 7.1 changed how some arguments are passed on ARM
# (-Wpsabi). Everything here is built by GCC 12, so the note is noise.
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)
