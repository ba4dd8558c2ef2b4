# exit, _exit and crashes from outside the program's own code: a shared
# library it links and threads a rank started (src/runtime/exit.c, issue 18).
loom_mpi_program(exit_lib SHARED SOURCES exit_lib.c)
loom_mpi_program(exits SOURCES exits.c FLAGS -L${MPIBIN} -lexit_lib -Wl,-rpath,${MPIBIN} -pthread)
add_dependencies(mpi_exits mpi_exit_lib)
set(X ${RUN} --timeout 60 -n 4 ${MPIBIN}/exits)
expect(exits_lib --status 5 --err "rank 2 exited with status 5. ending the job" --no-out "went on" -- ${X} lib 2 5)
expect(exits_lib_zero --status 1 --err "rank 1 exited without calling MPI_Finalize" --no-out "went on" -- ${X} lib 1 0)
expect(exits_lib__exit --status 7 --err "rank 3 exited with status 7. ending the job" --no-out "went on" -- ${X} lib_ 3 7)
# Under the sanitizers a rank's threads are not tagged (exit.c).
if(LOOM_SANITIZE)
  return()
endif()
expect(exits_thread --status 6 --err "rank 1 exited with status 6 \\(exit called in a thread the rank started\\)" --no-out "went on" -- ${X} thread 1 6)
expect(exits_thread_zero --status 1 --err "rank 2 called exit\\(0\\) in a thread it started before every rank finished" -- ${X} thread 2 0)
expect(exits_thread_after_finalize --status 0 -- ${X} threadlate 1)
expect(exits_thread_segv --status 139 --err "rank 3 \\(in a thread it started\\) terminated by signal 11" -- ${X} threadsegv 3)
