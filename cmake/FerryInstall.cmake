# cmake --install: headers, libraries, programs and a CMake package so that
# users write find_package(ferry CONFIG) and link ferry::ferry.
include(CMakePackageConfigHelpers)

install(EXPORT ferryTargets NAMESPACE ferry:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ferry)
configure_package_config_file(cmake/ferryConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/ferryConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ferry)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ferryConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ferryConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/ferryConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ferry)
