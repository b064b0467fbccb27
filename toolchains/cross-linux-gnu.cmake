# Shared body of the Debian cross toolchain files (aarch64-linux-gnu.cmake,
# arm-linux-gnueabihf.cmake). They set OUTBOX_CROSS_ARCH (the sysroot name,
# as given to build-sysroot.sh), OUTBOX_CROSS_TRIPLET, CMAKE_SYSTEM_PROCESSOR
# and OUTBOX_CROSS_QEMU, then include this file.
#
# The sysroot is a plain tree of Debian's arm .debs for the same release as
# the host (toolchains/build-sysroot.sh), laid out multiarch:
# <sysroot>/usr/lib/<triplet>. Everything is found there; only programs
# (protoc, qemu) come from the host.
#
# Cache variables a user may set:
#   OUTBOX_SYSROOT      the sysroot. Default: $ENV{OUTBOX_SYSROOT}, else
#                       ${OUTBOX_SYSROOT_BASE:-/opt/edge-outbox}/sysroot-<arch>
#                       (where build-sysroot.sh puts it).
#   OUTBOX_FULLY_STATIC link executables with -static (glibc, libstdc++ and
#                       every dependency from .a archives) so they run on a
#                       gateway without any of these libraries installed.
#                       Default: ON in the aarch64 preset, else OFF. Tests
#                       then run under qemu without -L.
#   OUTBOX_STATIC_DEPS  the libcurl and cpp-httplib that static executables
#                       use, made by toolchains/build-static-deps.sh <arch>.
#                       Default: ${OUTBOX_SYSROOT_BASE:-/opt/edge-outbox}/
#                       static-<arch> (where that script puts them).

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${OUTBOX_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${OUTBOX_CROSS_TRIPLET}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${OUTBOX_CROSS_TRIPLET})

# try_compile() re-reads this file in a fresh project: pass our choices on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES
  OUTBOX_SYSROOT OUTBOX_FULLY_STATIC OUTBOX_STATIC_DEPS)

if(NOT OUTBOX_SYSROOT)
  if(DEFINED ENV{OUTBOX_SYSROOT})
    set(OUTBOX_SYSROOT "$ENV{OUTBOX_SYSROOT}")
  elseif(DEFINED ENV{OUTBOX_SYSROOT_BASE})
    set(OUTBOX_SYSROOT "$ENV{OUTBOX_SYSROOT_BASE}/sysroot-${OUTBOX_CROSS_ARCH}")
  else()
    set(OUTBOX_SYSROOT "/opt/edge-outbox/sysroot-${OUTBOX_CROSS_ARCH}")
  endif()
endif()
set(OUTBOX_SYSROOT "${OUTBOX_SYSROOT}" CACHE PATH
  "Target sysroot made by toolchains/build-sysroot.sh ${OUTBOX_CROSS_ARCH}")
if(NOT EXISTS "${OUTBOX_SYSROOT}/.outbox-sysroot")
  message(FATAL_ERROR
    "No ${OUTBOX_CROSS_ARCH} sysroot at ${OUTBOX_SYSROOT}. Build it with: "
    "bash toolchains/build-sysroot.sh ${OUTBOX_CROSS_ARCH} "
    "(or `make test-${OUTBOX_CROSS_ARCH}`), or set OUTBOX_SYSROOT.")
endif()

if(EXISTS "${OUTBOX_SYSROOT}/.outbox-warnings" AND NOT CMAKE_IN_TRY_COMPILE)
  file(READ "${OUTBOX_SYSROOT}/.outbox-warnings" _outbox_sysroot_warnings)
  message(WARNING "${OUTBOX_SYSROOT}: ${_outbox_sysroot_warnings}")
endif()

# --sysroot for compiling and linking; find_* look only inside it (and in
# roots the caller adds with -DCMAKE_FIND_ROOT_PATH, e.g. a staging prefix
# holding an installed edge-outbox), except for programs, which must run on
# the build host.
set(CMAKE_SYSROOT "${OUTBOX_SYSROOT}")
list(APPEND CMAKE_FIND_ROOT_PATH "${OUTBOX_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# FindCURL and friends consult pkg-config: make it read the target's .pc
# files and prefix their paths with the sysroot.
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_LIBDIR}
  "${OUTBOX_SYSROOT}/usr/lib/${OUTBOX_CROSS_TRIPLET}/pkgconfig:${OUTBOX_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${OUTBOX_SYSROOT}")

# proto/CMakeLists.txt runs protobuf::protoc: FindProtobuf makes that target
# from this variable, so the generator is the host's protoc (same 3.21.12 as
# the sysroot's libprotobuf; build-sysroot.sh checks).
find_program(Protobuf_PROTOC_EXECUTABLE protoc
  PATHS /usr/bin NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)

option(OUTBOX_FULLY_STATIC "Link fully static executables" OFF)
find_program(OUTBOX_QEMU ${OUTBOX_CROSS_QEMU} NO_CMAKE_FIND_ROOT_PATH)
if(NOT OUTBOX_QEMU)
  message(FATAL_ERROR "${OUTBOX_CROSS_QEMU} not found: apt-get install "
    "qemu-user-static (toolchains/build-sysroot.sh does)")
endif()
# Static and shared builds find different files for the same packages
# (libssl.a or libssl.so, our libcurl or Debian's), and CMake caches what it
# found: a build tree cannot switch between them.
if(OUTBOX_FULLY_STATIC)
  set(_outbox_link_mode static)
else()
  set(_outbox_link_mode shared)
endif()
if(DEFINED CACHE{OUTBOX_LINK_MODE} AND
   NOT OUTBOX_LINK_MODE STREQUAL _outbox_link_mode)
  message(FATAL_ERROR "${CMAKE_BINARY_DIR} was configured for ${OUTBOX_LINK_MODE} "
    "linking; OUTBOX_FULLY_STATIC now asks for ${_outbox_link_mode}. Configure "
    "it afresh: cmake --fresh ... (or delete the build directory).")
endif()
set(OUTBOX_LINK_MODE ${_outbox_link_mode} CACHE INTERNAL
  "static or shared, as first configured (see OUTBOX_FULLY_STATIC)")

if(OUTBOX_FULLY_STATIC)
  # Every library from its .a archive, every executable linked -static.
  # RocksDB's archive target is chosen by the project (OUTBOX_STATIC_ROCKSDB);
  # OUTBOX_ABSL_STATIC is read by the sysroot's patched Abseil package
  # (build-sysroot.sh). Two come from build-static-deps.sh instead: Debian's
  # libcurl.a needs libraries Debian ships only as shared objects (GSSAPI,
  # LDAP, RTMP...), so static executables link an HTTP-and-OpenSSL-only
  # libcurl compiled from Debian's curl source (its CURLConfig.cmake comes
  # first on the search path, and FindCURL prefers it); and cpp-httplib,
  # only a shared library in Debian, is compiled from its source package
  # (OUTBOX_HTTPLIB_INCLUDE_DIR and OUTBOX_HTTPLIB_SOURCE, read by
  # CMakeLists.txt).
  if(NOT OUTBOX_STATIC_DEPS)
    if(DEFINED ENV{OUTBOX_SYSROOT_BASE})
      set(OUTBOX_STATIC_DEPS "$ENV{OUTBOX_SYSROOT_BASE}/static-${OUTBOX_CROSS_ARCH}")
    else()
      set(OUTBOX_STATIC_DEPS "/opt/edge-outbox/static-${OUTBOX_CROSS_ARCH}")
    endif()
  endif()
  set(OUTBOX_STATIC_DEPS "${OUTBOX_STATIC_DEPS}" CACHE PATH
    "libcurl and cpp-httplib for static executables (build-static-deps.sh)")
  set(_outbox_static_hint "Run: bash toolchains/build-static-deps.sh "
    "${OUTBOX_CROSS_ARCH} (or make static-deps-${OUTBOX_CROSS_ARCH}), or "
    "point OUTBOX_STATIC_DEPS at such a tree.")
  if(NOT EXISTS "${OUTBOX_STATIC_DEPS}/.outbox-static")
    message(FATAL_ERROR "No static libcurl at ${OUTBOX_STATIC_DEPS} "
      "(OUTBOX_FULLY_STATIC=ON). " ${_outbox_static_hint})
  endif()
  # Built against this very sysroot? Else its curl may lag the sysroot's
  # (security fixes) or its OpenSSL headers may not match.
  file(SHA256 "${OUTBOX_SYSROOT}/.outbox-packages" _outbox_packages_hash)
  set(_outbox_built_against "")
  if(EXISTS "${OUTBOX_STATIC_DEPS}/.outbox-built-against")
    file(STRINGS "${OUTBOX_STATIC_DEPS}/.outbox-built-against"
      _outbox_built_against LIMIT_COUNT 1)
  endif()
  if(NOT _outbox_built_against STREQUAL _outbox_packages_hash)
    message(FATAL_ERROR "${OUTBOX_STATIC_DEPS} was not built against the "
      "sysroot ${OUTBOX_SYSROOT} as it is now. " ${_outbox_static_hint})
  endif()
  list(PREPEND CMAKE_FIND_ROOT_PATH "${OUTBOX_STATIC_DEPS}")
  set(OUTBOX_HTTPLIB_INCLUDE_DIR "${OUTBOX_STATIC_DEPS}/include")
  set(OUTBOX_HTTPLIB_SOURCE "${OUTBOX_STATIC_DEPS}/src/httplib.cc")
  set(CMAKE_PROJECT_INCLUDE ${CMAKE_CURRENT_LIST_DIR}/static-link.cmake)
  set(OUTBOX_STATIC_ROCKSDB ON CACHE BOOL "Link RocksDB's archive")
  set(OUTBOX_ABSL_STATIC ON)
  set(Protobuf_USE_STATIC_LIBS ON)
  set(OPENSSL_USE_STATIC_LIBS TRUE)
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
  set(CMAKE_CROSSCOMPILING_EMULATOR "${OUTBOX_QEMU}")
else()
  # ctest (and gtest_discover_tests at test time) run target binaries here;
  # -L makes the ELF interpreter and every library come from the sysroot.
  set(CMAKE_CROSSCOMPILING_EMULATOR "${OUTBOX_QEMU};-L;${OUTBOX_SYSROOT}")
endif()
