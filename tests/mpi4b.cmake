# More MPI-4.1 pieces (docs/mpi4.md): generalized requests, status setters,
# MPI_Request_get_status_all/any/some (greq); datatype attributes,
# MPI_Info_create_env/get_string, MPI_Comm_idup_with_info,
# MPI_Remove_error_*, MPI_Type_get_value_index (mpi4_more).
foreach(p greq mpi4_more)
  loom_mpi_program(${p} SOURCES ${p}.c)
  set(counts 1 2 7)
  if(NOT LOOM_SANITIZE)
    list(APPEND counts 64)
  endif()
  foreach(n ${counts})
    expect(${p}_${n} --out "^${p}: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/${p})
  endforeach()
  expect(${p}_7_one_worker --out "^${p}: 7 ranks ok$" -- ${RUN} --workers 1 -n 7 ${MPIBIN}/${p})
endforeach()
# Sessions (MPI-4.1 11.3): without MPI_Init, and alongside it.
loom_mpi_program(session SOURCES session.c)
set(counts 1 2 7)
if(NOT LOOM_SANITIZE)
  list(APPEND counts 64)
endif()
foreach(n ${counts})
  expect(session_${n} --out "^session: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/session)
  expect(session_mixed_${n} --out "^session_mixed: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/session mixed)
endforeach()
expect(session_7_one_worker --out "^session: 7 ranks ok$" -- ${RUN} --workers 1 -n 7 ${MPIBIN}/session)
expect(session_mixed_7_one_worker --out "^session_mixed: 7 ranks ok$" -- ${RUN} --workers 1 -n 7 ${MPIBIN}/session mixed)
# Persistent neighbourhood collectives (MPI_Neighbor_<coll>_init).
loom_mpi_program(nbr_init SOURCES nbr_init.c)
foreach(n ${counts})
  expect(nbr_init_${n} --out "^nbr_init: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/nbr_init)
endforeach()
expect(nbr_init_7_one_worker --out "^nbr_init: 7 ranks ok$" -- ${RUN} --workers 1 -n 7 ${MPIBIN}/nbr_init)
# A program run directly (a singleton job) that starts with a session.
expect(session_singleton --out "^session: 1 ranks ok$" -- ${MPIBIN}/session)
expect(session_mixed_singleton --out "^session_mixed: 1 ranks ok$" -- ${MPIBIN}/session mixed)
