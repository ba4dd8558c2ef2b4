# Calibration of the collective model (src/coll/model.c, calibrate.c): a
# calibration writes the cache file, the next run reads it without
# calibrating, a corrupt / wrong-version / other-machine file is ignored and
# rewritten, LOOM_COLL_CALIBRATE=0 keeps the built-in values, the measured
# values are plausible, mpiexec calibrates before a job starts, jobs starting
# at once calibrate once. Every test has its own file under the build tree
# (LOOM_COLL_MODEL_FILE) and unsets the LOOM_COLL_CALIBRATE=0 that the other
# tests get. No test asserts anything about speed. `ctest -R calib`.
set(CALIB_DIR ${CMAKE_CURRENT_BINARY_DIR}/calib)
file(MAKE_DIRECTORY ${CALIB_DIR})
set(CALIB_INFO ${CMAKE_BINARY_DIR}/bin/loom-info)
# calib_env(file): the environment of a test that uses ${CALIB_DIR}/file.
macro(calib_env file)
  set(F ${CALIB_DIR}/${file})
  set(CENV "env -u LOOM_COLL_CALIBRATE -u LOOM_COLL_MODEL LOOM_COLL_MODEL_FILE=${F}")
endmacro()

# No file: calibrate and write it; then read it back without calibrating.
calib_env(fresh.json)
expect(calib_write_then_read --count "^  source: calibrated now .*no cache file.*, written to ${F}$" 1
       --count "^  source: cache file ${F} \\(calibrated [0-9T:Z-]+ in [0-9.e+]+ ms\\)$" 1
       --out "^  line by level: .*\\(in use\\)"
       -- sh -c "rm -f ${F} && ${CENV} ${CALIB_INFO} && ${CENV} ${CALIB_INFO}")

# The measured values are positive and plausible (bounds 10-100x wider than
# any machine, so that a loaded machine passes too).
file(WRITE ${CALIB_DIR}/plausible.awk [=[
/^Collective model:/ { line = $4; wake = $7; lw = $11; copy = $14; mem = $17 }
END {
    ok = line > 0.001 && line < 100 && wake > 0.001 && wake < 1000 && lw > 0.001 && lw < 1000
    ok = ok && copy > 0.1 && copy < 1000 && mem > 0.1 && mem < 1000
    printf "%s: line %s wake %s local_wake %s copy %s mem %s\n", ok ? "plausible" : "implausible", line, wake, lw, copy, mem
}
]=])
calib_env(plausible.json)
expect(calib_plausible --out "^plausible: line [0-9.e+-]+ wake [0-9.e+-]+ local_wake [0-9.e+-]+ copy [0-9.e+-]+ mem [0-9.e+-]+$"
       -- sh -c "rm -f ${F} && ${CENV} ${CALIB_INFO} | awk -f ${CALIB_DIR}/plausible.awk")

# Files that are not used: each is ignored (saying why), the machine is
# calibrated again and the file rewritten, so the next run reads it.
file(WRITE ${CALIB_DIR}/corrupt.in "{\"format\": \"loom-model\", \"version\": 1,\n")
file(WRITE ${CALIB_DIR}/version.in [=[
{"format": "loom-model", "version": 2, "machine": {}, "created": "x", "calibration_ms": 1,
 "model": {"line": 1e-7, "wake": 1e-6, "local_wake": 1e-7, "copy": 1e10, "mem": 1e10}}
]=])
file(WRITE ${CALIB_DIR}/format.in [=[
{"format": "loom-tuning", "version": 1, "entries": []}
]=])
file(WRITE ${CALIB_DIR}/machine.in [=[
{"format": "loom-model", "version": 1,
 "machine": {"hostname": "no-such-host.invalid", "cpu": "Z80", "pus": 1, "cores": 1,
             "numa_nodes": 1, "packages": 1, "l3_caches": 0},
 "created": "2026-11-23T00:00:00Z", "calibration_ms": 40,
 "model": {"line": 1e-7, "wake": 1e-6, "local_wake": 1e-7, "copy": 1e10, "mem": 1e10},
 "line_levels": {}}
]=])
file(WRITE ${CALIB_DIR}/field.in [=[
{"format": "loom-model", "version": 1, "machine": {}, "created": "x", "calibration_ms": 1,
 "model": {"lines": 1e-7}}
]=])
set(CALIB_BAD
  corrupt "[0-9]+:[0-9]+: .*"
  version "1:[0-9]+: version 2 is not 1"
  format "1:[0-9]+: format \"loom-tuning\" is not \"loom-model\""
  machine "it is for another machine \\(no-such-host.invalid, Z80\\)"
  field "1:[0-9]+: missing \"hostname\"")
while(CALIB_BAD)
  list(POP_FRONT CALIB_BAD name regex)
  calib_env(${name}.json)
  expect(calib_ignore_${name}
         --count "^  source: calibrated now .*cache file ignored: (${regex}).*, written to ${F}$" 1
         --count "^  source: cache file ${F} " 1 --out "^rewritten$"
         -- sh -c "cp ${CALIB_DIR}/${name}.in ${F} && ${CENV} ${CALIB_INFO} && ! cmp -s ${CALIB_DIR}/${name}.in ${F} && echo rewritten && ${CENV} ${CALIB_INFO}")
endwhile()

# LOOM_COLL_CALIBRATE=0: the built-in values, no file read or written; =1:
# calibrated again although the file is valid.
calib_env(off.json)
expect(calib_off --out "^  source: built-in \\(LOOM_COLL_CALIBRATE=0\\)$"
       --out "^Collective model: line 0.07 us, wake 0.5 us \\(same worker 0.15 us\\), copy 20 GB/s, memory 25 GB/s$"
       --out "^no file$"
       -- sh -c "rm -f ${F} && ${CENV} LOOM_COLL_CALIBRATE=0 ${CALIB_INFO} && test ! -e ${F} && echo no file")
calib_env(force.json)
expect(calib_force --count "^  source: calibrated now" 2 --out "LOOM_COLL_CALIBRATE=1\\), written to"
       -- sh -c "rm -f ${F} && ${CENV} ${CALIB_INFO} && ${CENV} ${CALIB_INFO} --calibrate")

# LOOM_COLL_MODEL overrides single values of the calibrated model; a
# synthetic topology keeps the built-in values (the file is the real
# machine's).
calib_env(override.json)
expect(calib_env_override --out "copy 1.5 GB/s" --out "^  source: calibrated now"
       --out "^  LOOM_COLL_MODEL overrides: copy$"
       -- sh -c "rm -f ${F} && ${CENV} LOOM_COLL_MODEL=copy=1.5e9 ${CALIB_INFO}")
calib_env(synthetic.json)
expect(calib_synthetic --out "^  source: built-in \\(synthetic topology" --out "^no file$"
       -- sh -c "rm -f ${F} && ${CENV} HWLOC_SYNTHETIC='package:2 numa:2 core:4 pu:1' ${CALIB_INFO} && test ! -e ${F} && echo no file")

# mpiexec calibrates before the ranks start and writes the file, which the
# job's collectives then use (an Allreduce-heavy program, results checked).
calib_env(job.json)
expect(calib_job --out "^tune_select: 4 ranks ok$" --out "^  source: cache file ${F} "
       -- sh -c "rm -f ${F} && ${CENV} ${RUN} -n 4 ${MPIBIN}/tune_select && ${CENV} ${CALIB_INFO}")

# Four jobs starting at once without a file: one calibrates, under the
# file's lock; the others wait for it and read its file.
calib_env(race.json)
file(WRITE ${CALIB_DIR}/race.sh "rm -f ${F} ${F}.out.*
for i in 1 2 3 4
do
  ${CENV} ${CALIB_INFO} > ${F}.out.$i &
done
wait
cat ${F}.out.*
rm -f ${F}.out.*
")
expect(calib_concurrent --count "^  source: calibrated now" 1 --count "^  source: cache file ${F} " 3
       -- sh ${CALIB_DIR}/race.sh)

# loom-tune --calibrate re-runs the calibration and writes the file.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  calib_env(tune.json)
  expect(calib_loom_tune --out "^  source: calibrated now .*, written to ${F}$"
         --out "^  source: cache file ${F} "
         -- sh -c "rm -f ${F} && ${CENV} ${CMAKE_BINARY_DIR}/bin/loom-tune --calibrate && ${CENV} ${CALIB_INFO}")
endif()
