# Process topologies and neighbourhood collectives (src/mpi/topo.c,
# neighbor.c).
set(LOOM_TOPO_TESTS topo_cart topo_graph topo_neighbor)
foreach(t ${LOOM_TOPO_TESTS})
  loom_mpi_program(${t} SOURCES ${t}.c)
  set(counts 1 2 7)
  if(NOT LOOM_SANITIZE)
    list(APPEND counts 64)
  endif()
  foreach(n ${counts})
    expect(${t}_${n} --out "${t}: ${n} ranks ok" -- ${RUN} -n ${n} ${MPIBIN}/${t})
  endforeach()
  expect(${t}_7_one_worker --out "${t}: 7 ranks ok" -- ${RUN} --workers 1 -n 7 ${MPIBIN}/${t})
endforeach()
# A truncated neighbour message ends the job at MPI_Wait with the message.
loom_mpi_program(topo_fatal SOURCES topo_fatal.c)
expect(topo_fatal_truncate --status 15
       --err "MPI_Wait: a message of the call was longer than its receive block \\(MPI_ERR_TRUNCATE\\)"
       -- ${RUN} -n 3 ${MPIBIN}/topo_fatal)
