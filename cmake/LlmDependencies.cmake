# Real dependencies from the system (Debian packages), found with pkg-config.
# Nothing is vendored. Each becomes an IMPORTED target PkgConfig::<NAME>.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
# jansson: small, stable C JSON parser with no dependencies, packaged in Debian
# for years, with strict UTF-8 validation; used for tokenizer.json/config.json.
pkg_check_modules(JANSSON REQUIRED IMPORTED_TARGET jansson)
if(BUILD_TESTING OR NOT DEFINED BUILD_TESTING)
  pkg_check_modules(CRITERION IMPORTED_TARGET criterion)
endif()
pkg_check_modules(LIBEDIT IMPORTED_TARGET libedit)
find_library(LLM_LIBM m)
