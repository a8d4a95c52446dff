# llm_check_private_use([ROOT <dir>] [LIBRARIES <names...>])
#
# Fails the configure step when a target uses another library's private files:
#   - a SOURCES entry under <ROOT>/libs/<X>/src/ where X is not the target's
#     own library, or
#   - an include directory (INCLUDE_DIRECTORIES) under <ROOT>/libs/<X>/src for
#     such an X, or
#   - any libs/<X>/src in a target's INTERFACE_INCLUDE_DIRECTORIES (a private
#     directory must never propagate to consumers, not even a library's own).
#
# A target's own library: its LLM_OWNER property when set; else the X of
# libs/X/, tests/X/ or bench/X/ holding its CMakeLists.txt when X is one of
# LIBRARIES (white-box tests of a library may include its src/); tests/cuda is
# the runtime's. Apps, fuzz harnesses and other tests own no library.
#
# Run once at the end of the top-level CMakeLists.txt, over every target of
# every directory. ROOT defaults to PROJECT_SOURCE_DIR, LIBRARIES to the
# libraries made by llm_add_library (global property LLM_LIBRARIES).

function(_llm_collect_targets dir out)
  get_property(_t DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(s IN LISTS _subs)
    _llm_collect_targets(${s} _st)
    list(APPEND _t ${_st})
  endforeach()
  set(${out} ${_t} PARENT_SCOPE)
endfunction()

function(llm_check_private_use)
  cmake_parse_arguments(A "" "ROOT" "LIBRARIES" ${ARGN})
  if(NOT A_ROOT)
    set(A_ROOT ${PROJECT_SOURCE_DIR})
  endif()
  if(NOT A_LIBRARIES)
    get_property(A_LIBRARIES GLOBAL PROPERTY LLM_LIBRARIES)
  endif()
  # ROOT as a regular expression (a path may hold + . and the like).
  string(REGEX REPLACE "([][+.*()^$?|\\])" "\\\\\\1" _root_re "${A_ROOT}")
  _llm_collect_targets(${A_ROOT} _targets)
  set(_errors "")
  foreach(t IN LISTS _targets)
    get_target_property(_type ${t} TYPE)
    get_target_property(_dir ${t} SOURCE_DIR)
    file(RELATIVE_PATH _rel ${A_ROOT} ${_dir})
    # The target's own library.
    get_target_property(_owner ${t} LLM_OWNER)
    if(NOT _owner)
      set(_owner "")
      if(_rel MATCHES "^(libs|tests|bench)/([^/]+)")
        if(CMAKE_MATCH_2 IN_LIST A_LIBRARIES)
          set(_owner ${CMAKE_MATCH_2})
        elseif(_rel MATCHES "^tests/cuda")
          set(_owner runtime)
        endif()
      endif()
    endif()
    # Sources.
    if(NOT _type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(_srcs ${t} SOURCES)
      foreach(s IN LISTS _srcs)
        if(s MATCHES "^\\$<")
          continue()
        endif()
        get_filename_component(_abs ${s} ABSOLUTE BASE_DIR ${_dir})
        file(RELATIVE_PATH _srel ${A_ROOT} ${_abs})
        if(_srel MATCHES "^libs/([^/]+)/src/" AND NOT CMAKE_MATCH_1 STREQUAL _owner)
          list(APPEND _errors "${t} (${_rel}) compiles ${_srel}, a private file of llama-${CMAKE_MATCH_1}: link the library and use its public header")
        endif()
      endforeach()
      get_target_property(_incs ${t} INCLUDE_DIRECTORIES)
      foreach(i IN LISTS _incs)
        if(i MATCHES "${_root_re}/libs/([^/>]+)/src" AND NOT CMAKE_MATCH_1 STREQUAL _owner)
          list(APPEND _errors "${t} (${_rel}) has ${i} on its include path, private to llama-${CMAKE_MATCH_1}")
        endif()
      endforeach()
    endif()
    get_target_property(_iincs ${t} INTERFACE_INCLUDE_DIRECTORIES)
    foreach(i IN LISTS _iincs)
      if(i MATCHES "${_root_re}/libs/([^/>]+)/src")
        list(APPEND _errors "${t} (${_rel}) exports ${i} to its consumers, private to llama-${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endforeach()
  if(_errors)
    list(JOIN _errors "\n  " _msg)
    message(FATAL_ERROR "Private files used across libraries (see cmake/LlmPrivacy.cmake):\n  ${_msg}")
  endif()
endfunction()
