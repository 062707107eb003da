# Spool's programs (the CLI and the benchmarks) allocate with jemalloc: the
# commit path and the pipeline runtime make many small, short-lived
# allocations, and glibc's malloc spent about a quarter of W4's CPU on them
# (docs/benchmarks.md). The libraries link no allocator: an embedding program
# chooses its own. Off under the sanitizers, which bring their own.
option(SPOOL_JEMALLOC "Link Spool's programs with jemalloc" ON)
if(SPOOL_JEMALLOC AND NOT SPOOL_SANITIZE AND NOT SPOOL_SANITIZE_THREAD AND NOT SPOOL_LIBFUZZER)
  pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET GLOBAL jemalloc)
endif()

function(spool_use_allocator target)
  if(TARGET PkgConfig::JEMALLOC)
    target_link_libraries(${target} PRIVATE PkgConfig::JEMALLOC)
  endif()
endfunction()
