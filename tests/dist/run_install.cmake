# `cmake --install` of the build into DESTDIR=<WORK>/root, with the prefix
# the build was configured with (how a package is built), then checks that
# the binaries, the systemd unit (naming the installed binary and
# configuration), its sysusers file and the example configuration land
# there, and that installing again keeps a configuration edited meanwhile.
#   -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK=... -DPREFIX=... -DBINDIR=...
#   -DSYSCONFDIR=...   (the last three as configured: CMAKE_INSTALL_PREFIX,
#                       CMAKE_INSTALL_FULL_BINDIR, CMAKE_INSTALL_FULL_SYSCONFDIR)

function(install_build)
  set(ENV{DESTDIR} ${WORK}/root)
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

function(expect_file path)
  if(NOT EXISTS ${WORK}/root${path} OR IS_DIRECTORY ${WORK}/root${path})
    message(FATAL_ERROR "not installed: DESTDIR${path}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
install_build()

set(unit ${PREFIX}/lib/systemd/system/outbox-agent.service)
set(config ${SYSCONFDIR}/outbox-agent/agent.textproto)
foreach(path ${BINDIR}/outbox-agent ${BINDIR}/outboxctl ${unit}
    ${PREFIX}/lib/sysusers.d/outbox-agent.conf ${config})
  expect_file(${path})
endforeach()

# The unit runs the installed binary on the installed configuration.
file(READ ${WORK}/root${unit} text)
set(exec "ExecStart=${BINDIR}/outbox-agent --db %S/outbox-agent/store --config ${config}\n")
string(FIND "${text}" "\n${exec}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${unit} lacks the line\n${exec}in:\n${text}")
endif()
string(FIND "${text}"
  "\nLoadCredential=backend.whsec:${SYSCONFDIR}/outbox-agent/backend.whsec\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${unit} does not load ${SYSCONFDIR}/outbox-agent/backend.whsec")
endif()

file(READ ${WORK}/root${config} installed)
file(READ ${SOURCE_DIR}/dist/agent.textproto example)
if(NOT installed STREQUAL example)
  message(FATAL_ERROR "${config} is not dist/agent.textproto")
endif()

# A device's own configuration survives a reinstall.
file(WRITE ${WORK}/root${config} "# this device's configuration\n")
install_build()
file(READ ${WORK}/root${config} after)
if(NOT after STREQUAL "# this device's configuration\n")
  message(FATAL_ERROR "reinstalling replaced the edited ${config}")
endif()
file(REMOVE_RECURSE ${WORK})
message("installed under DESTDIR${PREFIX}: outbox-agent, outboxctl, "
  "${unit}, its sysusers file, ${config}; an edited config was kept")
