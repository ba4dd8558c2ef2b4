# libc's hidden state per rank (issue 17; src/rankc, docs/libc-per-rank.md):
# static result buffers, strtok, signgam, hsearch, shift states, setlocale,
# errno across switches (libc_state), atexit/on_exit/at_quick_exit handlers
# at the rank's exit (libc_exit). Each program is built twice from one source: by Loom's
# mpicc, and by the system's compiler with -DREFERENCE as a plain program
# (no MPI, no Loom, no sanitizer) that runs the same code for ranks 0..N-1,
# each in a process of its own: glibc's answers, the oracle. libc_compare.sh
# runs both and compares what they print, rank by rank.
set(LIBC_COMPARE ${CMAKE_CURRENT_SOURCE_DIR}/mpi/libc_compare.sh)
foreach(p libc_state libc_exit libc_state_own)
  add_custom_command(OUTPUT ${MPIBIN}/${p}_ref
    COMMAND ${CMAKE_C_COMPILER} -O2 -DREFERENCE -o ${MPIBIN}/${p}_ref
            ${CMAKE_CURRENT_SOURCE_DIR}/mpi/${p}.c -lm
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/mpi/${p}.c COMMENT "cc ${p}_ref (reference)" VERBATIM)
  add_custom_target(${p}_ref ALL DEPENDS ${MPIBIN}/${p}_ref)
endforeach()
# -lm before Loom's archive on purpose: signgam and lgamma stay per rank.
loom_mpi_program(libc_state SOURCES libc_state.c FLAGS -lm)
loom_mpi_program(libc_state_fortify SOURCES libc_state.c FLAGS -D_FORTIFY_SOURCE=2 -lm)
loom_mpi_program(libc_exit SOURCES libc_exit.c)
# A program that defines some of the archive's names itself (weak definitions).
loom_mpi_program(libc_state_own SOURCES libc_state_own.c)

# Both programs see the same environment: a time zone with summer time (no
# tzdata needed) and an LC_NUMERIC for setlocale(LC_ALL, "").
set(LIBC_ENV env TZ=EST5EDT,M3.2.0,M11.1.0 LC_NUMERIC=C.UTF-8)
function(libc_state_test name n)
  expect(libc_state_${name} --out "libc_compare: [0-9]+ lines identical"
         -- ${LIBC_ENV} ${LIBC_COMPARE} ${MPIBIN}/libc_state_ref ${n}
         -- ${RUN} ${ARGN} -n ${n} ${MPIBIN}/libc_state)
endfunction()
function(libc_exit_test name n how status)
  expect(libc_exit_${name} --out "libc_compare: [0-9]+ lines identical"
         -- ${LIBC_COMPARE} --status ${status} ${MPIBIN}/libc_exit_ref ${n} ${how} ${status}
         -- ${RUN} ${ARGN} -n ${n} ${MPIBIN}/libc_exit ${how} ${status})
endfunction()

# Sanitizer builds (slow, CI < 30 min on 2 cores): the 4-rank runs only.
libc_state_test(4 4)
libc_exit_test(4_return 4 return 0)
libc_exit_test(4_exit 4 exit 0)
libc_exit_test(4_quick_exit 4 quick_exit 0)
if(NOT LOOM_SANITIZE)
  libc_state_test(1 1)
  libc_state_test(64 64)
  libc_state_test(one_worker 16 --workers 1)
  libc_state_test(64_one_worker 64 --workers 1)
  expect(libc_state_fortify_one_worker --out "libc_compare: [0-9]+ lines identical"
         -- ${LIBC_ENV} ${LIBC_COMPARE} ${MPIBIN}/libc_state_ref 16
         -- ${RUN} --workers 1 -n 16 ${MPIBIN}/libc_state_fortify)
  expect(libc_state_singleton --out "libc_compare: [0-9]+ lines identical"
         -- ${LIBC_ENV} ${LIBC_COMPARE} ${MPIBIN}/libc_state_ref 1 -- ${MPIBIN}/libc_state)
  libc_exit_test(1 1 return 0)
  libc_exit_test(64_exit 64 exit 0 --workers 1)
  libc_exit_test(status 1 exit 7)
  libc_exit_test(return_status 1 return 5)
  libc_exit_test(64_quick_exit 64 quick_exit 0 --workers 1)
  libc_exit_test(quick_exit_status 1 quick_exit 4)
  expect(libc_state_own_4 --out "libc_compare: [0-9]+ lines identical"
         -- ${LIBC_COMPARE} ${MPIBIN}/libc_state_own_ref 4 -- ${RUN} -n 4 ${MPIBIN}/libc_state_own)
  expect(libc_exit_singleton --out "libc_compare: [0-9]+ lines identical"
         -- ${LIBC_COMPARE} --status 3 ${MPIBIN}/libc_exit_ref 1 exit 3 -- ${MPIBIN}/libc_exit exit 3)
endif()
