# MPI-4.1 additions (issue 20): MPI_Isendrecv(_replace) and persistent
# collectives, MPI_Status_get/set_source/tag/error. Each program prints
# "<name>: N ranks ok" only when every rank passed.
foreach(p mpi4_pcoll mpi4_isendrecv mpi4_misc)
  loom_mpi_program(${p} SOURCES ${p}.c)
  set(counts 1 2 7)
  if(NOT LOOM_SANITIZE)
    list(APPEND counts 64)
  endif()
  foreach(n ${counts})
    expect(${p}_${n} --out "^${p}: ${n} ranks ok$" -- ${RUN} --timeout 200 -n ${n} ${MPIBIN}/${p})
  endforeach()
  expect(${p}_one_worker --out "^${p}: 7 ranks ok$"
         -- ${RUN} --timeout 200 --workers 1 -n 7 ${MPIBIN}/${p})
endforeach()
