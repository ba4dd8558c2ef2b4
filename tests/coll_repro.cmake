# Reproducible reductions (issue 17; docs/collectives.md#reproducible-reductions).
# tests/mpi/coll_repro.c runs each reduction (Reduce, Allreduce,
# Reduce_scatter(_block), Scan, Exscan, and the nonblocking forms) on inputs
# that expose the order, with one late rank per call (a different one each
# call), alternately in place and not, and requires one bit pattern over all
# calls (and on all ranks of an Allreduce), equal to the serial fold in the
# algorithm's specified order where the forced algorithm has one.
#
# Every algorithm the selector can pick is forced in turn
# (LOOM_COLL_<COLLECTIVE>=<name>, the names of src/coll/algorithms.def) and
# runs its collective 1000 times per case (the 3000-element cases 100) at 2,
# 7, 8, 16 and 64 ranks (200 at 64 for the all-read ones); so do the
# model's own choices ("blocking") and the nonblocking forms (their
# INDEPENDENT algorithms; 100 at 64). numa is forced on a synthetic topology
# with 4 NUMA nodes too. The arrival-order switch (info
# key and LOOM_COLL_REDUCE_ORDER) must show more than one pattern on
# perworker. Release: 83 runs, 1-2 minutes on 2 cores. Sanitizers: a
# subset at 2, 8 and 16 ranks, 50 calls per case.
loom_mpi_program(coll_repro SOURCES coll_repro.c)

set(REPRO_FORCED
    ALLREDUCE:tiled ALLREDUCE:allread ALLREDUCE:reduce_bcast ALLREDUCE:perworker ALLREDUCE:numa
    REDUCE:direct REDUCE:tree REDUCE:numa
    SCAN:direct SCAN:chain EXSCAN:direct EXSCAN:chain
    REDUCE_SCATTER_BLOCK:direct REDUCE_SCATTER:direct)
set(REPRO_RANKS 2 7 8 16 64)
set(REPRO_ITERS 1000)
if(LOOM_SANITIZE)
  set(REPRO_FORCED ALLREDUCE:perworker ALLREDUCE:tiled REDUCE:tree SCAN:chain)
  set(REPRO_RANKS 2 8 16)
  set(REPRO_ITERS 50)
endif()

foreach(f ${REPRO_FORCED})
  string(REPLACE ":" ";" kv ${f})
  list(GET kv 0 coll)
  list(GET kv 1 alg)
  string(TOLOWER ${coll} lcoll)
  foreach(n ${REPRO_RANKS})
    # At 64 ranks on 2 cores the algorithms whose every member reads every
    # input (N^2 reads, N(N+1)/2 folds for Scan) take 5-6 s for 200 calls.
    set(iters ${REPRO_ITERS})
    if(n EQUAL 64 AND f MATCHES "SCAN:direct|allread|REDUCE_SCATTER")
      set(iters 200)
    endif()
    coll_expect(coll_repro_${lcoll}_${alg}_${n} --out "^coll_repro: ${n} ranks ok$"
                -- env LOOM_COLL_${coll}=${alg} ${CRUN} -n ${n} ${MPIBIN}/coll_repro
                   ${iters} ${lcoll})
  endforeach()
endforeach()

# The model's choices, blocking and nonblocking (fewer calls at 64 ranks:
# all reductions of 64 ranks on 2 cores take 30 s for 1000 calls a case
# blocking, 25 s nonblocking).
foreach(n ${REPRO_RANKS})
  foreach(kind blocking nonblocking)
    set(iters ${REPRO_ITERS})
    if(n EQUAL 64)
      set(iters 100)
    endif()
    coll_expect(coll_repro_${kind}_${n} --out "^coll_repro: ${n} ranks ok$"
                -- ${CRUN} -n ${n} ${MPIBIN}/coll_repro ${iters} ${kind})
  endforeach()
endforeach()

if(NOT LOOM_SANITIZE)
  # numa over 4 NUMA nodes of 2 (range domains: the user op runs numa too;
  # 8 spinning workers on 2 cores: few calls).
  set(REPRO_SYN "package:2 numa:2 core:2 pu:1")
  coll_expect(coll_repro_numa_syn_8 --out "^coll_repro: 8 ranks ok$"
              -- env LOOM_COLL_ALLREDUCE=numa LOOM_COLL_REDUCE=numa HWLOC_SYNTHETIC=${REPRO_SYN}
                 ${CRUN} -n 8 ${MPIBIN}/coll_repro 50 allreduce,reduce)
  # Arrival order on request: perworker then gives other bits from call to
  # call (this checks the switch works; the results are only close).
  coll_expect(coll_repro_arrival_info_16 --out "^coll_repro: 16 ranks ok$"
              --out "usersum count 300: [0-9]+ of 1000 calls gave other bits"
              -- env LOOM_COLL_ALLREDUCE=perworker ${CRUN} -n 16 ${MPIBIN}/coll_repro
                 1000 allreduce arrival)
  coll_expect(coll_repro_arrival_env_16 --out "^coll_repro: 16 ranks ok$"
              --out "usersum count 300: [0-9]+ of 1000 calls gave other bits"
              -- env LOOM_COLL_ALLREDUCE=perworker LOOM_COLL_REDUCE_ORDER=arrival
                 ${CRUN} -n 16 ${MPIBIN}/coll_repro 1000 allreduce arrival-env)
endif()
