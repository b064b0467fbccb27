# Runs the README's usage example twice on a fresh store: the first run must
# commit, the second must be recognised as the same idempotent commit.
# Like the gtest suites, put the store under TEST_TMPDIR when it is set (the
# armhf test preset points it at tmpfs, see CMakePresets.json).
if(DEFINED ENV{TEST_TMPDIR})
  string(RANDOM LENGTH 8 suffix)
  set(DB "$ENV{TEST_TMPDIR}/usage-example-db-${suffix}")
endif()
file(REMOVE_RECURSE ${DB})
execute_process(COMMAND ${EMULATOR} ${EXAMPLE} ${DB} RESULT_VARIABLE rc1 OUTPUT_VARIABLE out1
  ERROR_VARIABLE err1)
execute_process(COMMAND ${EMULATOR} ${EXAMPLE} ${DB} RESULT_VARIABLE rc2 OUTPUT_VARIABLE out2
  ERROR_VARIABLE err2)
file(REMOVE_RECURSE ${DB})
message("first run:  ${out1}${err1}second run: ${out2}${err2}")
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "usage example failed")
endif()
if(out1 MATCHES "already committed" OR NOT out2 MATCHES "already committed")
  message(FATAL_ERROR "expected a commit, then a recognised repeat")
endif()
string(REGEX MATCH "event ([0-9a-f-]+)" _ "${out1}")
set(id1 ${CMAKE_MATCH_1})
string(REGEX MATCH "event ([0-9a-f-]+)" _ "${out2}")
if(NOT id1 STREQUAL CMAKE_MATCH_1)
  message(FATAL_ERROR "the repeat returned a different event id")
endif()
