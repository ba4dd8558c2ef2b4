# Reduction operations (src/coll/op.c, src/mpi/op.c): engine unit tests
# (linked against loom_coll) and MPI programs at 1 and 7 ranks.
if(TARGET loom_coll)
  file(GLOB LOOM_OP_UNIT_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/coll/test_op*.c)
  foreach(src ${LOOM_OP_UNIT_TESTS})
    get_filename_component(name ${src} NAME_WE)
    # tests/unit may register the coll layer's tests itself.
    if(NOT TARGET ${name})
      add_executable(${name} ${src})
      target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
      target_link_libraries(${name} PRIVATE loom_coll)
      set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/unit)
      add_test(NAME ${name} COMMAND ${name})
      set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 90 SKIP_RETURN_CODE 77)
    endif()
  endforeach()
endif()

foreach(p op_local op_errors)
  loom_mpi_program(${p} SOURCES ${p}.c)
  foreach(n 1 7)
    expect(${p}_${n} --out "^${p}: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/${p})
  endforeach()
endforeach()
# Under the default handler an op that does not fit the type ends the job.
expect(op_errors_fatal --status 10 --err "MPI_Reduce_local: MPI_SUM is not defined for MPI_2INT \\(MPI_ERR_OP\\)"
       -- ${RUN} -n 3 ${MPIBIN}/op_errors fatal)
