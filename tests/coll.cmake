# Collective conformance (src/coll, src/mpi/coll.c).
#
# Programs (tests/mpi/coll_*.c, validated with MPICH and Open MPI), each
# printing "<name>: N ranks ok"; "quick" restricts sizes for many ranks:
#   coll_basic   every blocking collective, every root, counts 0..100003,
#                MPI_IN_PLACE, v/w variants with gaps, guard zones
#   coll_ops     every predefined op on every type, MAXLOC/MINLOC, user ops
#                (non-commutative matrix product in rank order; "user": only
#                the user ops)
#   coll_types   derived datatypes, different on both sides
#   coll_errors  argument errors under MPI_ERRORS_RETURN
#   coll_comms   split/dup/create communicators interleaved, MPI_COMM_SELF
#   coll_stress  thousands of small back-to-back collectives, random skew
set(COLL_PROGRAMS coll_basic coll_ops coll_types coll_errors coll_comms coll_stress)
# mpiexec ends a hung job itself (status 124, with the output so far).
set(CRUN ${RUN} --timeout 100)

function(coll_expect name)
  expect(${name} ${ARGN})
  set_property(TEST ${name} APPEND PROPERTY LABELS coll)
endfunction()

foreach(p ${COLL_PROGRAMS})
  loom_mpi_program(${p} SOURCES ${p}.c)
  foreach(n 1 2 3 7 16)
    coll_expect(${p}_${n} --out "^${p}: ${n} ranks ok$" -- ${CRUN} -n ${n} ${MPIBIN}/${p})
  endforeach()
  coll_expect(${p}_64 --out "^${p}: 64 ranks ok$" -- ${CRUN} -n 64 ${MPIBIN}/${p} quick)
endforeach()
coll_expect(coll_basic_singleton --out "^coll_basic: 1 ranks ok$" -- ${MPIBIN}/coll_basic)

# Ranks as coroutines of one worker: a collective that spins without
# yielding hangs here.
coll_expect(coll_basic_one_worker --out "^coll_basic: 16 ranks ok$"
            -- ${CRUN} --workers 1 -n 16 ${MPIBIN}/coll_basic)
coll_expect(coll_stress_one_worker --out "^coll_stress: 16 ranks ok$"
            -- ${CRUN} --workers 1 -n 16 ${MPIBIN}/coll_stress quick)
coll_expect(coll_comms_one_worker --out "^coll_comms: 16 ranks ok$"
            -- ${CRUN} --workers 1 -n 16 ${MPIBIN}/coll_comms)
coll_expect(coll_ops_two_workers --out "^coll_ops: 16 ranks ok$"
            -- ${CRUN} --workers 2 -n 16 ${MPIBIN}/coll_ops)

# Synthetic topologies (several packages and NUMA nodes, one worker per
# synthetic core, so many more workers than this machine's cores): the
# topology-aware algorithms see a real hierarchy. 2x2x8: 2 ranks per worker;
# 4x16 with --map-by package: consecutive ranks on different packages, so a
# hierarchical reduction must still combine a non-commutative op in rank
# order (coll_ops user). Sizes are kept small: 32 to 64 spinning workers on
# 2 cores make every collective slow.
set(SYN_A "package:2 numa:2 core:8 pu:1")
set(SYN_B "package:4 numa:1 core:16 pu:1")
foreach(t "basic;quick" "ops;user" "comms;quick" "stress;30")
  list(GET t 0 p)
  list(GET t 1 arg)
  coll_expect(coll_${p}_syn_2x2x8 --out "^coll_${p}: 64 ranks ok$"
              -- env HWLOC_SYNTHETIC=${SYN_A} ${CRUN} -n 64 ${MPIBIN}/coll_${p} ${arg})
endforeach()
foreach(t "basic;quick" "ops;user" "stress;30")
  list(GET t 0 p)
  list(GET t 1 arg)
  coll_expect(coll_${p}_syn_4x16_by_package --out "^coll_${p}: 64 ranks ok$"
              -- env HWLOC_SYNTHETIC=${SYN_B} ${CRUN} --map-by package -n 64 ${MPIBIN}/coll_${p} ${arg})
endforeach()

# Every algorithm forced (LOOM_COLL_<COLLECTIVE>=name) at 7 and 16 ranks,
# plus the stress program, which calls Barrier, Bcast, Reduce and Allreduce
# thousands of times.
# (The names of src/coll/algorithms.def; keep the two lists in step.)
set(COLL_FORCED
    BARRIER:central BARRIER:dissemination BARRIER:tree BARRIER:perworker
    BCAST:direct BCAST:twostage BCAST:pipeline
    REDUCE:direct REDUCE:tree
    ALLREDUCE:tiled ALLREDUCE:reduce_bcast ALLREDUCE:allread ALLREDUCE:perworker)
foreach(f ${COLL_FORCED})
  string(REPLACE ":" ";" kv ${f})
  list(GET kv 0 coll)
  list(GET kv 1 alg)
  string(TOLOWER ${coll} lcoll)
  foreach(n 7 16)
    foreach(p coll_basic coll_ops)
      coll_expect(${p}_${lcoll}_${alg}_${n} --out "^${p}: ${n} ranks ok$"
                  -- env LOOM_COLL_${coll}=${alg} ${CRUN} -n ${n} ${MPIBIN}/${p})
    endforeach()
  endforeach()
  coll_expect(coll_stress_${lcoll}_${alg}_16 --out "^coll_stress: 16 ranks ok$"
              -- env LOOM_COLL_${coll}=${alg} ${CRUN} -n 16 ${MPIBIN}/coll_stress quick)
endforeach()
