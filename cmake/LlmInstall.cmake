# Exported CMake package: find_package(llama CONFIG) gives llama::<lib> targets.
include(CMakePackageConfigHelpers)
set(LLM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/llama)
install(EXPORT llamaTargets NAMESPACE llama:: DESTINATION ${LLM_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/llamaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/llamaConfig.cmake INSTALL_DESTINATION ${LLM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/llamaConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/llamaConfig.cmake
              ${PROJECT_BINARY_DIR}/llamaConfigVersion.cmake
        DESTINATION ${LLM_CMAKE_DIR})
