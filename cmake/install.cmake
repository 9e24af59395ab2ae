# Installation: headers, the shared and static library, a CMake package config
# (find_package(hop) gives hop::hop and hop::hop_static) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(TARGETS hop hop_static EXPORT hopTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT hopTargets NAMESPACE hop:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hop)

configure_package_config_file(cmake/hopConfig.cmake.in
  ${PROJECT_BINARY_DIR}/hopConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hop)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hopConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hopConfig.cmake ${PROJECT_BINARY_DIR}/hopConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hop)

# The .pc file is relocatable: prefix is found from its own location.
file(RELATIVE_PATH HOP_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(cmake/hop.pc.in ${PROJECT_BINARY_DIR}/hop.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hop.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
