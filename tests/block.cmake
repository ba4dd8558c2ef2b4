# A rank blocked in a system call (read, write, the socket calls, poll,
# select, epoll_wait, waitpid and kin, flock) parks only itself: on one
# worker a call that blocked the worker would deadlock the pair, and
# --timeout turns that into a failure (issue 18).
loom_mpi_program(block_park SOURCES block_park.c)
expect(block_park_one_worker --out "block_park: 4 ranks ok" -- ${RUN} --workers 1 --timeout 60 -n 4 ${MPIBIN}/block_park)
expect(block_park_1 --out "block_park: 1 ranks ok" -- ${RUN} --timeout 60 -n 1 ${MPIBIN}/block_park)
if(NOT LOOM_SANITIZE)
  expect(block_park_64 --out "block_park: 64 ranks ok" -- ${RUN} --timeout 60 -n 64 ${MPIBIN}/block_park)
endif()
