# MPI-4.1 pieces (docs/mpi4.md): generalized requests, status setters,
# MPI_Request_get_status_all/any/some.
loom_mpi_program(greq SOURCES greq.c)
set(counts 1 2 7)
if(NOT LOOM_SANITIZE)
  list(APPEND counts 64)
endif()
foreach(n ${counts})
  expect(greq_${n} --out "^greq: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/greq)
endforeach()
expect(greq_7_one_worker --out "^greq: 7 ranks ok$" -- ${RUN} --workers 1 -n 7 ${MPIBIN}/greq)
