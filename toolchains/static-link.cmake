# Included after project() when OUTBOX_FULLY_STATIC is ON (the cross
# toolchain files set CMAKE_PROJECT_INCLUDE to this file). CMake's generic
# platform setup resets the library suffixes after the toolchain file ran,
# so the "archives only" choice has to be made here, before find_package().
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(ZLIB_USE_STATIC_LIBS ON)
