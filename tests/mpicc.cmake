# mpicc: configure probes (autoconf, CMake) see exactly what Loom has, and a
# program that calls a missing function fails to link, naming it.
add_test(NAME mpicc_probes COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/launcher/probe_test.sh
         ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(mpicc_probes PROPERTIES TIMEOUT ${LOOM_TEST_TIMEOUT} PASS_REGULAR_EXPRESSION "probe_test: ok")
