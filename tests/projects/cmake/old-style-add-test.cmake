# WORKAROUND(crossfiles): CMake (3.25 here) prefixes CMAKE_CROSSCOMPILING_EMULATOR only to
# tests declared with the NAME signature, add_test(NAME n COMMAND target ...). The old
# signature, add_test(n exe ...), which zlib uses, is written to CTestTestfile.cmake as it is,
# and ctest runs the target's program directly on the build machine ("Exec format error"
# without a binfmt_misc handler). Given to CMake as -DCMAKE_PROJECT_INCLUDE=<this file>, it
# turns the old signature into the new one, so a COMMAND naming an executable target runs
# under the emulator; a COMMAND that names no target runs as before. Proposed for
# share/crossroot/toolchain.cmake. Limits: arguments pass through ${ARGN}, so an empty
# argument or one holding ';' is not kept as it was (none of the projects here has one).
get_property(crossroot_add_test_defined GLOBAL PROPERTY CROSSROOT_OLD_STYLE_ADD_TEST)
if(NOT crossroot_add_test_defined)
  set_property(GLOBAL PROPERTY CROSSROOT_OLD_STYLE_ADD_TEST TRUE)
  function(add_test name)
    if("x${name}" STREQUAL "xNAME")   # safe under CMP0054 OLD (zlib asks for CMake 2.4)
      _add_test(${ARGV})
    else()
      _add_test(NAME "${name}" COMMAND ${ARGN})
    endif()
  endfunction()
endif()
