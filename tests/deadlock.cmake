# Deadlock detection (issue 24, docs/deadlock.md): classic deadlocks are
# reported with each rank's wait and the wait-for cycle, and end the job with
# status 85; near misses, where a rank sleeps, computes, reads a pipe or waits
# for a mutex while the others wait in MPI, are never reported.
loom_mpi_program(deadlock SOURCES deadlock.c FLAGS -lpthread)
set(D ${MPIBIN}/deadlock)
set(dl_sizes 2 7 64)
set(nm_sizes 2 7)
if(LOOM_SANITIZE)
  set(dl_sizes 7)
  set(nm_sizes 2)
endif()
set(CYCLE01 "wait-for cycle: 0 -> 1 -> 0$")
foreach(n IN LISTS dl_sizes)
  math(EXPR last "${n} - 1")
  expect(deadlock_recv_cycle_${n} --status 85 --err "^loom: deadlock: every rank"
         --err "rank 0: waits for a receive from rank 1 \\(tag 0, MPI_COMM_WORLD"
         --err "wait-for cycle: 0 -> 1 -> ([0-9]+ -> )*0$" -- ${RUN} --timeout 60 -n ${n} ${D} recv_cycle)
  expect(deadlock_send_cycle_${n} --status 85 --err "rank 0: waits for a send to rank 1 \\(tag 0"
         --err "rank 1: waits for a send to rank 0" --err "${CYCLE01}" -- ${RUN} --timeout 60 -n ${n} ${D} send_cycle)
  expect(deadlock_missing_coll_${n} --status 85
         --err "in MPI_Allreduce on MPI_COMM_WORLD \\(context 0\\). members not in this call: ${last}$"
         --err "rank ${last}: waits for a receive from rank 0"
         --err "wait-for cycle: 0 -> ${last} -> 0$" -- ${RUN} --timeout 60 -n ${n} ${D} missing_coll)
  expect(deadlock_wrong_tag_${n} --status 85 --err "rank 1: waits for a receive from rank 0 \\(tag 2"
         --err "rank 1 has not received 1 message: from rank 0 \\(tag 1, 4 bytes\\)$"
         --err "rank 0: in MPI_Finalize" -- ${RUN} --timeout 60 -n ${n} ${D} wrong_tag)
  expect(deadlock_waitall_${n} --status 85 --err "rank 0: waits for a receive from rank 1"
         --err "in MPI_Barrier on MPI_COMM_WORLD" --err "${CYCLE01}" -- ${RUN} --timeout 60 -n ${n} ${D} waitall)
  expect(deadlock_ssend_barrier_${n} --status 85 --err "rank 0: waits for a synchronous send to rank 1"
         --err "${CYCLE01}" -- ${RUN} --timeout 60 -n ${n} ${D} ssend_barrier)
  expect(deadlock_finalize_${n} --status 85 --err "rank 0: waits for a receive from rank 1"
         --err "ranks? 1(-${last})?: in MPI_Finalize" --err "${CYCLE01}" -- ${RUN} --timeout 60 -n ${n} ${D} finalize)
endforeach()
expect(deadlock_one_worker --status 85 --err "wait-for cycle: 0 -> 1 -> ([0-9]+ -> )*0$"
       -- ${RUN} --timeout 60 --workers 1 -n 16 ${D} recv_cycle)
expect(deadlock_off --status 124 --err "time limit"
       -- env LOOM_DEADLOCK=0 ${RUN} --timeout 3 -n 2 ${D} recv_cycle)
foreach(n IN LISTS nm_sizes)
  foreach(mode sleep compute test_loop nb_coll pipe mutex)
    expect(deadlock_near_${mode}_${n} --status 0 --out "^deadlock: ${mode} ok$"
           -- ${RUN} --timeout 60 -n ${n} ${D} ${mode})
  endforeach()
endforeach()
if(NOT LOOM_SANITIZE)
  expect(deadlock_near_sleep_64 --status 0 --out "^deadlock: sleep ok$" -- ${RUN} --timeout 60 -n 64 ${D} sleep)
  expect(deadlock_near_one_worker --status 0 --out "^deadlock: compute ok$"
         -- ${RUN} --timeout 60 --workers 1 -n 8 ${D} compute)
endif()
