# llm_add_library(<short-name>
#     SOURCES <files...>
#     LLM_DEPS <our short names...>        e.g. runtime kv
#     SYSTEM_DEPS <imported targets...>    e.g. PkgConfig::PCRE2
#     PC_REQUIRES <pkg-config names...>    for the generated .pc file
#     PC_LIBS <extra -l flags...>
#     INTERNAL_HEADERS <names...>)         e.g. error.h
#
# Creates the static library target llama-<name> (alias llama::<name>) with
# PUBLIC include/ and PRIVATE src/, installs it, and writes llama-<name>.pc.
# INTERNAL_HEADERS names headers of include/llama/ that our other libraries
# include (so they cannot live in src/) but that no public header needs:
# they are not installed.
# Enforces DESIGN.md's dependency rule at configure time. Every library links
# llama-common (status codes, shared types, the error facility), which links
# none of ours; it is not listed in LLM_DEPS.

# The dependency table (DESIGN.md, "Dependency rule"): what each library may
# link besides llama-common. Leaves link nothing else of ours.
set(LLM_ALLOWED_DEPS_common "")
set(LLM_ALLOWED_DEPS_gguf "")
set(LLM_ALLOWED_DEPS_kv "")
set(LLM_ALLOWED_DEPS_sampling "")
set(LLM_ALLOWED_DEPS_chat "")
set(LLM_ALLOWED_DEPS_runtime "")
set(LLM_ALLOWED_DEPS_grammar "")
set(LLM_ALLOWED_DEPS_tokenizer "gguf")
set(LLM_ALLOWED_DEPS_models "runtime;gguf")
set(LLM_ALLOWED_DEPS_engine "models;runtime;kv;tokenizer;chat;sampling;grammar;gguf")
set_property(GLOBAL PROPERTY LLM_LIBRARIES "")

function(llm_add_library name)
  cmake_parse_arguments(A "" "" "SOURCES;LLM_DEPS;SYSTEM_DEPS;PC_REQUIRES;PC_LIBS;INTERNAL_HEADERS" ${ARGN})
  if(NOT DEFINED LLM_ALLOWED_DEPS_${name})
    message(FATAL_ERROR "llm_add_library: '${name}' is not a library of DESIGN.md")
  endif()
  foreach(dep IN LISTS A_LLM_DEPS)
    if(NOT dep IN_LIST LLM_ALLOWED_DEPS_${name})
      message(FATAL_ERROR "Dependency rule violated: llama-${name} may not link llama-${dep} "
                          "(allowed: '${LLM_ALLOWED_DEPS_${name}}'; see DESIGN.md)")
    endif()
  endforeach()

  set(target llama-${name})
  add_library(${target} STATIC ${A_SOURCES})
  add_library(llama::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} C_VISIBILITY_PRESET hidden)
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  if(NOT name STREQUAL "common")
    target_link_libraries(${target} PUBLIC llama-common)
  endif()
  foreach(dep IN LISTS A_LLM_DEPS)
    target_link_libraries(${target} PUBLIC llama-${dep})
  endforeach()
  # Static libraries: system deps must reach the final link, so they are PUBLIC.
  target_link_libraries(${target} PUBLIC ${A_SYSTEM_DEPS})
  llm_target_warnings(${target})

  install(TARGETS ${target} EXPORT llamaTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(_skip "")
  foreach(h IN LISTS A_INTERNAL_HEADERS)
    list(APPEND _skip PATTERN ${h} EXCLUDE)
  endforeach()
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} ${_skip})

  # pkg-config: our own deps first, then system ones.
  set(_req "")
  if(NOT name STREQUAL "common")
    list(APPEND _req llama-common)
  endif()
  foreach(dep IN LISTS A_LLM_DEPS)
    list(APPEND _req llama-${dep})
  endforeach()
  list(APPEND _req ${A_PC_REQUIRES})
  string(REPLACE ";" ", " LLM_PC_REQUIRES "${_req}")
  string(REPLACE ";" " " LLM_PC_LIBS "${A_PC_LIBS}")
  set(LLM_PC_NAME ${target})
  # ${pcfiledir} is <prefix>/<libdir>/pkgconfig: climb back to <prefix>.
  string(REGEX REPLACE "[^/]+" ".." LLM_PC_UP "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/llama-lib.pc.in
                 ${PROJECT_BINARY_DIR}/pkgconfig/${target}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${target}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  set_property(GLOBAL APPEND PROPERTY LLM_LIBRARIES ${name})
endfunction()

# llm_add_app(<binary-name> SOURCES ... LIBS ...): an installed program in bin/.
function(llm_add_app name)
  cmake_parse_arguments(A "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE ${A_LIBS})
  llm_target_warnings(${name})
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()
