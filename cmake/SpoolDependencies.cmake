# Third-party libraries, found the same way here and in SpoolConfig.cmake.
include(SpoolFindDeps)
