# Datatype engine: unit tests (linked against loom_datatype) and MPI programs.
add_executable(test_dt_engine ${CMAKE_CURRENT_SOURCE_DIR}/unit/datatype/test_dt_engine.c)
target_link_libraries(test_dt_engine PRIVATE loom_datatype)
add_test(NAME dt_engine COMMAND test_dt_engine)
set_tests_properties(dt_engine PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)

foreach(p dt_types dt_contents dt_errors)
  loom_mpi_program(${p} SOURCES ${p}.c)
  # The programs share a header that loom_mpi_program does not know about.
  add_custom_command(OUTPUT ${MPIBIN}/${p} APPEND DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/mpi/dt_common.h)
endforeach()
foreach(n 1 7 64)
  expect(dt_types_${n} --out "^dt_types: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/dt_types)
  expect(dt_contents_${n} --out "^dt_contents: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/dt_contents)
  expect(dt_errors_${n} --out "^dt_errors: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/dt_errors)
endforeach()
# Under the default handler a bad argument ends the job with its class.
expect(dt_errors_fatal --status 2 --err "MPI_Type_vector: count -1 is negative \\(MPI_ERR_COUNT\\)"
       -- ${RUN} -n 3 ${MPIBIN}/dt_errors fatal)
