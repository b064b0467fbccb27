#!/usr/bin/env bash
# Installs every Debian package the native build and its tests need.
# Idempotent: packages already present are left alone, and apt is not
# touched at all when everything is installed. Run as root (CI is root).
set -euo pipefail

packages=(
  cmake make ninja-build g++ pkg-config
  librocksdb-dev          # storage engine (7.8.3 on Debian 12)
  libprotobuf-dev protobuf-compiler
  libabsl-dev             # absl::Status, Mutex, Time, flags
  libcurl4-openssl-dev    # HTTP delivery (OpenSSL-backed TLS)
  libssl-dev              # HMAC-SHA256 for Standard Webhooks signatures
  libgtest-dev libgmock-dev
  libcpp-httplib-dev      # outbox-sink test receiver
  openssl                 # test certificates
  clang libclang-rt-14-dev  # libFuzzer + ASan/UBSan runtimes (tests/fuzz)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
# Retry: the archive occasionally fails an index download.
for attempt in 1 2 3; do
  if $SUDO apt-get update; then break; fi
  echo "install-deps: apt-get update failed (attempt $attempt)" >&2
  sleep 5
done
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
