# Installs the build into a scratch prefix, then builds tests/consumer
# against it twice, through find_package(EdgeOutbox) and through pkg-config,
# and runs both programs (under EMULATOR when cross-compiling).
#   -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK=... [-DTOOLCHAIN=...]
#   [-DSYSROOT=...] [-DFULLY_STATIC=ON] [-DSTATIC_DEPS=...] [-DEMULATOR=...]
#   [-DCXX=...]
# The consumer is configured with the build's own toolchain settings. A
# fully static build is consumed fully static too; its EMULATOR then has no
# sysroot, so the program must be static.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message("${out}")
endfunction()

file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/install)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

set(configure_args -S ${SOURCE_DIR}/tests/consumer -B ${WORK}/cmake-build
  -G Ninja -DCMAKE_PREFIX_PATH=${prefix})
if(TOOLCHAIN)
  list(APPEND configure_args -DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN}
    -DCMAKE_FIND_ROOT_PATH=${prefix})
  if(SYSROOT)
    list(APPEND configure_args -DOUTBOX_SYSROOT=${SYSROOT})
  endif()
  if(FULLY_STATIC)
    list(APPEND configure_args -DOUTBOX_FULLY_STATIC=ON
      -DOUTBOX_STATIC_DEPS=${STATIC_DEPS})
  endif()
endif()
run(${CMAKE_COMMAND} ${configure_args})
run(${CMAKE_COMMAND} --build ${WORK}/cmake-build)
# The stores go under TEST_TMPDIR when it is set (the armhf test preset points
# it at tmpfs, see CMakePresets.json), else beside the build.
set(db_dir ${WORK})
if(DEFINED ENV{TEST_TMPDIR})
  string(RANDOM LENGTH 8 suffix)
  set(db_dir "$ENV{TEST_TMPDIR}/outbox-consumer-${suffix}")
endif()
run(${EMULATOR} ${WORK}/cmake-build/consumer ${db_dir}/db-cmake)

# The same program through pkg-config (native builds; a cross pkg-config
# setup is the firmware build system's business).
if(NOT TOOLCHAIN)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
  execute_process(COMMAND pkg-config --cflags --libs edge-outbox
    RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config edge-outbox failed: ${err}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${CXX} -std=c++17 ${SOURCE_DIR}/tests/consumer/consumer.cc -o
    ${WORK}/consumer-pkgconfig ${flags})
  run(${WORK}/consumer-pkgconfig ${db_dir}/db-pkgconfig)
endif()
if(NOT db_dir STREQUAL WORK)
  file(REMOVE_RECURSE ${db_dir})
endif()
