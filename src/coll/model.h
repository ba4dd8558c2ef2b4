/*
 * The cost model's machine parameters (struct coll_model, coll_impl.h) and
 * where they come from: built-in constants fitted on the development
 * machine, replaced by a calibration measured on this machine (calibrate.c)
 * and cached in a file (model.c), and LOOM_COLL_MODEL, which overrides
 * single values last. docs/collectives.md#calibration describes it all.
 */
#ifndef LOOM_COLL_MODEL_H
#define LOOM_COLL_MODEL_H

#include <stddef.h>

#include "runtime/topo.h"
#include "util/common.h"

/* What a calibration measured (or a cache file holds); 0 where nothing was
 * measured (line and wake need two cores). */
struct coll_calib {
    double line_s, wake_s, local_wake_s, copy_bps, mem_bps;
    /* One-way line transfer from core 0 to the nearest core sharing each
     * domain with it (0: no such core); line_s is the farthest of them. */
    double line_share_s[LOOM_NSHARES];
    double copy_l2_bps; /* memcpy inside one core's L2 (not in the model) */
    double elapsed_s;   /* how long the calibration took */
};

/* Measures the parameters on this machine with a scheduler of its own
 * (calibrate.c); the scheduler must not be running. LOOM_OK, or an error
 * with why (len bytes) saying what prevented it. */
int coll_calibrate(struct coll_calib *out, char *why, size_t len) LOOM_MUST_CHECK;

/* Sets coll_model for this process: loads or calibrates the machine's
 * parameters (once, see loom_coll_model_init in coll.h), picks the line
 * transfer time of the farthest topology level the job's workers span, then
 * applies LOOM_COLL_MODEL. From select.c's configure(). */
void coll_model_configure(void);

/* Prints the parameters in use and where they come from (loom-info). */
void coll_model_describe(void *file);

#endif
