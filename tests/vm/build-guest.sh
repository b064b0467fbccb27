#!/usr/bin/env bash
# Builds the virtual board's guest (tests/vm/README.md, "The guest"): a
# Debian kernel and its virtio and ext4 modules, busybox, the project's
# binaries with the shared libraries they load, and guest_init.sh as /init.
#
#   build-guest.sh OUT_DIR INIT_SCRIPT BINARY...
#
# Writes OUT_DIR/vmlinux and OUT_DIR/initrd.cpio, both uncompressed (a
# boot under TCG spent more time in the firmware and in unpacking the
# xz kernel and the gzip initramfs than in the kernel itself: 6.1 s to the
# store's mount before, 2.5 s after). The .debs come from the
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

# extract_vmlinux BZIMAGE OUT: the kernel ELF inside Debian's bzImage,
# which qemu boots directly through its PVH entry (CONFIG_PVH) without
# SeaBIOS and without decompressing xz in emulated code. The setup
# header says where the payload is: setup_sects at 0x1f1 (0 means 4),
# payload_offset and payload_length at 0x248 and 0x24c, counted from the
# protected-mode code that follows the (setup_sects + 1) * 512 bytes of
# real-mode setup (the x86 boot protocol, version 2.08 and later); the
# payload ends with 4 bytes of its unpacked size, after the one xz stream.
extract_vmlinux() {
  local image=$1 result=$2 sects offset length
  field() { od -An -t"u$2" -j "$1" -N "$2" "$image" | tr -d ' '; }
  sects=$(field $((0x1f1)) 1)
  [[ $sects -eq 0 ]] && sects=4
  offset=$(( (sects + 1) * 512 + $(field $((0x248)) 4) ))
  length=$(field $((0x24c)) 4)
  if ! head -c $((offset + length)) "$image" | tail -c "$length" |
    xz -dc --single-stream >"$result.tmp" 2>/dev/null; then
    echo "build-guest: $image: its payload is not xz (CONFIG_KERNEL_XZ)" >&2
    exit 1
  fi
  if [[ "$(head -c 4 "$result.tmp" | od -An -c | tr -d ' ')" != '177ELF' ]]; then
    echo "build-guest: $image: its payload is not an ELF kernel" >&2
    exit 1
  fi
  mv "$result.tmp" "$result"
}

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
extract_vmlinux "$(ls "$kernel_root"/boot/vmlinuz-* | head -1)" vmlinux

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
# unpacks. Uncompressed: qemu loads it at host speed, and the guest only
# copies it.
(cd "$root" && find . | LC_ALL=C sort | ../busybox/bin/busybox cpio -o -H newc 2>/dev/null) \
  >initrd.cpio.tmp
mv initrd.cpio.tmp initrd.cpio
rm -f vmlinuz initrd.gz # what earlier versions wrote
log "$kernel_pkg, $(du -h initrd.cpio | cut -f1) initramfs in $out"
