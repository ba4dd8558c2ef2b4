# Tuning (src/coll/tune.c, tools/loom-tune): the JSON reader's unit test, a
# table that overrides the model (seen in LOOM_COLL_VERBOSE output, results
# checked), tables with problems (one warning naming file:line:column, then
# ignored), loom-info naming the table, and a quick loom-tune run whose
# table Loom then loads. `ctest -R tune` runs them all.
loom_mpi_program(tune_select SOURCES tune_select.c)
add_test(NAME tune_json_unit COMMAND test_json)
set_tests_properties(tune_json_unit PROPERTIES LABELS unit TIMEOUT 60)

set(TUNE_DIR ${CMAKE_CURRENT_BINARY_DIR}/tune)
file(MAKE_DIRECTORY ${TUNE_DIR})
set(TUNE_SEL ${MPIBIN}/tune_select)

# Bcast on 4 ranks up to 4 KiB -> pipeline (the model says direct), the
# Barrier and small Allreduce on 4 ranks; on 5 ranks only with 99 workers.
file(WRITE ${TUNE_DIR}/forced.json [=[
{
  "format": "loom-tuning",
  "version": 1,
  "machine": {"cpu": "test", "cores": 2},
  "created": "2026-11-23T00:00:00Z",
  "entries": [
    {"collective": "bcast", "ranks": 4, "min_bytes": 0, "max_bytes": 4096, "algorithm": "pipeline"},
    {"collective": "barrier", "ranks": 4, "min_bytes": 0, "max_bytes": 0, "algorithm": "dissemination"},
    {"collective": "Allreduce", "ranks": 4, "min_bytes": 0, "max_bytes": 1024, "algorithm": "reduce_bcast",
     "sizes": [8, 1024], "measured_us": [1.5, 2.25]},
    {"collective": "bcast", "ranks": 5, "workers": 99, "min_bytes": 0, "max_bytes": 4096, "algorithm": "pipeline"}
  ]
}
]=])
set(TUNE_ENV env LOOM_COLL_VERBOSE=1 LOOM_COLL_TUNING=${TUNE_DIR}/forced.json)
expect(tune_table_forced --out "^tune_select: 4 ranks ok$"
       --err "MPI_Bcast on 4 ranks, 1000 bytes:.* -> pipeline \\(tuning table\\)$"
       --err "MPI_Bcast on 4 ranks, 200000 bytes:.* -> [a-z_]+$"
       --err "MPI_Barrier on 4 ranks, 0 bytes:.* -> dissemination \\(tuning table\\)$"
       --err "MPI_Allreduce on 4 ranks, 32 bytes:.* -> reduce_bcast \\(tuning table\\)$"
       -- ${TUNE_ENV} ${RUN} -n 4 ${TUNE_SEL})
# LOOM_COLL_<COLLECTIVE> comes before the table.
expect(tune_table_env_first --out "^tune_select: 4 ranks ok$"
       --err "MPI_Bcast on 4 ranks, 1000 bytes:.* -> direct \\(forced\\)$"
       -- ${TUNE_ENV} LOOM_COLL_BCAST=direct ${RUN} -n 4 ${TUNE_SEL})
# Other rank counts, or another worker count than the entry names: the model.
foreach(n 3 5)
  expect(tune_table_ranks_${n} --out "^tune_select: ${n} ranks ok$" --out "MPI_Bcast on ${n} ranks"
         --no-out "tuning table"
         -- sh -c "LOOM_COLL_VERBOSE=1 LOOM_COLL_TUNING=${TUNE_DIR}/forced.json ${RUN} -n ${n} ${TUNE_SEL} 2>&1")
endforeach()
expect(tune_table_info --out "^Tuning table: .*/forced.json \\(4 entries"
       -- env LOOM_COLL_TUNING=${TUNE_DIR}/forced.json ${CMAKE_BINARY_DIR}/bin/loom-info)
expect(tune_table_none --out "^Tuning table: none \\(LOOM_COLL_TUNING=none\\)"
       -- env LOOM_COLL_TUNING=none ${CMAKE_BINARY_DIR}/bin/loom-info)

# Tables with one problem each: the warning names the file, line and column
# and the problem; the job runs on with the model's choices.
file(WRITE ${TUNE_DIR}/bad_algorithm.json [=[
{"format": "loom-tuning", "version": 1,
 "entries": [{"collective": "bcast", "ranks": 4, "min_bytes": 0, "max_bytes": 4096,
              "algorithm": "pipelined"}]}
]=])
file(WRITE ${TUNE_DIR}/bad_syntax.json [=[
{"format": "loom-tuning", "version": 1,
 "entries": [{"collective": "bcast", "ranks": 4, "min_bytes": 0, "max_bytes": 4096,
              "algorithm": "pipeline",}]}
]=])
file(WRITE ${TUNE_DIR}/bad_version.json [=[
{"format": "loom-tuning", "version": 2, "entries": []}
]=])
file(WRITE ${TUNE_DIR}/bad_field.json [=[
{"format": "loom-tuning", "version": 1,
 "entries": [{"collective": "bcast", "rank": 4, "min_bytes": 0, "max_bytes": 4096,
              "algorithm": "pipeline"}]}
]=])
file(WRITE ${TUNE_DIR}/bad_type.json [=[
{"format": "loom-tuning", "version": 1,
 "entries": [{"collective": "bcast", "ranks": "4", "min_bytes": 0, "max_bytes": 4096,
              "algorithm": "pipeline"}]}
]=])
file(WRITE ${TUNE_DIR}/bad_range.json [=[
{"format": "loom-tuning", "version": 1,
 "entries": [{"collective": "bcast", "ranks": 4, "min_bytes": 10, "max_bytes": 9,
              "algorithm": "pipeline"}]}
]=])
set(TUNE_BAD
  bad_algorithm "bad_algorithm.json:3:28: entry 0: Bcast has no algorithm \"pipelined\" \\(valid: direct twostage pipeline\\)"
  bad_syntax "bad_syntax.json:3:39: trailing comma before '}'"
  bad_version "bad_version.json:1:38: version 2 is not supported"
  bad_field "bad_field.json:2:46: entry 0: unknown member \"rank\""
  bad_type "bad_type.json:2:47: entry 0: \"ranks\" must be a number, not a string"
  bad_range "bad_range.json:2:80: entry 0: max_bytes 9 is below min_bytes 10"
  missing "missing.json: cannot read it \\(No such file or directory\\)")
while(TUNE_BAD)
  list(POP_FRONT TUNE_BAD name regex)
  expect(tune_table_${name} --out "^tune_select: 4 ranks ok$"
         --err "^loom: warning: tuning table .*${regex}.*. the table is ignored"
         --err "MPI_Bcast on 4 ranks, 1000 bytes:.* -> [a-z_]+$"
         -- env LOOM_COLL_VERBOSE=1 LOOM_COLL_TUNING=${TUNE_DIR}/${name}.json ${RUN} -n 4 ${TUNE_SEL})
endwhile()
expect(tune_table_ignored_once --count "warning: tuning table" 1 --no-out "tuning table\\)"
       -- sh -c "LOOM_COLL_VERBOSE=1 LOOM_COLL_TUNING=${TUNE_DIR}/bad_algorithm.json ${RUN} -n 4 ${TUNE_SEL} 2>&1")

# A quick loom-tune run (2 ranks, Barrier and Bcast, 8 to 64 bytes) writes a
# table that Loom loads without a warning.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(TUNE_OUT ${TUNE_DIR}/quick.json)
  expect(tune_loom_tune_quick --out "^  all +[0-9]+ of +[0-9]+ points"
         --out "wrote [0-9]+ entries to ${TUNE_OUT}" --out "^Tuning table: ${TUNE_OUT} \\([0-9]+ entries"
         --no-out "warning"
         -- sh -c "rm -f ${TUNE_OUT} && ${CMAKE_BINARY_DIR}/bin/loom-tune --quick --ranks 2 --collectives barrier,bcast --sizes 8:64 --out ${TUNE_OUT} && LOOM_COLL_TUNING=${TUNE_OUT} ${CMAKE_BINARY_DIR}/bin/loom-info 2>&1")
endif()
