# Run by `cmake --install` (see dist/CMakeLists.txt), where
# CMAKE_INSTALL_PREFIX is the prefix of this install and file(INSTALL) adds
# $DESTDIR. Installs:
#   <prefix>/lib/systemd/system/outbox-agent.service   (the unit)
#   <prefix>/lib/sysusers.d/outbox-agent.conf          (its user)
#   <sysconfdir>/outbox-agent/agent.textproto          (example config)
# <sysconfdir> is GNUInstallDirs' for this prefix: /etc for /usr,
# <prefix>/etc for /usr/local.

include(GNUInstallDirs)
GNUInstallDirs_get_absolute_install_dir(bindir CMAKE_INSTALL_BINDIR BINDIR)
GNUInstallDirs_get_absolute_install_dir(sysconfdir CMAKE_INSTALL_SYSCONFDIR
  SYSCONFDIR)

set(OUTBOX_AGENT ${bindir}/outbox-agent)
set(OUTBOX_ETC ${sysconfdir}/outbox-agent)
configure_file(${OUTBOX_DIST_SOURCE_DIR}/outbox-agent.service.in
  ${OUTBOX_DIST_BINARY_DIR}/install/outbox-agent.service @ONLY)
file(INSTALL ${OUTBOX_DIST_BINARY_DIR}/install/outbox-agent.service
  DESTINATION ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
file(INSTALL ${OUTBOX_DIST_SOURCE_DIR}/outbox-agent.sysusers.conf
  DESTINATION ${CMAKE_INSTALL_PREFIX}/lib/sysusers.d
  RENAME outbox-agent.conf)

# Never over a configuration already there: a reinstall or upgrade must not
# send a device's events to the example's URL. The directory is root-only
# writable and readable by all (the configuration holds no secrets; they sit
# beside it, chmod 600).
set(config $ENV{DESTDIR}${OUTBOX_ETC}/agent.textproto)
if(EXISTS ${config})
  message(STATUS "Kept: ${config} (not replaced by the example)")
else()
  file(INSTALL ${OUTBOX_DIST_SOURCE_DIR}/agent.textproto
    DESTINATION ${OUTBOX_ETC})
endif()
