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
# A long cycle is shown by its ends and its length.
expect(deadlock_long_cycle --status 85 --err "wait-for cycle: 0 -> 1 -> 2 -> 3 -> 4 -> 5 -> 6 -> 7 -> [.][.][.] \\(84 more\\) -> 92 -> 93 -> 94 -> 95 -> 96 -> 97 -> 98 -> 99 -> 0 \\(100 ranks\\)$"
       -- env LOOM_BACKTRACE=0 ${RUN} --timeout 60 -n 100 ${D} recv_cycle)
foreach(n IN LISTS dl_sizes)
  math(EXPR last "${n} - 1")
  expect(deadlock_recv_cycle_${n} --status 85 --err "^loom: deadlock: every rank"
         --err "rank 0: waits for a receive from rank 1 \\(tag 0, MPI_COMM_WORLD \\(context 0\\), up to 1 MPI_INT \\(4 bytes\\)\\)$"
         --err "wait-for cycle: 0 -> 1 -> ([0-9]+ -> |[.][.][.] \\([0-9]+ more\\) -> )*0( \\([0-9]+ ranks\\))?$" -- ${RUN} --timeout 60 -n ${n} ${D} recv_cycle)
  expect(deadlock_send_cycle_${n} --status 85
         --err "rank 0: waits for a send to rank 1 \\(tag 0, MPI_COMM_WORLD \\(context 0\\), 1048576 MPI_CHAR \\(1048576 bytes\\)\\) to be received$"
         --err "rank 1: waits for a send to rank 0" --err "${CYCLE01}" -- ${RUN} --timeout 60 -n ${n} ${D} send_cycle)
  expect(deadlock_missing_coll_${n} --status 85
         --err "in MPI_Allreduce on MPI_COMM_WORLD \\(context 0\\). members not in this call: ${last}$"
         --err "rank ${last}: waits for a receive from rank 0"
         --err "wait-for cycle: 0 -> ${last} -> 0$" -- ${RUN} --timeout 60 -n ${n} ${D} missing_coll)
  expect(deadlock_missing_bcast_${n} --status 85
         --err "ranks? 1(-${last})?: in MPI_Bcast on MPI_COMM_WORLD \\(context 0\\). members not in this call: 0$"
         --err "rank 0: in MPI_Finalize" -- ${RUN} --timeout 60 -n ${n} ${D} missing_bcast)
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
expect(deadlock_one_worker --status 85 --err "wait-for cycle: 0 -> 1 -> ([0-9]+ -> |[.][.][.] \\([0-9]+ more\\) -> )*0( \\([0-9]+ ranks\\))?$"
       -- ${RUN} --timeout 60 --workers 1 -n 16 ${D} recv_cycle)
expect(deadlock_off --status 124 --err "time limit"
       -- env LOOM_DEADLOCK=0 ${RUN} --timeout 3 -n 2 ${D} recv_cycle)
foreach(n IN LISTS nm_sizes)
  foreach(mode sleep compute test_loop nb_coll pipe mutex)
    expect(deadlock_near_${mode}_${n} --status 0 --out "^deadlock: ${mode} ok$"
           -- ${RUN} --timeout 60 -n ${n} ${D} ${mode})
  endforeach()
endforeach()
# A rank waiting on stdin (mpiexec forwards it) while the others wait in MPI.
foreach(n IN LISTS nm_sizes)
  expect(deadlock_near_stdin_${n} --status 0 --out "^deadlock: stdin ok$"
         -- sh -c "(sleep 1.5 && echo late) | exec \"$0\" \"$@\"" ${RUN} --timeout 60 -n ${n} ${D} stdin)
endforeach()
if(NOT LOOM_SANITIZE)
  expect(deadlock_near_sleep_64 --status 0 --out "^deadlock: sleep ok$" -- ${RUN} --timeout 60 -n 64 ${D} sleep)
  expect(deadlock_near_one_worker --status 0 --out "^deadlock: compute ok$"
         -- ${RUN} --timeout 60 --workers 1 -n 8 ${D} compute)
endif()

# The job's state on request (kill -QUIT, --report-state-after, --timeout) and
# the backtraces of parked ranks in it and in the deadlock report.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  expect(deadlock_backtrace --status 85 --err "^loom:     #0 MPI_Recv\\+0x[0-9a-f]+ \\(libloom"
         --err "^loom:     #1 recv_from\\+0x[0-9a-f]+ \\(deadlock\\)$"
         --err "^loom:     #2 main\\+0x[0-9a-f]+ \\(deadlock\\)$" -- ${RUN} --timeout 60 -n 3 ${D} recv_cycle)
  expect(state_after --status 0 --out "^deadlock: sleep ok$"
         --err "^loom: state of the job after 1\\.[0-9] s \\(--report-state-after\\): 4 ranks on"
         --err "^loom: rank 0: is parked outside MPI" --err "^loom:     #0 usleep\\+"
         --err "^loom: ranks 1-3: waits for a receive from rank 0"
         -- ${RUN} --timeout 60 --report-state-after 1 -n 4 ${D} sleep)
endif()
expect(deadlock_backtrace_off --status 85 --err "wait-for cycle" --no-err "#0"
       -- env LOOM_BACKTRACE=0 ${RUN} --timeout 60 -n 3 ${D} recv_cycle)
expect(state_compute --status 0 --out "^deadlock: compute ok$" --err-count "state of the job" 1
       --err "^loom: rank 0: runs \\(computes" --err "^loom: rank 1: waits for a receive from rank 0"
       -- ${RUN} --timeout 60 --report-state-after 1 -n 2 ${D} compute)
expect(state_sigquit --status 0 --out "^deadlock: sleep ok$"
       --err "^loom: state of the job after 0\\.[0-9] s \\(mpiexec received SIGQUIT\\): 3 ranks"
       --err "^loom: ranks 1-2: waits for a receive from rank 0" --signal QUIT 0.6
       -- ${RUN} --timeout 60 -n 3 ${D} sleep)
expect(state_timeout --status 124 --err "time limit of 2 s"
       --err "^loom: state of the job after 2\\.[0-9] s \\(--timeout\\): 3 ranks"
       --err "^loom: rank 0: waits for a receive from rank 1"
       -- env LOOM_DEADLOCK=0 ${RUN} --timeout 2 -n 3 ${D} recv_cycle)
# A background job of a script starts with SIGQUIT ignored: env gives it back.
expect(state_sigquit_off --status 131 --no-err "state of the job" --signal QUIT 0.5
       -- env --default-signal=QUIT LOOM_SIGQUIT_STATE=0 ${RUN} --timeout 60 -n 3 ${D} sleep)
# Ranks that wake while the state is printed stay in their park until it is
# done: a job under a storm of SIGQUITs gives its right answers.
if(LOOM_SANITIZE)
  set(storm_ranks 16)
  set(storm_rounds 1000)
else()
  set(storm_ranks 64)
  set(storm_rounds 10000)
endif()
expect(state_storm --status 0 --out "^coll_stress: ${storm_ranks} ranks ok$" --err "state of the job"
       --signal-every QUIT 0.02 -- ${RUN} --timeout 120 -n ${storm_ranks} ${MPIBIN}/coll_stress ${storm_rounds})
expect(state_storm_one_worker --status 0 --out "^coll_stress: 16 ranks ok$" --err "state of the job"
       --signal-every QUIT 0.02 -- ${RUN} --timeout 120 --workers 1 -n 16 ${MPIBIN}/coll_stress ${storm_rounds})

# The gdb extension and --debug-rank (docs/debugging.md); skipped where gdb
# may not trace.
if(NOT LOOM_SANITIZE)
  add_test(NAME gdb_extension COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/launcher/gdb_test.sh ${RUN}
           ${CMAKE_BINARY_DIR}/lib/loom/loom-gdb.py ${D} ${MPIBIN}/hello)
  set_tests_properties(gdb_extension PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${LOOM_TEST_TIMEOUT} LABELS mpi)
endif()

# loom-info lists every LOOM_ variable with its value here.
expect(loom_info_options --out "^LOOM_DEADLOCK +1 +report a deadlock" --out "^LOOM_DEBUG_RANK +\\(unset\\) "
       --out "^LOOM_REPORT_STATE_AFTER +5 " --out "^LOOM_SIGQUIT_STATE +1 "
       -- env LOOM_REPORT_STATE_AFTER=5 ${CMAKE_BINARY_DIR}/bin/loom-info --options)
