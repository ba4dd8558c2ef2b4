# MPI_Comm_create with disjoint groups of equal size passed by different
# ranks, many rounds (it mixed the groups' members and hung: issue 20).
loom_mpi_program(comm_create_disjoint SOURCES comm_create_disjoint.c)
if(LOOM_SANITIZE)
  expect(comm_create_disjoint_8 --out "comm_create_disjoint: 50 rounds on 8 ranks ok" -- ${RUN} -n 8 ${MPIBIN}/comm_create_disjoint 50)
else()
  foreach(n 3 8 64)
    expect(comm_create_disjoint_${n} --out "comm_create_disjoint: 300 rounds on ${n} ranks ok" -- ${RUN} -n ${n} ${MPIBIN}/comm_create_disjoint 300)
  endforeach()
  expect(comm_create_disjoint_one_worker --out "comm_create_disjoint: 300 rounds on 16 ranks ok" -- ${RUN} --workers 1 -n 16 ${MPIBIN}/comm_create_disjoint 300)
endif()
