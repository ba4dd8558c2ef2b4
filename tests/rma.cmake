# One-sided communication (MPI_Win_*, MPI-3.1 chapter 11).
#
# Programs (tests/mpi/rma_*.c), each printing "<name>: N ranks ok" when
# every rank passed; validated with Open MPI and MPICH by
# tests/rma_validate.sh. Built with -DLOOM_EXPECT, which makes strict the
# checks where the standard leaves a choice Loom has made (see
# tests/mpi/rma_common.h):
#   rma_win      creation flavors, attributes, group, name, info, free,
#                MPI_Alloc_mem, MPI_Win_shared_query on any window (MPI-4)
#   rma_attr     keyvals with copy/delete callbacks, error handlers
#   rma_putget   Put, Get, Rput, Rget: sizes, self, MPI_PROC_NULL, disp units
#   rma_acc      Accumulate with every predefined op, Get_accumulate,
#                Fetch_and_op, Compare_and_swap, Raccumulate, Rget_accumulate
#   rma_types    derived datatypes on origin and target sides
#   rma_sync     fence with assertions, PSCW, locks, flushes, Win_sync
#   rma_shared   shared windows (contiguous and not) by loads and stores
#   rma_dynamic  attach and detach of several regions, in rounds
#   rma_atomic   atomicity: concurrent accumulates, counters, a CAS mutex,
#                swaps, exclusive-lock read-modify-write
#   rma_errors   erroneous calls under MPI_ERRORS_RETURN
set(RMA_PROGRAMS rma_win rma_attr rma_putget rma_acc rma_types rma_sync rma_shared rma_dynamic
    rma_atomic rma_errors)
set(RMA_RANKS 1 2 7 64)
if(LOOM_SANITIZE)
  set(RMA_RANKS 2 7)
endif()
set(RMA_RUN ${RUN} --timeout 120)

foreach(p ${RMA_PROGRAMS})
  loom_mpi_program(${p} SOURCES ${p}.c FLAGS -DLOOM_EXPECT)
  foreach(n ${RMA_RANKS})
    # (rma_atomic: 300 rounds, not 1000, where 64 ranks share 2 cores)
    set(args)
    if(p STREQUAL rma_atomic AND n EQUAL 64)
      set(args 300)
    endif()
    expect(${p}_${n} --out "^${p}: ${n} ranks ok$" -- ${RMA_RUN} -n ${n} ${MPIBIN}/${p} ${args})
    set_property(TEST ${p}_${n} APPEND PROPERTY LABELS rma)
  endforeach()
  # Ranks as coroutines of one worker: a rank that waits for a peer
  # without yielding hangs here.
  expect(${p}_one_worker --out "^${p}: 7 ranks ok$" -- ${RMA_RUN} --workers 1 -n 7 ${MPIBIN}/${p})
  set_property(TEST ${p}_one_worker APPEND PROPERTY LABELS rma)
endforeach()
