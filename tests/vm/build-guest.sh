#!/usr/bin/env bash
# Builds the virtual board's guest (tests/vm/README.md, "The guest"): a
# Debian kernel and its virtio and ext4 modules, busybox, the project's
# binaries with the shared libraries they load, and guest_init.sh as /init.
#
#   build-guest.sh OUT_DIR INIT_SCRIPT BINARY...
#
# Writes OUT_DIR/vmlinuz and OUT_DIR/initrd.gz. The .debs come from the
# machine's apt sources (apt-get download) and are kept in OUT_DIR/debs, so
# only the first build downloads (~70 MiB); later ones repack the initramfs
# in a few seconds.
set -euo pipefail

out=$1
init_script=$2
shift 2
binaries=("$@")

log() { echo "build-guest: $*" >&2; }

# The modules the guest loads, in dependency order: /init insmods them one
# by one (the initramfs has no modprobe and no modules.dep).
modules=(virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio
  virtio_pci virtio_blk crc32c_generic jbd2 mbcache crc16 ext4)

mkdir -p "$out/debs"
cd "$out"

# The kernel the metapackage points at (linux-image-6.1.0-N-amd64 on
# Debian 12), so that a point release moves the guest along with the host.
kernel_pkg=$(apt-cache depends linux-image-amd64 |
  sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -1)
if [[ -z "$kernel_pkg" ]]; then
  echo "build-guest: apt-cache knows no linux-image-amd64 (run apt-get update)" >&2
  exit 1
fi
fetch() {  # fetch PACKAGE: the .deb in debs/, downloaded once
  local deb
  deb=$(ls debs/"$1"_*.deb 2>/dev/null | head -1 || true)
  if [[ -z "$deb" ]]; then
    log "downloading $1"
    (cd debs && apt-get download -q -o APT::Sandbox::User=root "$1" >/dev/null)
    deb=$(ls debs/"$1"_*.deb | head -1)
  fi
  echo "$deb"
}
kernel_deb=$(fetch "$kernel_pkg")
busybox_deb=$(fetch busybox-static)

# Unpacked once per .deb; a new kernel version unpacks into a new folder.
unpack() {  # unpack DEB DIR
  if [[ ! -e "$2/.done" ]]; then
    rm -rf "$2"
    dpkg-deb -x "$1" "$2"
    touch "$2/.done"
  fi
}
unpack "$kernel_deb" "kernel-$kernel_pkg"
unpack "$busybox_deb" busybox
kernel_root="kernel-$kernel_pkg"
cp "$kernel_root"/boot/vmlinuz-* vmlinuz

root=initrd.d
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,mnt,tmp,etc,lib/modules,opt/outbox/bin}
cp busybox/bin/busybox "$root/bin/busybox"
for m in "${modules[@]}"; do
  ko=$(find "$kernel_root/lib/modules" -name "$m.ko" | head -1)
  if [[ -z "$ko" ]]; then
    echo "build-guest: module $m is not in $kernel_deb" >&2
    exit 1
  fi
  cp "$ko" "$root/lib/modules/"
done
printf '%s\n' "${modules[@]}" >"$root/lib/modules/order"
install -m 0755 "$init_script" "$root/init"

# The native build's executables and every library ldd lists, at the same
# paths, dynamic loader included: same code and architecture as the host,
# without a second (static) build. See the README for why.
# Stripped: the debug info would triple the initramfs the guest unpacks.
for b in "${binaries[@]}"; do
  strip -o "$root/opt/outbox/bin/$(basename "$b")" "$b"
  ldd "$b" | awk '/=> \//{print $3} /^\t\//{print $1}' | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
done

# busybox's cpio (the host may have none); newc is the format the kernel
# unpacks.
(cd "$root" && find . | LC_ALL=C sort | ../busybox/bin/busybox cpio -o -H newc 2>/dev/null) |
  gzip -1 >initrd.gz.tmp
mv initrd.gz.tmp initrd.gz
log "$kernel_pkg, $(du -h initrd.gz | cut -f1) initramfs in $out"
