# install(EXPORT) + package config so that find_package(tunekit) works from an install prefix.
include(CMakePackageConfigHelpers)

install(TARGETS tunekit EXPORT tunekitTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET tunekit_cli)
  install(TARGETS tunekit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
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
