# Communicators, groups, attributes, info, error handlers (src/comm/).
loom_mpi_program(comm_fatal SOURCES comm_fatal.c)
foreach(t comm_basic comm_concurrent comm_group comm_attr comm_info comm_errors comm_idup)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/mpi/${t}.c)
    loom_mpi_program(${t} SOURCES ${t}.c)
    foreach(n 1 2 7 64)
      expect(${t}_${n} --out "${t}: ${n} ranks ok" -- ${RUN} -n ${n} ${MPIBIN}/${t})
    endforeach()
  endif()
endforeach()
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/mpi/comm_concurrent.c)
  expect(comm_concurrent_256_two_workers --out "comm_concurrent: 256 ranks ok"
         -- ${RUN} --workers 2 -n 256 ${MPIBIN}/comm_concurrent 20)
  expect(comm_basic_one_worker --out "comm_basic: 16 ranks ok"
         -- ${RUN} --workers 1 -n 16 ${MPIBIN}/comm_basic)
endif()
# MPI_Comm_idup returns before the peers call it: 64 ranks oversubscribing
# 2 workers, and 16 ranks taking turns on one.
expect(comm_idup_64_two_workers --out "comm_idup: 64 ranks ok"
       -- ${RUN} --workers 2 -n 64 ${MPIBIN}/comm_idup)
expect(comm_idup_16_one_worker --out "comm_idup: 16 ranks ok"
       -- ${RUN} --workers 1 -n 16 ${MPIBIN}/comm_idup)
# Errors under the default handler end the job with the message.
expect(comm_fatal_group_incl --status 6 --err "MPI_Group_incl: rank 5 is not in a group of size 4 \\(MPI_ERR_RANK\\)"
       -- ${RUN} -n 4 ${MPIBIN}/comm_fatal)
