# Shared by the build and by the installed SpoolConfig.cmake: defines the
# imported targets Spool's libraries link against.
find_package(PkgConfig REQUIRED)
if(NOT TARGET PkgConfig::LMDB)
  pkg_check_modules(LMDB REQUIRED IMPORTED_TARGET GLOBAL lmdb)
endif()
if(NOT TARGET PkgConfig::XXHASH)
  pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET GLOBAL libxxhash)
endif()
if(NOT TARGET PkgConfig::ZSTD)
  pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET GLOBAL libzstd)
endif()
find_package(FlatBuffers REQUIRED CONFIG)
find_package(nlohmann_json CONFIG REQUIRED)
