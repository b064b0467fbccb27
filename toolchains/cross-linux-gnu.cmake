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
#                       Default: static-<arch> beside the sysroot (where
#                       that script puts them).

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
if(OUTBOX_FULLY_STATIC)
  # Every library from its .a archive, every executable linked -static.
  # RocksDB's archive target is chosen by the project (OUTBOX_STATIC_ROCKSDB);
  # OUTBOX_ABSL_STATIC is read by the sysroot's patched Abseil package
  # (build-sysroot.sh). Two come from build-static-deps.sh instead: Debian's
  # libcurl.a needs libraries Debian ships only as shared objects (GSSAPI,
  # LDAP, RTMP...), so static executables link an HTTP-and-OpenSSL-only
  # libcurl compiled from Debian's curl source (its CURLConfig.cmake comes
  # first on the search path, and FindCURL prefers it); and cpp-httplib,
  # only a shared library in Debian, is used as the single header from its
  # source package (OUTBOX_HTTPLIB_INCLUDE_DIR, read by CMakeLists.txt).
  if(NOT OUTBOX_STATIC_DEPS)
    get_filename_component(_outbox_base "${OUTBOX_SYSROOT}" DIRECTORY)
    set(OUTBOX_STATIC_DEPS "${_outbox_base}/static-${OUTBOX_CROSS_ARCH}")
  endif()
  set(OUTBOX_STATIC_DEPS "${OUTBOX_STATIC_DEPS}" CACHE PATH
    "libcurl and cpp-httplib for static executables (build-static-deps.sh)")
  if(NOT EXISTS "${OUTBOX_STATIC_DEPS}/.outbox-static")
    message(FATAL_ERROR
      "No static libcurl at ${OUTBOX_STATIC_DEPS} (OUTBOX_FULLY_STATIC=ON). "
      "Build it with: bash toolchains/build-static-deps.sh "
      "${OUTBOX_CROSS_ARCH} (or `make test-${OUTBOX_CROSS_ARCH}`), or set "
      "OUTBOX_STATIC_DEPS.")
  endif()
  list(PREPEND CMAKE_FIND_ROOT_PATH "${OUTBOX_STATIC_DEPS}")
  set(OUTBOX_HTTPLIB_INCLUDE_DIR "${OUTBOX_STATIC_DEPS}/include")
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
