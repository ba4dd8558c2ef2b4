# Intercommunicators (src/comm/inter.c, src/coll/inter.c, src/mpi/inter.c):
# creation, merge, derived communicators, point-to-point, every collective
# with roots on both sides, and the error classes.
foreach(t inter_comm inter_p2p inter_coll inter_errors)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/mpi/${t}.c)
    loom_mpi_program(${t} SOURCES ${t}.c)
    if(LOOM_SANITIZE)
      set(counts 2 7)
    else()
      set(counts 1 2 7 64)
    endif()
    foreach(n ${counts})
      expect(${t}_${n} --out "^${t}: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/${t})
    endforeach()
    if(NOT LOOM_SANITIZE)
      expect(${t}_7_one_worker --out "^${t}: 7 ranks ok$" -- ${RUN} --workers 1 -n 7 ${MPIBIN}/${t})
    endif()
  endif()
endforeach()
