#!/usr/bin/env bash
# Builds what fully static ARM executables need beyond the sysroot's
# archives (toolchain option OUTBOX_FULLY_STATIC):
#   toolchains/build-static-deps.sh aarch64|armhf
#
# 1. libcurl. Debian's libcurl.a is built with every feature Debian enables,
#    so it needs GSSAPI (krb5), LDAP, RTMP (gnutls), nghttp2, ssh2, psl, idn2
#    and brotli, and several of those Debian ships only as shared libraries.
#    The agent needs HTTP/1.1 and HTTPS through OpenSSL, nothing else. So
#    Debian's own curl source package (the version of the sysroot's
#    libcurl4-openssl-dev, Debian's patches and security fixes applied) is
#    compiled with only HTTP, OpenSSL and the threaded resolver, into an
#    archive whose one dependency is OpenSSL.
# 2. cpp-httplib, which outbox-sink and the transport tests use. Debian ships
#    it only as a shared library; its source package holds the upstream
#    single header, patched by Debian, which static builds use split in two
#    (declarations, and one file of implementation compiled once).
#
# How:
#  - Needs the sysroot (toolchains/build-sysroot.sh <arch>): versions are
#    read from it, and curl is compiled against its OpenSSL and glibc with the
#    project's toolchain file (checks that must run a program run under qemu).
#  - Downloads the sources with apt in a private state (deb-src entries of the
#    host's Debian mirrors): apt checks each .dsc against the signed Sources
#    index, dpkg-source checks the tarballs against the .dsc and applies the
#    patches. The last two patches of curl's series (90_gnutls, 99_nss) only
#    rename the library in Makefile.am for Debian's other flavours; the CMake
#    build used here does not read those files.
#  - Installs to <base>/static-<arch> (beside the sysroot; base is
#    ${OUTBOX_SYSROOT_BASE:-/opt/edge-outbox}): lib/libcurl.a with
#    CURLConfig.cmake, include/curl, include/httplib.h (declarations) and
#    src/httplib.cc (cpp-httplib's implementation). cross-linux-gnu.cmake
#    puts that tree first on the search path when OUTBOX_FULLY_STATIC is ON.
#    A stamp (this script, the toolchain files, the sysroot's package list)
#    makes a second run a no-op without network; the downloaded sources are
#    kept in <base>/apt-src/sources for rebuilds.
#
# Built-in defaults of this libcurl (the firmware image must match them, or
# the agent's config must name its CA with ca_file/ca_dir):
#   CA bundle /etc/ssl/certs/ca-certificates.crt, CA dir /etc/ssl/certs.
set -euo pipefail

usage() { echo "usage: $0 aarch64|armhf" >&2; exit 2; }
[ $# -eq 1 ] || usage
arch="$1"
case "$arch" in
  aarch64) toolchain=aarch64-linux-gnu.cmake ;;
  armhf)   toolchain=arm-linux-gnueabihf.cmake ;;
  *) usage ;;
esac
here="$(cd "$(dirname "$0")" && pwd)"
base="${OUTBOX_SYSROOT_BASE:-/opt/edge-outbox}"
sysroot="$base/sysroot-$arch"
aptdir="$base/apt-$arch"
prefix="$base/static-$arch"
srcapt="$base/apt-src"
log() { echo "build-static-deps[$arch]: $*"; }
. "$here/common.sh"

[ -f "$sysroot/.outbox-packages" ] || {
  log "ERROR: no sysroot at $sysroot; run toolchains/build-sysroot.sh $arch" >&2
  exit 3
}
own_dir "$base"
# The sysroot must not change under us (build-sysroot.sh takes the same
# lock), and one run at a time builds: the source apt state is shared by the
# architectures.
exec 8>"$base/.lock-$arch"
flock 8
exec 9>"$base/.lock-static"
flock 9

# source_of PKG: "SOURCE VERSION" of the sysroot's binary package PKG, read
# from its .deb (a binary-only rebuild has a version the source lacks).
source_of() {
  local v deb src
  v=$(awk -F= -v p="$1" '$1==p{print $2}' "$sysroot/.outbox-packages")
  [ -n "$v" ] || { log "ERROR: the sysroot has no $1 to match" >&2; exit 3; }
  deb=$(ls "$aptdir/archives/$1_${v/:/%3a}_"*.deb 2>/dev/null | head -1)
  src=""
  if [ -n "$deb" ]; then src=$(dpkg-deb -f "$deb" Source); fi
  case "$src" in
    "") echo "$1 $v" ;;                          # source named as the binary
    *"("*) echo "${src%% *} $(echo "$src" | sed 's/.*(\(.*\)).*/\1/')" ;;
    *) echo "$src $v" ;;
  esac
}
src=$(source_of libcurl4-openssl-dev)
read -r curl_src version <<< "$src"
src=$(source_of libcpp-httplib-dev)
read -r httplib_src httplib_version <<< "$src"

# Rebuilt when this script, the toolchain it compiles with, or the sysroot
# changes. The toolchain file refuses a tree built against another sysroot
# (.outbox-built-against).
built_against=$(sha256sum "$sysroot/.outbox-packages" | cut -d' ' -f1)
stamp=$( { cat "$0" "$here/common.sh" "$here/cross-linux-gnu.cmake" \
               "$here/$toolchain" "$sysroot/.outbox-sysroot";
           echo "$built_against"; } | sha256sum | cut -d' ' -f1)
if [ -f "$prefix/.outbox-static" ] && \
   [ "$(cat "$prefix/.outbox-static")" = "$stamp" ]; then
  log "up to date: $prefix (curl $version, cpp-httplib $httplib_version)"
  exit 0
fi
start=$(date +%s)

# Host tools: dpkg-source (dpkg-dev) and patch unpack the sources; cmake and
# ninja come from install-deps.sh.
install_missing dpkg-dev patch
for tool in cmake ninja; do
  command -v "$tool" >/dev/null || {
    log "ERROR: $tool not found (toolchains/install-deps.sh installs it)" >&2
    exit 3
  }
done

# 1. Source packages, through a private apt state that knows only deb-src.
private_apt "$srcapt" deb-src
mkdir -p "$srcapt/sources"
work="$base/static-build-$arch"
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work" "$prefix.tmp"' EXIT
# Downloaded sources stay in $srcapt/sources: a rebuild (a change to this
# script, say) needs no download, even after the archive has moved on to a
# newer version.
sources_updated=0
fetch_source() {  # fetch_source PACKAGE VERSION DIR: verified, patched tree
  local dsc="$srcapt/sources/$1_${2#*:}.dsc"
  if [ ! -f "$dsc" ]; then
    if [ "$sources_updated" = 0 ]; then
      log "downloading the Debian source indexes"
      retry 3 apt-get "${apt_opts[@]}" update >"$work/update.log" 2>&1 || {
        cat "$work/update.log" >&2
        log "ERROR: could not download the Debian source indexes" >&2
        exit 3
      }
      sources_updated=1
    fi
    log "downloading the $1 $2 source package"
    (cd "$srcapt/sources" && retry 3 apt-get "${apt_opts[@]}" source \
       --download-only "$1=$2") >"$work/source-$1.log" 2>&1 || {
      cat "$work/source-$1.log" >&2
      log "ERROR: could not download the $1 $2 source package. If the" \
        "archive has replaced that version (a security update), refresh the" \
        "sysroot first: OUTBOX_SYSROOT_REFRESH=1 bash" \
        "toolchains/build-sysroot.sh $arch" >&2
      exit 3
    }
  fi
  dpkg-source -x "$dsc" "$3" >"$work/extract-$1.log" 2>&1 || {
    cat "$work/extract-$1.log" >&2
    log "ERROR: dpkg-source could not verify or unpack $dsc" >&2
    exit 3
  }
}
fetch_source "$curl_src" "$version" "$work/src"
fetch_source "$httplib_src" "$httplib_version" "$work/httplib"

# 2. Configure for HTTP(S) only. Each OFF below is a library Debian's build
#    links and the agent does not use; zlib is off because the agent never
#    asks for compressed responses, netrc because it never reads ~/.netrc
#    (which would also make a static binary look up passwd entries).
log "configuring (HTTP + OpenSSL only)"
cmake -S "$work/src" -B "$work/build" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$here/$toolchain" -DOUTBOX_SYSROOT="$sysroot" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix.tmp" \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DBUILD_SHARED_LIBS=OFF -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF \
  -DENABLE_MANUAL=OFF -DHTTP_ONLY=ON \
  -DCURL_USE_OPENSSL=ON -DENABLE_THREADED_RESOLVER=ON -DENABLE_ARES=OFF \
  -DCURL_ZLIB=OFF -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DUSE_NGHTTP2=OFF \
  -DUSE_LIBIDN2=OFF -DCURL_USE_LIBPSL=OFF -DCURL_USE_LIBSSH2=OFF \
  -DCURL_USE_LIBSSH=OFF -DCURL_USE_GSSAPI=OFF \
  -DCURL_DISABLE_LDAP=ON -DCURL_DISABLE_LDAPS=ON -DCURL_DISABLE_NETRC=ON \
  -DCURL_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
  -DCURL_CA_PATH=/etc/ssl/certs \
  >"$work/configure.log" 2>&1 || {
  tail -40 "$work/configure.log" >&2
  log "ERROR: configure failed (full log: $work/configure.log)" >&2
  trap - EXIT
  exit 3
}

# 3. Build and install into a fresh tree, then swap it in.
log "building"
cmake --build "$work/build" -j "$(nproc)" >"$work/build.log" 2>&1 || {
  tail -40 "$work/build.log" >&2
  log "ERROR: build failed (full log: $work/build.log)" >&2
  trap - EXIT
  exit 3
}
rm -rf "$prefix.tmp"
cmake --install "$work/build" >"$work/install.log" 2>&1 || {
  cat "$work/install.log" >&2
  log "ERROR: install failed" >&2
  exit 3
}
# Only CMake consumes this tree (FindCURL prefers CURLConfig.cmake).
# curl-config and libcurl.pc would name the temporary prefix and the
# sysroot's shared OpenSSL: remove them rather than mislead.
rm -f "$prefix.tmp/bin/curl-config" "$prefix.tmp/lib/pkgconfig/libcurl.pc"
rmdir "$prefix.tmp/bin" "$prefix.tmp/lib/pkgconfig" 2>/dev/null || true
# What the archive needs besides libc: OpenSSL, and nothing else.
libs=$(sed -n 's/.*INTERFACE_LINK_LIBRARIES "\(.*\)".*/\1/p' \
  "$prefix.tmp"/lib/cmake/CURL/CURLTargets.cmake)
log "libcurl.a links: $libs"
IFS=';' read -r -a lib_list <<< "$libs"
for lib in "${lib_list[@]}"; do
  lib=${lib#*LINK_ONLY:}; lib=${lib%>}
  case "$lib" in
    OpenSSL::SSL|OpenSSL::Crypto|Threads::Threads|pthread|-lpthread) ;;
    *) log "ERROR: libcurl needs $lib; only OpenSSL is expected" >&2; exit 3 ;;
  esac
done
cp "$work/src/COPYING" "$prefix.tmp/COPYING.curl"
grep -q '^#define CPPHTTPLIB_VERSION' "$work/httplib/httplib.h" || {
  log "ERROR: $work/httplib/httplib.h is not the single-header cpp-httplib" >&2
  exit 3
}
# Split into declarations (include/httplib.h) and one implementation file
# (src/httplib.cc), with the source package's own split.py, as Debian does
# for its shared library: the project compiles httplib.cc once, instead of
# every file that includes the header compiling all of cpp-httplib again
# (about 40 s of the cross compiler each, a dozen files).
python3 "$work/httplib/split.py" --out "$work/httplib-split" \
  >"$work/split.log" 2>&1 || {
  cat "$work/split.log" >&2
  log "ERROR: cpp-httplib's split.py failed" >&2
  exit 3
}
mkdir -p "$prefix.tmp/src"
cp "$work/httplib-split/httplib.h" "$prefix.tmp/include/httplib.h"
cp "$work/httplib-split/httplib.cc" "$prefix.tmp/src/httplib.cc"
cp "$work/httplib/LICENSE" "$prefix.tmp/LICENSE.cpp-httplib"
printf 'curl %s\ncpp-httplib %s\n' "$version" "$httplib_version" \
  > "$prefix.tmp/.outbox-versions"
echo "$built_against" > "$prefix.tmp/.outbox-built-against"
echo "$stamp" > "$prefix.tmp/.outbox-static"
rm -rf "$prefix"
mv "$prefix.tmp" "$prefix"
rm -rf "$work"
trap - EXIT
log "built $prefix: curl $version, cpp-httplib $httplib_version, libcurl.a" \
  "$(( $(stat -c %s "$prefix/lib/libcurl.a") / 1024 )) KiB, $(( $(date +%s) - start )) s"
