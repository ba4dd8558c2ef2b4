# Program images (issue 18): ranks share the program's text and read-only
# data and own what they write; each rank costs ~2 memory mappings; a job
# that cannot fit in vm.max_map_count is refused by name; 16,384 ranks start.
# Under TSAN ranks load plain whole copies (src/runtime/image.c): only the
# limit check applies there.
if(LOOM_SANITIZE STREQUAL "thread")
  expect(image_map_limit --status 1
         --err "1024 ranks need about [0-9]+ memory mappings .[0-9]+ per rank., more than this system's limit vm.max_map_count = 2000, which fits about [0-9]+ ranks. raise it .as root: sysctl -w vm.max_map_count=[0-9]+."
         -- env LOOM_MAX_MAP_COUNT=2000 ${RUN} -n 1024 ${MPIBIN}/hello)
  return()
endif()
loom_mpi_program(image_share SOURCES image_share.c)
# An IFUNC symbol: its resolver runs while the program loads, so each rank
# gets a whole copy (then remapped to the shared text).
loom_mpi_program(image_share_ifunc SOURCES image_share.c FLAGS -DWITH_IFUNC)
# A 1 MiB array, for many ranks (each load still writes the data segment once).
loom_mpi_program(image_share_small SOURCES image_share.c FLAGS -DBIG_MIB=1)
foreach(n 1 4 64)
  expect(image_share_${n} --out "image_share: ${n} ranks ok" -- ${RUN} --timeout 100 -n ${n} ${MPIBIN}/image_share)
endforeach()
# The 8 MiB array is not written into each rank's memfd: only the pages the
# loader uses (relocation targets, the dynamic section, the GOT's header).
expect(image_share_data_pages --err "a rank's memfd holds [1-9] of the 20[0-9][0-9] pages of data"
       -- env LOOM_DEBUG=1 ${RUN} --timeout 100 -n 2 ${MPIBIN}/image_share)
expect(image_share_full_4 --out "image_share: 4 ranks ok" -- env LOOM_IMAGE_FULL=1 ${RUN} --timeout 100 -n 4 ${MPIBIN}/image_share)
expect(image_share_ifunc_4 --out "image_share: 4 ranks ok" -- ${RUN} --timeout 100 -n 4 ${MPIBIN}/image_share_ifunc)
expect(image_map_limit --status 1
       --err "1024 ranks need about [0-9]+ memory mappings .2 per rank., more than this system's limit vm.max_map_count = 2000, which fits about [0-9]+ ranks. raise it .as root: sysctl -w vm.max_map_count=[0-9]+."
       -- env LOOM_MAX_MAP_COUNT=2000 ${RUN} -n 1024 ${MPIBIN}/hello)
# Copies made without dlopen (clones of the first): thread-locals, C++
# exceptions, relocated pointers; and the same program loaded by dlopen
# throughout (LOOM_IMAGE_CLONE=0).
loom_mpi_program(image_clone CXX SOURCES image_clone.cpp FLAGS -pthread)
set(CLONE_RANKS 1 2 7 64)
if(LOOM_SANITIZE)
  set(CLONE_RANKS 2 7)
endif()
foreach(n ${CLONE_RANKS})
  expect(image_clone_${n} --out "^image_clone: ${n} ranks ok$" -- ${RUN} -n ${n} ${MPIBIN}/image_clone)
endforeach()
expect(image_clone_one_worker --out "^image_clone: 16 ranks ok$" -- ${RUN} --workers 1 -n 16 ${MPIBIN}/image_clone)
expect(image_clone_dlopen_7 --out "^image_clone: 7 ranks ok$" -- env LOOM_IMAGE_CLONE=0 ${RUN} -n 7 ${MPIBIN}/image_clone)
expect(image_clone_says --err "later copies are clones: .* [1-9][0-9]* TLS module words, [1-9][0-9]* __tls_get_addr"
       -- env LOOM_DEBUG=1 ${RUN} -n 2 ${MPIBIN}/image_clone)
if(LOOM_SANITIZE)
  return()
endif()
# 1024 ranks: at most 3 mappings per rank (the process's own ~150 included).
expect(image_share_1024 --out "image_share: 1024 ranks ok" -- ${RUN} --timeout 200 -n 1024 ${MPIBIN}/image_share_small 3)
expect(image_share_ifunc_64 --out "image_share: 64 ranks ok" -- ${RUN} --timeout 100 -n 64 ${MPIBIN}/image_share_ifunc)
# 16,384 ranks within the default vm.max_map_count (65530): one dlopen and
# 16,383 clones, ~1.5 s here (45 s with a dlopen per rank).
expect(hello_16384 --count "^hello from rank [0-9]+ of 16384$" 16384 -- ${RUN} --timeout 120 -n 16384 ${MPIBIN}/hello)

