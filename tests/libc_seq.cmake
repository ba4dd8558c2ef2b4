# libc functions with hidden state, per rank and as glibc's (issue 17):
# rand/random/initstate/setstate, the drand48 family (src/rankc/rand.c,
# drand48.c) and getopt/getopt_long/getopt_long_only (src/rankc/getopt.c).
# Each test program is built twice from one source: by the plain compiler
# with -DREFERENCE (no MPI, no Loom, no sanitizer: glibc in a plain process,
# the oracle) and by Loom's mpicc. launcher/libc_seq.sh runs the reference,
# then the MPI program, whose every rank checks its results line by line
# against the reference's output, and compares each rank's stderr (getopt's
# messages) with the reference's.
set(LIBC_SEQ ${CMAKE_CURRENT_SOURCE_DIR}/launcher/libc_seq.sh)
foreach(p libc_rand libc_getopt)
  add_executable(${p}_ref mpi/${p}.c)
  target_compile_definitions(${p}_ref PRIVATE REFERENCE)
  target_include_directories(${p}_ref PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/mpi)
  target_compile_options(${p}_ref PRIVATE -fno-sanitize=all)
  target_link_options(${p}_ref PRIVATE -fno-sanitize=all)
  set_target_properties(${p}_ref PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${MPIBIN})
  loom_mpi_program(${p} SOURCES ${p}.c)
endforeach()

# libc_seq_test(NAME NRANKS [mpiexec options]): both programs at NRANKS.
# libc_getopt gets "-n 7" as `mpiexec -n 4 ./app -n 7` in the issue: every
# rank must parse 7, with its own optind (the 64-rank run puts the reference
# file first, so that getopt moves it behind the options in every rank).
function(libc_seq_test name n)
  set(opts ${ARGN})
  expect(libc_rand_${name} --out "libc_rand: ${n} ranks ok" --out "stderr of all ${n} ranks"
         -- ${LIBC_SEQ} ${n} ${MPIBIN}/libc_rand_ref
         -- ${RUN} --tag-output ${opts} -n ${n} ${MPIBIN}/libc_rand @REF@)
  if(n EQUAL 64)
    set(args @REF@ -n 7)
  else()
    set(args -n 7 @REF@)
  endif()
  expect(libc_getopt_${name} --out "libc_getopt: ${n} ranks ok" --out "stderr of all ${n} ranks"
         --count "<stdout>:libc_getopt: rank [0-9]+ parsed -n 7$" ${n}
         -- ${LIBC_SEQ} ${n} ${MPIBIN}/libc_getopt_ref -n 7
         -- ${RUN} --tag-output ${opts} -n ${n} ${MPIBIN}/libc_getopt ${args})
endfunction()

# A program with its own getopt and rand links and keeps them (weak definitions).
loom_mpi_program(libc_own SOURCES libc_own.c)
expect(libc_own_4 --out "^libc_own: 4 ranks ok$" -- ${RUN} -n 4 ${MPIBIN}/libc_own)

# Under the sanitizers (slow, and CI's time is tight) only the 4-rank runs.
libc_seq_test(4 4)
if(NOT LOOM_SANITIZE)
  libc_seq_test(1 1)
  libc_seq_test(64 64)
  libc_seq_test(one_worker 16 --workers 1)
endif()
