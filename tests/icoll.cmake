# Nonblocking collectives (src/coll/task.c): every MPI_I<coll>, calls in
# flight on two communicators started in opposite orders, overlap with
# point-to-point, MPI_Test polling, a blocking call after a nonblocking one.
loom_mpi_program(coll_nonblocking SOURCES coll_nonblocking.c)
foreach(n 1 2 3 7 16)
  expect(coll_nonblocking_${n} --out "^coll_nonblocking: ${n} ranks ok$"
         -- ${RUN} --timeout 100 -n ${n} ${MPIBIN}/coll_nonblocking)
endforeach()
expect(coll_nonblocking_64 --out "^coll_nonblocking: 64 ranks ok$"
       -- ${RUN} --timeout 100 -n 64 ${MPIBIN}/coll_nonblocking quick)
expect(coll_nonblocking_one_worker --out "^coll_nonblocking: 16 ranks ok$"
       -- ${RUN} --timeout 100 --workers 1 -n 16 ${MPIBIN}/coll_nonblocking)
expect(coll_nonblocking_syn --out "^coll_nonblocking: 32 ranks ok$"
       -- env "HWLOC_SYNTHETIC=pack:2 numa:2 core:8 pu:1" ${RUN} --timeout 100 --workers 4 -n 32 ${MPIBIN}/coll_nonblocking quick)
# loom-info describes the synthetic topology, the placement and every
# algorithm, and names the forced one.
add_test(NAME loom_info COMMAND ${EXPECT} --out "Topology: 2 package.*4 NUMA node"
         --out "worker 4: .* numa 1," --out "Allreduce +perworker" --out "Bcast +pipeline .*\\[forced\\]"
         -- env "HWLOC_SYNTHETIC=pack:2 numa:2 core:4 pu:1" LOOM_COLL_BCAST=pipeline
            ${CMAKE_BINARY_DIR}/bin/loom-info -n 16)
# Fewer ranks than cores, mapped by NUMA node: one worker in each node.
add_test(NAME loom_info_map_by_numa COMMAND ${EXPECT} --out "worker 0: .* numa 0," --out "worker 1: .* numa 1,"
         --out "worker 2: .* numa 2," --out "worker 3: .* numa 3,"
         -- env "HWLOC_SYNTHETIC=pack:2 numa:2 core:4 pu:1" ${CMAKE_BINARY_DIR}/bin/loom-info -n 4 --map-by numa)
# Progress while a member computes: rank 0 spins without calling MPI after
# each MPI_I<coll> until the others have completed (one rank per worker).
loom_mpi_program(coll_progress SOURCES coll_progress.c)
foreach(n 2 4)
  expect(coll_progress_${n} --out "^coll_progress: ${n} ranks ok$"
         -- ${RUN} --timeout 200 --workers ${n} -n ${n} ${MPIBIN}/coll_progress)
endforeach()

# A nonblocking collective then a blocking one with another algorithm: the
# root of the first must not release a member that already left it (a hang
# at 16 ranks before).
loom_mpi_program(coll_nb_then_blocking SOURCES coll_nb_then_blocking.c)
expect(coll_nb_then_blocking_4 --out "coll_nb_then_blocking: 4 ranks ok" -- ${RUN} --timeout 60 -n 4 ${MPIBIN}/coll_nb_then_blocking)
if(NOT LOOM_SANITIZE)
  expect(coll_nb_then_blocking_16 --out "coll_nb_then_blocking: 16 ranks ok" -- ${RUN} --timeout 60 -n 16 ${MPIBIN}/coll_nb_then_blocking)
  expect(coll_nb_then_blocking_64 --out "coll_nb_then_blocking: 64 ranks ok" -- ${RUN} --timeout 60 -n 64 ${MPIBIN}/coll_nb_then_blocking)
endif()
