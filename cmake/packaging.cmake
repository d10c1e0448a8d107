# install(EXPORT) + package config so that find_package(tunekit) works from an install prefix.
include(CMakePackageConfigHelpers)

install(TARGETS tunekit EXPORT tunekitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET tunekit_cli)
  install(TARGETS tunekit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # The read-only system tuning database, created empty by the program just built (an existing
  # one, with shipped entries, is kept).
  install(CODE "
    set(_db \"\$ENV{DESTDIR}${CMAKE_INSTALL_FULL_DATADIR}/tunekit/tunekit.db\")
    if(NOT EXISTS \"\${_db}\")
      file(MAKE_DIRECTORY \"\$ENV{DESTDIR}${CMAKE_INSTALL_FULL_DATADIR}/tunekit\")
      execute_process(COMMAND \"$<TARGET_FILE:tunekit_cli>\" db prune --db \"\${_db}\"
        RESULT_VARIABLE _rc OUTPUT_QUIET)
      if(NOT _rc EQUAL 0)
        message(WARNING \"tunekit: could not create the system database \${_db}\")
      endif()
    endif()")
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tunekit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT tunekitTargets NAMESPACE tunekit::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tunekit)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tunekitConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tunekitConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tunekit)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tunekitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tunekitConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/tunekitConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tunekit)
