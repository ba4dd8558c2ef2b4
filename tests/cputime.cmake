# A rank's clock(), getrusage, times and CPU-time clocks count its own CPU
# time, not the process's; a singleton and the threads a rank starts read
# libc's (issue 18).
loom_mpi_program(cputime SOURCES cputime.c)
expect(cputime_4_one_worker --out "cputime: 4 ranks ok" -- ${RUN} --workers 1 --timeout 60 -n 4 ${MPIBIN}/cputime)
if(NOT LOOM_SANITIZE)
  expect(cputime_1 --out "cputime: 1 ranks ok" -- ${RUN} --timeout 60 -n 1 ${MPIBIN}/cputime)
  expect(cputime_16 --out "cputime: 16 ranks ok" -- ${RUN} --timeout 60 -n 16 ${MPIBIN}/cputime)
  expect(cputime_singleton --out "cputime: singleton ok" -- ${MPIBIN}/cputime singleton)
endif()
