/*
 * libloom.so: the layers (util, runtime, mpi) linked whole into the one
 * library that Loom programs and mpiexec share. This file only carries the
 * version that `loom-info` and mpiexec --version print.
 */
#include "util/common.h"

LOOM_EXPORT const char loom_version[] = "0.1.0";
