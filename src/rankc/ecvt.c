/*
 * ecvt, fcvt, qecvt and qfcvt with their result buffers in this copy of the
 * program (per rank), over the reentrant forms. The buffers hold any result
 * (fcvt of DBL_MAX has 309 digits before the point).
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "rankc.h"

static char ecvt_buf[64], fcvt_buf[400], qecvt_buf[96], qfcvt_buf[5000];

RANKC_WEAK char *ecvt(double value, int ndigit, int *decpt, int *sign)
{
    return ecvt_r(value, ndigit, decpt, sign, ecvt_buf, sizeof ecvt_buf) == 0 ? ecvt_buf : NULL;
}

RANKC_WEAK char *fcvt(double value, int ndigit, int *decpt, int *sign)
{
    return fcvt_r(value, ndigit, decpt, sign, fcvt_buf, sizeof fcvt_buf) == 0 ? fcvt_buf : NULL;
}

RANKC_WEAK char *qecvt(long double value, int ndigit, int *decpt, int *sign)
{
    return qecvt_r(value, ndigit, decpt, sign, qecvt_buf, sizeof qecvt_buf) == 0 ? qecvt_buf : NULL;
}

RANKC_WEAK char *qfcvt(long double value, int ndigit, int *decpt, int *sign)
{
    return qfcvt_r(value, ndigit, decpt, sign, qfcvt_buf, sizeof qfcvt_buf) == 0 ? qfcvt_buf : NULL;
}
