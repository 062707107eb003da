# Installs the libraries, headers, CMake package and pkg-config file, so an
# embedder writes find_package(Spool CONFIG) and links spool::spool.
include(CMakePackageConfigHelpers)

add_library(spool_all INTERFACE)
add_library(spool::spool ALIAS spool_all)
set_target_properties(spool_all PROPERTIES EXPORT_NAME spool)
target_link_libraries(spool_all INTERFACE spool_sql spool_rewind spool_stream spool_storage spool_txnlog)

install(TARGETS spool_txnlog spool_storage spool_stream spool_rewind spool_sql spool_all
  EXPORT SpoolTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(SPOOL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Spool)
install(EXPORT SpoolTargets NAMESPACE spool:: DESTINATION ${SPOOL_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/SpoolConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/SpoolConfig.cmake INSTALL_DESTINATION ${SPOOL_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/SpoolConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/SpoolConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/SpoolConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/SpoolFindDeps.cmake
  DESTINATION ${SPOOL_CMAKE_DIR})

# Relocatable: the prefix is found from where the .pc file is installed.
file(RELATIVE_PATH SPOOL_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${CMAKE_CURRENT_LIST_DIR}/spool.pc.in ${CMAKE_CURRENT_BINARY_DIR}/spool.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/spool.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
