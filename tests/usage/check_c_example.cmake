# The README's C block is code of examples/c/c_api_example.c, verbatim, so the
# C a user copies is C that CI compiles and runs (tests/c_api/).
file(READ ${README} readme)
string(REGEX MATCH "<!-- c-example:begin -->\n```c\n(.*)```\n<!-- c-example:end -->"
  block "${readme}")
if(NOT block)
  message(FATAL_ERROR "README.md has no c-example block")
endif()
set(code "${CMAKE_MATCH_1}")
file(READ ${EXAMPLE} example)
string(FIND "${example}" "${code}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md's c-example block is not in ${EXAMPLE}:\n${code}")
endif()
message("README's C block found in ${EXAMPLE}")
