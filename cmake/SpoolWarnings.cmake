# Strict warnings, as errors, for Spool's own targets only.
function(spool_strict_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Werror
    -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
    -Wunused -Woverloaded-virtual -Wconversion -Wsign-conversion
    -Wnull-dereference -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
  # GCC 12 reports -Wrestrict on plain std::string concatenation at -O3
  # (GCC bug 105329, fixed in 13): a false positive, so not an error there.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-error=restrict -Wno-restrict)
  endif()
  # The sanitizer builds (-Og, instrumented) trip the flow-based
  # -Wnull-dereference inside CLI11's and the standard library's inlined
  # code; the Release build keeps it.
  if(SPOOL_SANITIZE OR SPOOL_SANITIZE_THREAD)
    target_compile_options(${target} PRIVATE -Wno-null-dereference)
  endif()
endfunction()
