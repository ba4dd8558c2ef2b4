# Group_incl of nothing, MPI_LASTUSEDCODE, and MPI_COMM_SELF's attributes
# deleted first in MPI_Finalize (issue 20's bugs from MPICH's test suite).
loom_mpi_program(comm_finalize SOURCES comm_finalize.c)
foreach(n 1 4 64)
  if(LOOM_SANITIZE AND NOT n EQUAL 4)
    continue()
  endif()
  expect(comm_finalize_${n} --count "^comm_finalize: rank [0-9]+ of ${n} ok$" ${n}
         -- ${RUN} -n ${n} ${MPIBIN}/comm_finalize)
endforeach()
expect(comm_finalize_fatal_user_class --status 128 --err "rank 0: MPI_Comm_call_errhandler: .*\\(a user-defined error class\\). ending the job"
       -- ${RUN} -n 2 ${MPIBIN}/comm_finalize fatal)
