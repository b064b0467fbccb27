#!/usr/bin/env bash
# Builds the sysroot for cross-compiling edge-outbox and running its tests
# under qemu-user: toolchains/build-sysroot.sh aarch64|armhf
#
# What it does, and why this way:
#  - Installs the Debian cross compiler and qemu-user-static on the host.
#  - Resolves the arm packages with apt's own solver, but in a PRIVATE apt
#    state (its own sources, lists, cache and an empty dpkg status file) whose
#    only architecture is the target's. The host's dpkg/apt configuration is
#    never touched: no `dpkg --add-architecture`, no foreign -dev package
#    installed on the host (librocksdb-dev is not Multi-Arch co-installable),
#    and a failing armhf index cannot break the host's `apt-get update`.
#    `apt-get install --download-only` against the empty status downloads the
#    complete transitive Depends/Pre-Depends closure of the packages below,
#    exactly the set dpkg would install on an empty target (Recommends off).
#  - Extracts every .deb with `dpkg-deb -x` into a fresh directory, rewrites
#    absolute symlinks to relative ones (an absolute link would point into the
#    host) and fixes the exported CMake packages that name absolute paths
#    (RocksDB, Snappy) or cannot link statically (Abseil). The loader and all
#    libraries come from one archive, so `qemu-<arch>-static -L` works.
#  - If only the security archive's index fails to download (seen for armhf),
#    builds from the point release and says so loudly (see step 2).
#  - Swaps the finished tree in atomically and writes a stamp (this script's
#    hash); a later run with the same script does nothing and needs no network.
#
# Where: ${OUTBOX_SYSROOT_BASE:-/opt/edge-outbox}/sysroot-<arch> (outside the
# build tree, so `make clean` keeps it; a new machine builds it afresh). The
# toolchain files look in the same place.
set -euo pipefail

usage() { echo "usage: $0 aarch64|armhf" >&2; exit 2; }
[ $# -eq 1 ] || usage
arch="$1"
case "$arch" in
  aarch64) deb_arch=arm64; triplet=aarch64-linux-gnu;   qemu=qemu-aarch64-static ;;
  armhf)   deb_arch=armhf; triplet=arm-linux-gnueabihf; qemu=qemu-arm-static ;;
  *) usage ;;
esac

# The target's libraries: every package the project links or compiles
# against. Their runtime and -dev dependencies come in through apt's solver.
packages=(
  libc6-dev
  librocksdb-dev
  libprotobuf-dev
  libabsl-dev
  libcurl4-openssl-dev
  libssl-dev
  libgtest-dev libgmock-dev
  libcpp-httplib-dev
  nlohmann-json3-dev      # header-only (Architecture: all), found like the rest
)
# install-deps.sh --cross installs the same for both architectures.
host_packages=("g++-$triplet" qemu-user-static protobuf-compiler)
# The aarch64 build's tests boot the ARM board (tests/vm/arm_board.cmake).
if [ "$arch" = aarch64 ]; then host_packages+=(qemu-system-arm); fi

base="${OUTBOX_SYSROOT_BASE:-/opt/edge-outbox}"
sysroot="$base/sysroot-$arch"
aptdir="$base/apt-$arch"
log() { echo "build-sysroot[$arch]: $*"; }
. "$(dirname "$0")/common.sh"

start=$(date +%s)

# The sysroot is current when it was built by this very script (same package
# list): then nothing touches the network. OUTBOX_SYSROOT_REFRESH=1 re-resolves
# against the archive and rebuilds only if a package version changed.
stamp=$(sha256sum "$0" | cut -d' ' -f1)
if [ "${OUTBOX_SYSROOT_REFRESH:-0}" != 1 ] && \
   [ -f "$sysroot/.outbox-sysroot" ] && \
   [ "$(cat "$sysroot/.outbox-sysroot")" = "$stamp" ] && \
   command -v "$triplet-g++" >/dev/null && command -v "$qemu" >/dev/null; then
  log "up to date: $sysroot"
  if [ -f "$sysroot/.outbox-warnings" ]; then cat "$sysroot/.outbox-warnings" >&2; fi
  exit 0
fi

# 1. Host tools.
install_missing "${host_packages[@]}"

# 2. Private apt state for the target architecture, using the host's Debian
#    mirrors (same suites and snapshot, so the arm libprotobuf matches the
#    host protoc exactly).
own_dir "$base"
# One build per architecture at a time (CI and a developer may overlap).
exec 9>"$base/.lock-$arch"
flock 9
private_apt "$aptdir" deb "$deb_arch"
log "updating $deb_arch package indexes (private apt state in $aptdir)"
# A security-archive index that fails to download (seen for armhf: the mirror
# served a Packages.xz that did not match the signed InRelease) must not stop
# the cross build: apt keeps the other suites' indexes, the sysroot is built
# from the point release, and the gap is reported loudly here, recorded in the
# sysroot and repeated by every CMake configure against it. Any other index
# failure is fatal: apt would resolve against an incomplete archive.
rm -f "$aptdir/warnings"
if ! retry 3 apt-get "${apt_opts[@]}" update >"$aptdir/update.log" 2>&1; then
  failed=$(grep -E '^(E|W): Failed to fetch' "$aptdir/update.log" | sort -u || true)
  if [ -n "$failed" ] && ! echo "$failed" | grep -qv '/debian-security/' \
     && ls "$aptdir"/lists/*_debian_dists_bookworm_*Packages* >/dev/null 2>&1; then
    {
      echo "WARNING: the $deb_arch index of the Debian security archive could not"
      echo "be downloaded; this sysroot has NO bookworm-security updates:"
      echo "$failed" | head -3
    } > "$aptdir/warnings"
    sed 's/^/build-sysroot['"$arch"']: /' "$aptdir/warnings" >&2
  else
    cat "$aptdir/update.log" >&2
    log "ERROR: could not download the $deb_arch package indexes" >&2
    exit 3
  fi
fi

# The resolved closure: name=version, one per line, sorted.
closure=$(apt-get "${apt_opts[@]}" install -s "${packages[@]}" \
  | awk '/^Inst /{v=$3; gsub(/[()]/,"",v); print $2"="v}' | sort)
[ -n "$closure" ] || { log "ERROR: apt resolved no packages" >&2; exit 3; }
if [ -f "$sysroot/.outbox-sysroot" ] && \
   [ "$(cat "$sysroot/.outbox-sysroot")" = "$stamp" ] && \
   [ "$(cat "$sysroot/.outbox-packages")" = "$closure" ]; then
  log "up to date (archive unchanged): $sysroot"
  if [ -f "$sysroot/.outbox-warnings" ]; then cat "$sysroot/.outbox-warnings" >&2; fi
  exit 0
fi

# 3. Download the closure (apt verifies every .deb against the signed index).
n=$(echo "$closure" | wc -l)
log "downloading $n packages"
retry 3 apt-get "${apt_opts[@]}" install --download-only "${packages[@]}" \
  >"$aptdir/download.log" 2>&1 || {
  tail -20 "$aptdir/download.log" >&2
  log "ERROR: package download failed" >&2
  exit 3
}

# 4. Extract into a fresh tree.
tmp="$sysroot.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
while IFS= read -r nv; do
  name=${nv%%=*}; ver=${nv#*=}
  # Debian file names encode the epoch colon as %3a.
  deb=$(ls "$aptdir/archives/${name}_${ver/:/%3a}_"*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || { log "ERROR: missing .deb for $nv" >&2; exit 3; }
  dpkg-deb -x "$deb" "$tmp"
done <<< "$closure"
download_bytes=$(echo "$closure" | while IFS= read -r nv; do
  name=${nv%%=*}; ver=${nv#*=}
  stat -c %s "$aptdir/archives/${name}_${ver/:/%3a}_"*.deb; done \
  | awk '{s+=$1} END{print s}')

# Absolute symlinks point into the host; make them relative to the sysroot.
while IFS= read -r -d '' link; do
  target=$(readlink "$link")
  case "$target" in
    /*) ln -sfn "$(realpath -s -m --relative-to="$(dirname "$link")" \
                   "$tmp$target")" "$link" ;;
  esac
done < <(find "$tmp" -type l -print0)

# Exported CMake packages that name absolute install paths: on the host
# those are missing or the wrong architecture. RocksDB links libbz2 by path:
# use the BZip2::BZip2 target its config already creates (find_dependency).
# Snappy's targets hard-code /usr as their prefix: derive it from the file's
# own location instead, like every other package here does.
cmake_dir="$tmp/usr/lib/$triplet/cmake"
sed -i "s|/usr/lib/$triplet/libbz2.so|\\\$<LINK_ONLY:BZip2::BZip2>|g" \
  "$cmake_dir/rocksdb/RocksDBTargets.cmake"
for f in "$cmake_dir"/*/*Targets.cmake; do
  sed -i 's|^set(_IMPORT_PREFIX "/usr")$|get_filename_component(_IMPORT_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../../.." ABSOLUTE)|' "$f"
done
for f in "$cmake_dir"/*/*Targets-*.cmake; do
  sed -i "s|\"/usr/lib/$triplet/|\"\${_IMPORT_PREFIX}/lib/$triplet/|g" "$f"
done

# Static linking (toolchain option OUTBOX_FULLY_STATIC). RocksDB's archive
# target names the *shared* gflags and snappy targets: give it their static
# ones. Debian's Abseil package imports only the .so files although the .a
# files ship beside them: let OUTBOX_ABSL_STATIC pick the archives.
sed -i '/^add_library(RocksDB::rocksdb STATIC IMPORTED)/,/^)/{
  s/gflags::gflags_shared/gflags::gflags_static/
  s/Snappy::snappy>/Snappy::snappy-static>/
}' "$cmake_dir/rocksdb/RocksDBTargets.cmake"
absl_none="$cmake_dir/absl/abslTargets-none.cmake"
absl_so=$(grep -o 'libabsl_base\.so\.[0-9.]*' "$absl_none" | head -1)
absl_so=${absl_so#libabsl_base}
sed -i "s|\\$absl_so\"|\${_outbox_absl_suffix}\"|g" "$absl_none"
sed -i "1i # edge-outbox: OUTBOX_ABSL_STATIC selects the .a archives.\\
if(OUTBOX_ABSL_STATIC)\\
  set(_outbox_absl_suffix \".a\")\\
else()\\
  set(_outbox_absl_suffix \"$absl_so\")\\
endif()" "$absl_none"

if grep -rnE '^ *(IMPORTED_LOCATION|INTERFACE_)[A-Z_]* .*["\;]/usr/' \
     "$cmake_dir"; then
  log "ERROR: absolute paths left in the CMake packages above" >&2
  exit 3
fi

# Sanity: the loader qemu will use and a library it must find.
case "$arch" in
  aarch64) loader=lib/ld-linux-aarch64.so.1 ;;
  armhf)   loader=lib/ld-linux-armhf.so.3 ;;
esac
[ -e "$tmp/$loader" ] || { log "ERROR: no $loader in sysroot" >&2; exit 3; }
ls "$tmp/usr/lib/$triplet/"librocksdb.so.* >/dev/null

# Host protoc generates code for the target's libprotobuf: versions must match.
# Generated code checks the upstream version only (3.21.12 here).
host_pb=$(dpkg-query -W -f='${Version}' protobuf-compiler | sed 's/-[^-]*$//')
target_pb=$(echo "$closure" | awk -F= '$1=="libprotobuf-dev"{print $2}' \
  | sed 's/-[^-]*$//')
if [ "$host_pb" != "$target_pb" ]; then
  log "ERROR: host protoc $host_pb != target libprotobuf $target_pb" >&2
  exit 3
fi

if [ -f "$aptdir/warnings" ]; then
  cp "$aptdir/warnings" "$tmp/.outbox-warnings"
fi
echo "$stamp" > "$tmp/.outbox-sysroot"
echo "$closure" > "$tmp/.outbox-packages"
rm -rf "$sysroot"
mv "$tmp" "$sysroot"
trap - EXIT

end=$(date +%s)
log "built $sysroot: $n packages, download $((download_bytes / 1024 / 1024)) MiB" \
  "(.deb), extracted $(du -sh "$sysroot" | cut -f1), $((end - start)) s"
