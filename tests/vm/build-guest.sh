#!/usr/bin/env bash
# Builds the virtual board's guest (tests/vm/README.md, "The guest"): a
# Debian kernel and its virtio and ext4 modules, busybox, the project's
# binaries with the shared libraries they load, and guest_init.sh as /init.
#
#   build-guest.sh [--arch aarch64] OUT_DIR INIT_SCRIPT BINARY...
#
# The PC's guest by default: Debian's amd64 kernel and the native build's
# binaries with their shared libraries. --arch aarch64 makes the ARM
# board's: Debian's arm64 kernel (Image) and busybox from the aarch64
# sysroot's private apt state (toolchains/build-sysroot.sh), and the
# aarch64 build's fully static binaries, refused if any is not static: the
# guest holds no shared library at all.
#
# Writes OUT_DIR/vmlinux (arm64: OUT_DIR/Image) and OUT_DIR/initrd.cpio,
# both uncompressed (a
# boot under TCG spent more time in the firmware and in unpacking the
# xz kernel and the gzip initramfs than in the kernel itself: 6.1 s to the
# store's mount before, 2.5 s after). The .debs come from the
# machine's apt sources (apt-get download) and are kept in OUT_DIR/debs, so
# only the first build downloads (~70 MiB); later ones repack the initramfs
# in a few seconds.
set -euo pipefail

arch=x86_64
if [[ "${1:-}" == --arch ]]; then
  arch=$2
  shift 2
fi
out=$1
init_script=$(realpath "$2")
shift 2
binaries=()
for b in "$@"; do binaries+=("$(realpath "$b")"); done
tools=$(cd "$(dirname "$0")/../../toolchains" && pwd)

log() { echo "build-guest: $*" >&2; }

# The ARM board's guest holds no shared library: each binary must be a
# static aarch64 executable. Checked first, before any download or write
# (tests/vm/CMakeLists.txt: BuildGuest.RefusesADynamicExecutable).
if [[ "$arch" == aarch64 ]]; then
  for b in "${binaries[@]}"; do
    case "$(file -b "$b")" in
    *"ARM aarch64"*"statically linked"*) ;;
    *) echo "build-guest: $b is not a static aarch64 executable" >&2; exit 1 ;;
    esac
  done
fi

# The modules the guest loads, in dependency order: /init insmods them one
# by one (the initramfs has no modprobe and no modules.dep).
# apt_opts: the apt state the guest's .debs come from.
apt_opts=(-q -o APT::Sandbox::User=root)
case "$arch" in
x86_64)
  deb_arch=amd64
  modules=(virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio
    virtio_pci virtio_blk crc32c_generic jbd2 mbcache crc16 ext4)
  ;;
aarch64)
  deb_arch=arm64
  # virtio itself is built in; the devices sit on virtio-mmio.
  modules=(virtio_mmio virtio_blk virtio_console crc32c_generic jbd2 mbcache
    crc16 ext4)
  . "$tools/common.sh"
  aptdir="${OUTBOX_SYSROOT_BASE:-/opt/edge-outbox}/apt-aarch64"
  if ! ls "$aptdir"/lists/*_Packages* >/dev/null 2>&1; then
    echo "build-guest: no arm64 package index in $aptdir" \
      "(bash toolchains/build-sysroot.sh aarch64 makes it)" >&2
    exit 1
  fi
  # The sysroot's private state, its lists as they are (no update here);
  # downloads land in the current folder, as for the host's.
  private_apt "$aptdir" deb arm64
  ;;
*)
  echo "build-guest: --arch $arch: use x86_64 or aarch64" >&2
  exit 2
  ;;
esac

mkdir -p "$out/debs"
cd "$out"

# The kernel the metapackage points at (linux-image-6.1.0-N-amd64 on
# Debian 12), so that a point release moves the guest along with the host.
kernel_pkg=$(apt-cache "${apt_opts[@]}" depends "linux-image-$deb_arch" |
  sed -n "s/^ *Depends: \\(linux-image-[0-9].*-$deb_arch\\)\$/\\1/p" | head -1)
if [[ -z "$kernel_pkg" ]]; then
  echo "build-guest: apt-cache knows no linux-image-$deb_arch (run apt-get update)" >&2
  exit 1
fi
fetch() {  # fetch DIR PACKAGE [APT_OPTION...]: the .deb in DIR, downloaded once
  local dir=$1 pkg=$2 deb
  shift 2
  mkdir -p "$dir"
  deb=$(ls "$dir/${pkg}"_*.deb 2>/dev/null | head -1 || true)
  if [[ -z "$deb" ]]; then
    log "downloading $pkg ($dir)"
    (cd "$dir" && apt-get download "$@" "$pkg" >/dev/null)
    deb=$(ls "$dir/${pkg}"_*.deb | head -1)
  fi
  echo "$deb"
}
kernel_deb=$(fetch debs "$kernel_pkg" "${apt_opts[@]}")
busybox_deb=$(fetch "debs/$deb_arch" busybox-static "${apt_opts[@]}")
# The host's busybox packs the initramfs (the guest's may be another
# architecture's).
host_busybox_deb=$busybox_deb
if [[ "$deb_arch" != "$(dpkg --print-architecture)" ]]; then
  host_busybox_deb=$(fetch debs/host busybox-static -q -o APT::Sandbox::User=root)
fi

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
unpack "$busybox_deb" "busybox-$deb_arch"
unpack "$host_busybox_deb" busybox-host
kernel_root="kernel-$kernel_pkg"
kernel_image=$(ls "$kernel_root"/boot/vmlinuz-* | head -1)
if [[ "$arch" == x86_64 ]]; then
  extract_vmlinux "$kernel_image" vmlinux
  kernel_out=vmlinux
else
  # Debian's arm64 vmlinuz is the Image itself, or gzip of it.
  if [[ "$(head -c 2 "$kernel_image" | od -An -tx1 | tr -d ' ')" == 1f8b ]]; then
    gzip -dc "$kernel_image" >Image.tmp
  else
    cp "$kernel_image" Image.tmp
  fi
  mv Image.tmp Image
  kernel_out=Image
fi

root=initrd.d
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,mnt,tmp,etc,lib/modules,opt/outbox/bin}
cp "busybox-$deb_arch/bin/busybox" "$root/bin/busybox"
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

# The PC: the native build's executables and every library ldd lists, at
# the same paths, dynamic loader included: same code and architecture as
# the host, without a second (static) build. See the README for why. The
# ARM board: the aarch64 build's static executables alone.
# Stripped: the debug info would triple the initramfs the guest unpacks.
for b in "${binaries[@]}"; do
  if [[ "$arch" == x86_64 ]]; then
    strip -o "$root/opt/outbox/bin/$(basename "$b")" "$b"
    ldd "$b" | awk '/=> \//{print $3} /^\t\//{print $1}' | while read -r lib; do
      mkdir -p "$root$(dirname "$lib")"
      cp -L "$lib" "$root$lib"
    done
  else
    aarch64-linux-gnu-strip -o "$root/opt/outbox/bin/$(basename "$b")" "$b"
  fi
done

# busybox's cpio (the host may have none); newc is the format the kernel
# unpacks. Uncompressed: qemu loads it at host speed, and the guest only
# copies it.
(cd "$root" && find . | LC_ALL=C sort | ../busybox-host/bin/busybox cpio -o -H newc 2>/dev/null) \
  >initrd.cpio.tmp
mv initrd.cpio.tmp initrd.cpio
rm -rf vmlinuz initrd.gz busybox # what earlier versions wrote
log "$kernel_pkg ($kernel_out), $(du -h initrd.cpio | cut -f1) initramfs in $out"
