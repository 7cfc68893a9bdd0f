# dashboard.cmake — the web dashboard (issue 7): web/* is embedded into loadmaster at build
# time (cmake/embed_assets.cmake writes one generated C source into the build directory,
# never committed) and served by master/api/dashboard.c. Included by CMakeLists.txt after the
# targets and tests are defined.

file(GLOB_RECURSE LC_WEB_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/web/*)
list(FILTER LC_WEB_FILES EXCLUDE REGEX "/\\.[^/]*$|~$") # as embed_assets.cmake skips them
set(LC_DASHBOARD_ASSETS_C ${CMAKE_BINARY_DIR}/generated/dashboard_assets.c)
add_custom_command(
  OUTPUT ${LC_DASHBOARD_ASSETS_C}
  COMMAND ${CMAKE_COMMAND} -DWEB_DIR=${CMAKE_SOURCE_DIR}/web -DOUT=${LC_DASHBOARD_ASSETS_C}
          -P ${CMAKE_SOURCE_DIR}/cmake/embed_assets.cmake
  DEPENDS ${LC_WEB_FILES} ${CMAKE_SOURCE_DIR}/cmake/embed_assets.cmake
  COMMENT "embedding web/ (the dashboard) into loadmaster"
  VERBATIM)
target_sources(lc_api PRIVATE ${LC_DASHBOARD_ASSETS_C})

# The browser test skips (77) when Chromium cannot start or npm cannot reach its registry.
if(TEST integration.test_dashboard)
  set_tests_properties(integration.test_dashboard PROPERTIES SKIP_RETURN_CODE 77)
endif()
