#!/usr/bin/env bash
# Installs every Debian package the native build and its tests need.
# Idempotent: packages already present are left alone, and apt is not
# touched at all when everything is installed. Run as root (CI is root).
#   install-deps.sh           the native build's packages
#   install-deps.sh --cross   also the host's tools for both ARM cross builds
#                             (what build-sysroot.sh installs per arch), in
#                             the same apt run: CI then builds the sysroots
#                             beside the native build without apt running.
set -euo pipefail

packages=(
  cmake make ninja-build g++ pkg-config
  librocksdb-dev          # storage engine (7.8.3 on Debian 12)
  libprotobuf-dev protobuf-compiler
  libabsl-dev             # absl::Status, Mutex, Time, flags
  libcurl4-openssl-dev    # HTTP delivery (OpenSSL-backed TLS)
  libssl-dev              # HMAC-SHA256 for Standard Webhooks signatures
  libmosquitto-dev        # MQTT 5 publisher (optional: OUTBOX_WITH_MQTT; native only)
  mosquitto               # the real broker of the MQTT tests (and mosquitto_passwd)
  librdkafka-dev          # Kafka producer and its mock cluster (optional: OUTBOX_WITH_KAFKA; native only)
  libgtest-dev libgmock-dev
  libcpp-httplib-dev      # outbox-sink test receiver
  nlohmann-json3-dev      # JSON in outboxctl and outbox-sink (header-only)
  libsqlite3-dev          # the SQLite baseline of tests/bench/outbox_bench
  openssl                 # test certificates
  python3-prometheus-client  # the Prometheus parser of tests/metrics
  file                    # CI checks that the aarch64 agent is static
  python3                 # tests/usage: the docs' --help blocks and links
  systemd                 # systemd-analyze verify, systemd-sysusers (tests/dist)
  clang libclang-rt-14-dev  # libFuzzer + ASan/UBSan runtimes (tests/fuzz)
  lld                     # the linker of every build, native and cross (CMakeLists.txt)
  qemu-utils              # qemu-io, the NBD client of tests/vm's lossy-disk tests
  qemu-system-x86         # the virtual board of tests/vm's power cuts (TCG, no KVM needed)
  e2fsprogs               # mkfs.ext4, e2fsck, debugfs: the board's disk, checked on the host
  xz-utils                # build-guest.sh unpacks the kernel it boots (tests/vm)
  faketime                # runs outbox-agent years in the past (tests/agent, a stale clock)
)

case "${1:-}" in
  "") ;;
  --cross)
    # Keep in step with build-sysroot.sh's host_packages.
    # qemu-system-arm: the ARM board of tests/vm (arm_board.cmake).
    packages+=(g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user-static
      qemu-system-arm) ;;
  *) echo "usage: $0 [--cross]" >&2; exit 2 ;;
esac

log() { echo "install-deps: $*"; }
. "$(dirname "$0")/common.sh"
install_missing "${packages[@]}"
log "all ${#packages[@]} packages present"
