# Names real codes use (issue 17, point 4): Fortran-named and C++ types, the
# MPI-1 names, handle conversions, Alloc_mem, external32; and the list of
# what mpi.h lacks (docs/mpi-coverage.md) checked against the .def files.
# Each program runs at 1, 4 and 64 ranks; sanitizer builds run only 4.
set(LOOM_NAMES_PROGRAMS names_types names_legacy names_conv names_external names_mem)
set(LOOM_NAMES_RANKS 1 4 64)
if(LOOM_SANITIZE)
  set(LOOM_NAMES_RANKS 4)
endif()
foreach(p ${LOOM_NAMES_PROGRAMS})
  loom_mpi_program(${p} SOURCES ${p}.c)
  foreach(n ${LOOM_NAMES_RANKS})
    expect(${p}_${n} --out "^${p}: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/${p})
  endforeach()
endforeach()
# The default handler ends the job with the class (MPI_ERR_NO_MEM is 39).
expect(names_mem_fatal --status 39 --err "MPI_Alloc_mem: cannot allocate .* \\(MPI_ERR_NO_MEM\\)"
       -- ${RUN} -n 4 ${MPIBIN}/names_mem fatal)
add_test(NAME names_coverage COMMAND ${PROJECT_SOURCE_DIR}/tools/mpi-coverage --check)
set_tests_properties(names_coverage PROPERTIES TIMEOUT 60 LABELS mpi)
