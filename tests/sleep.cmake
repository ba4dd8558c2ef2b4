# A rank that sleeps (sleep, usleep, nanosleep, clock_nanosleep) parks only
# itself, and sched_yield hands the worker to another rank (issue 18).
loom_mpi_program(sleep_park SOURCES sleep_park.c)
expect(sleep_park_one_worker --out "sleep_park: 4 ranks ok" -- ${RUN} --workers 1 --timeout 60 -n 4 ${MPIBIN}/sleep_park)
if(NOT LOOM_SANITIZE)
  expect(sleep_park_1 --out "sleep_park: 1 ranks ok" -- ${RUN} --timeout 60 -n 1 ${MPIBIN}/sleep_park)
  expect(sleep_park_64 --out "sleep_park: 64 ranks ok" -- ${RUN} --timeout 60 -n 64 ${MPIBIN}/sleep_park)
endif()
