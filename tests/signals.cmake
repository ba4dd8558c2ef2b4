# Signals, timers, the pid and the working directory of a rank are its own,
# as in a process (src/runtime/signal.c, rankfs.c; issue 18). Each mode also
# runs as a plain process (the program run directly), which is the oracle.
# Under TSAN these calls are libc's, through the sanitizer's interceptors (one
# handler table, pid and directory per process: docs/architecture.md):
# skipped there.
if(LOOM_SANITIZE STREQUAL "thread")
  return()
endif()
loom_mpi_program(signals SOURCES signals.c)
# ITIMER_VIRTUAL and ITIMER_PROF count the rank's own CPU time
# (tests/mpi/cputimer.c): each rank's count of ticks must be its CPU time over
# the interval, as in the plain process.
loom_mpi_program(cputimer SOURCES cputimer.c)
foreach(m virtual prof)
  expect(cputimer_${m}_process --out "^cputimer: ${m} ok$" -- ${MPIBIN}/cputimer ${m})
  expect(cputimer_${m}_4 --out "^cputimer: ${m} ok$" -- ${RUN} --timeout 60 -n 4 ${MPIBIN}/cputimer ${m})
  expect(cputimer_${m}_one_worker --out "^cputimer: ${m} ok$"
         -- ${RUN} --timeout 60 --workers 1 -n 4 ${MPIBIN}/cputimer ${m})
endforeach()
if(NOT LOOM_SANITIZE)
  expect(cputimer_prof_16 --out "^cputimer: prof ok$" -- ${RUN} --timeout 90 -n 16 ${MPIBIN}/cputimer prof)
endif()
foreach(m alarm itimer timer oldact raise kill external pidfile chdir segv mpiwait sigwait)
  set(ok "signals: ${m} [0-9]+ ranks ok")
  expect(signals_${m}_process --out "signals: ${m} 1 ranks ok" -- ${MPIBIN}/signals ${m})
  expect(signals_${m}_4 --out "signals: ${m} 4 ranks ok" -- ${RUN} --timeout 60 -n 4 ${MPIBIN}/signals ${m})
  expect(signals_${m}_one_worker --out "signals: ${m} 4 ranks ok" -- ${RUN} --timeout 60 --workers 1 -n 4 ${MPIBIN}/signals ${m})
  if(NOT LOOM_SANITIZE)
    expect(signals_${m}_1 --out "signals: ${m} 1 ranks ok" -- ${RUN} --timeout 60 -n 1 ${MPIBIN}/signals ${m})
    expect(signals_${m}_64 --out "signals: ${m} 64 ranks ok" -- ${RUN} --timeout 90 -n 64 ${MPIBIN}/signals ${m})
  endif()
endforeach()
