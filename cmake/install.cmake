# `cmake --install build --prefix P`: the kiln CLI (P/bin), the runtime as a shared library with
# its public header (P/lib, P/include/kiln/kiln.h), a CMake package (find_package(kiln) gives
# the imported target kiln::runtime) and a pkg-config file (kiln.pc). Both package files locate
# the prefix from their own place, so an installed tree can be moved. The Python package is
# installed too where it is built (python/CMakeLists.txt).
include(CMakePackageConfigHelpers)

install(TARGETS kiln RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS kiln_runtime_shared EXPORT kilnTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/kiln/kiln.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln)

set(KILN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kilnConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/package/kilnConfig.cmake
                              INSTALL_DESTINATION ${KILN_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/kilnConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/kilnConfig.cmake
              ${CMAKE_BINARY_DIR}/package/kilnConfigVersion.cmake
        DESTINATION ${KILN_CMAKE_DIR})

# kiln.pc: the prefix is the .pc file's folder climbed back up ${pcfiledir}/../.. (as many
# levels as CMAKE_INSTALL_LIBDIR has, plus pkgconfig/).
file(RELATIVE_PATH KILN_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" KILN_PC_TO_PREFIX "${KILN_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/kiln.pc.in ${CMAKE_BINARY_DIR}/package/kiln.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/kiln.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
