# package.cmake — install rules (binaries, systemd units, examples, /etc templates)
# and the Debian package built by CPack; included from CMakeLists.txt.

# ---- Installation and the Debian package (make -f Makefile.ci package) ----
# The package is configured with CMAKE_INSTALL_PREFIX=/usr, so GNUInstallDirs puts the
# configuration in /etc; the units' paths are rewritten when configuring to the binaries' and
# the configuration's real directories (nothing changes for /usr), so /usr/local installs work.
include(GNUInstallDirs)
set(LC_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING "systemd units, relative to the prefix")
set(LC_SYSUSERS_DIR "lib/sysusers.d" CACHE STRING "sysusers.d files, relative to the prefix")
set(LC_DOC_DIR ${CMAKE_INSTALL_DATADIR}/doc/loadcluster)

install(TARGETS loadmaster loadworker loadctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(LC_UNITS loadmaster.service loadworker.service loadworker@.service)
foreach(unit ${LC_UNITS})
  set(in ${CMAKE_SOURCE_DIR}/deploy/systemd/${unit})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${in})
  file(READ ${in} text)
  string(REPLACE "=/usr/bin/" "=${CMAKE_INSTALL_FULL_BINDIR}/" text "${text}")
  string(REPLACE "/etc/" "${CMAKE_INSTALL_FULL_SYSCONFDIR}/" text "${text}")
  file(WRITE ${CMAKE_BINARY_DIR}/systemd/${unit} "${text}")
  install(FILES ${CMAKE_BINARY_DIR}/systemd/${unit} DESTINATION ${LC_SYSTEMD_UNIT_DIR})
endforeach()
install(FILES deploy/systemd/loadcluster.sysusers DESTINATION ${LC_SYSUSERS_DIR}
        RENAME loadcluster.conf)
install(FILES README.md DESTINATION ${LC_DOC_DIR})
install(FILES deploy/config/nodes.conf.example deploy/config/loadmaster.default
        deploy/config/loadworker.default deploy/config/loadworker-instance.default
        deploy/examples/demo.json DESTINATION ${LC_DOC_DIR}/examples)
# /etc: the two environment files the units read, all commented out (the units' defaults
# then apply), shipped as dpkg conffiles so that upgrades keep what the admin changed.
# nodes.conf, join.secret and admin tokens are site secrets and addresses: never shipped;
# /etc/loadcluster is created empty for them and the examples show what goes there.
install(FILES deploy/config/loadmaster.default DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default
        RENAME loadmaster)
install(FILES deploy/config/loadworker.default DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default
        RENAME loadworker)
install(DIRECTORY DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/loadcluster)

file(WRITE ${CMAKE_BINARY_DIR}/deb/conffiles
  "${CMAKE_INSTALL_FULL_SYSCONFDIR}/default/loadmaster\n${CMAKE_INSTALL_FULL_SYSCONFDIR}/default/loadworker\n")

set(CPACK_PACKAGE_NAME loadcluster)
set(CPACK_PACKAGE_VENDOR loadcluster)
set(CPACK_PACKAGE_CONTACT "loadcluster maintainers <loadcluster@localhost>" CACHE STRING
    "Maintainer field of the package")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "distributed HTTP load generator: masters (Raft) and workers")
set(CPACK_PACKAGE_DESCRIPTION "loadmaster keeps the cluster's runs in a Raft-replicated SQLite \
database; loadworker generates HTTP load with one event loop per core; loadctl is the command-line \
client. systemd units are included but neither enabled nor started.")
set(CPACK_STRIP_FILES ON)
# Absolute destinations (/etc) must land in the staging tree, not on the build machine.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The runtime libraries (libuv1, libprotobuf-c1, libraft2 — Debian 12 has no libraft0 —,
# libssl3, libsqlite3-0, libjansson4, libsystemd0, libc6) come from dpkg-shlibdeps, with the
# versions the binaries really need; the maintainer scripts need adduser or systemd-sysusers.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser | systemd")
# postinst creates the loadcluster user and starts nothing; prerm stops the daemons on removal.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/deb/conffiles
    ${CMAKE_SOURCE_DIR}/deploy/deb/postinst ${CMAKE_SOURCE_DIR}/deploy/deb/prerm
    ${CMAKE_SOURCE_DIR}/deploy/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_GENERATOR DEB)
include(CPack)
