# spool_module(NAME SOURCES...): one module folder = one library
# `spool_<NAME>`, aliased `spool::<NAME>`, with its public headers in
# include/ (installed) and its internals private. Dependencies are declared
# by the caller with target_link_libraries.
function(spool_module name)
  add_library(spool_${name} ${ARGN})
  add_library(spool::${name} ALIAS spool_${name})
  set_target_properties(spool_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME spool_${name})
  target_include_directories(spool_${name}
    PUBLIC
      $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_features(spool_${name} PUBLIC cxx_std_20)
  spool_strict_warnings(spool_${name})
  install(DIRECTORY include/spool DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# spool_flatbuffers(TARGET SCHEMA.fbs): generates SCHEMA_generated.h with
# flatc at build time into the target's private include path.
function(spool_flatbuffers target schema)
  get_filename_component(stem ${schema} NAME_WE)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  set(header ${out_dir}/${stem}_generated.h)
  add_custom_command(
    OUTPUT ${header}
    COMMAND flatbuffers::flatc --cpp -o ${out_dir} ${CMAKE_CURRENT_SOURCE_DIR}/${schema}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${schema}
    COMMENT "flatc: ${schema}"
    VERBATIM)
  target_sources(${target} PRIVATE ${header})
  target_include_directories(${target} PRIVATE ${out_dir})
endfunction()

# spool_test_program(TARGET...): programs among those the target
# spool_test_programs builds: all that `ctest -L 'unit|crash'` runs, which
# is what the sanitizer builds make (scripts/test.sh).
function(spool_test_program)
  set_property(GLOBAL APPEND PROPERTY SPOOL_TEST_PROGRAMS ${ARGN})
endfunction()

# spool_gtests(TARGET unit|crash|e2e [gtest_discover_tests options...]):
# the GoogleTest program's tests, labelled (a crash test may take 15
# minutes). Unit and crash programs are among the test programs the
# sanitizer builds make; crash and e2e ones (an e2e program drives the spool
# binary, which the sanitizer builds do not make) are among what CI's
# Release run makes.
function(spool_gtests target label)
  set(timeout "")
  if(label STREQUAL "crash")
    set(timeout TIMEOUT 900)
  endif()
  if(label STREQUAL "crash" OR label STREQUAL "e2e")
    set_property(GLOBAL APPEND PROPERTY SPOOL_RELEASE_TEST_PROGRAMS ${target})
  endif()
  gtest_discover_tests(${target} ${ARGN} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS ${label} ${timeout})
  if(NOT label STREQUAL "e2e")
    spool_test_program(${target})
  endif()
endfunction()

# spool_concurrency_tests(TARGET PROGRAM SOURCES...): a program made of
# those of PROGRAM's test sources that hold its concurrency tests, built
# and linked as PROGRAM is, and only when asked for. CI's ThreadSanitizer
# stage (scripts/test.sh) builds these instead of whole test programs: it
# runs the tests that use threads alone.
function(spool_concurrency_tests target program)
  add_executable(${target} EXCLUDE_FROM_ALL ${ARGN})
  get_target_property(libraries ${program} LINK_LIBRARIES)
  get_target_property(directories ${program} INCLUDE_DIRECTORIES)
  target_link_libraries(${target} PRIVATE ${libraries})
  if(directories)
    target_include_directories(${target} PRIVATE ${directories})
  endif()
  spool_strict_warnings(${target})
endfunction()
