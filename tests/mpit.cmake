# The MPI tool information interface (src/mpi/mpit.c, docs/mpi_t.md).
# mpit_generic: what does not depend on Loom's variables (validated under
# MPICH); mpit_loom: Loom's variables, with LOOM_EAGER_MAX=8k and
# LOOM_COLL_TUNING=none in the environment (it checks that the control
# variables show them).
loom_mpi_program(mpit_generic SOURCES mpit_generic.c)
loom_mpi_program(mpit_loom SOURCES mpit_loom.c)
loom_mpi_program(mpit_list SOURCES mpit_list.c)
set(MPIT_ENV env LOOM_EAGER_MAX=8k LOOM_COLL_TUNING=none)
set(counts 1 2 7 64)
if(LOOM_SANITIZE)
  set(counts 2 7)
endif()
foreach(t mpit_generic mpit_loom)
  foreach(n ${counts})
    expect(${t}_${n} --out "^${t}: ${n} ranks ok$" -- ${MPIT_ENV} ${RUN} -n ${n} ${MPIBIN}/${t})
  endforeach()
  if(NOT LOOM_SANITIZE)
    expect(${t}_7_one_worker --out "^${t}: 7 ranks ok$" -- ${MPIT_ENV} ${RUN} --workers 1 -n 7 ${MPIBIN}/${t})
  endif()
endforeach()
if(NOT LOOM_SANITIZE)
  # A singleton (no mpiexec): MPI_T before MPI_Init makes no job yet.
  expect(mpit_generic_singleton --out "^mpit_generic: 1 ranks ok$" -- ${MPIBIN}/mpit_generic)
  # docs/mpi_t.md lists every variable as the library reports them, and
  # every LOOM_ environment variable is read through the options table.
  add_test(NAME mpit_doc COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpit_doc.sh ${MPIBIN}/mpit_list
           ${PROJECT_SOURCE_DIR}/docs/mpi_t.md)
  add_test(NAME options_registered COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/options_registered.sh
           ${PROJECT_SOURCE_DIR})
endif()
