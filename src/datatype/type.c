/*
 * Datatype objects: the predefined types, the constructors (every one builds
 * the flattened block list from its contents, so MPI_Type_get_contents and a
 * clone need nothing else), reference counts, names, and the basic-element
 * count behind MPI_Get_elements.
 *
 * A constructor's layout is a sequence of copies of its old types placed at
 * displacements; builder_add() appends `count` consecutive copies of one old
 * type, merging each block with the previous one when they touch, and folds
 * the copies' bounds into the new type's.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "datatype/datatype.h"
#include "util/handle.h"

/* What the engine keeps beside struct loom_type (its priv). */
struct dt_priv {
    int combiner;
    int ni, na, nd;
    int *ints;
    MPI_Aint *aints;
    struct loom_type **types; /* retained */
    size_t *starts;           /* message offset of each block within an element */
    size_t align;             /* alignment of the strictest basic type (struct padding) */
    bool explicit_bounds;     /* lb/ub set by resized (no struct padding) */
    /* The type map holds an MPI_LB / MPI_UB marker (MPI-1 3.12.3): then
     * that bound is the extreme marker's, whatever the data, and an ub
     * marker stops the struct padding. The bounds set by resized,
     * subarray and darray are not markers in this sense (as in MPICH: a
     * struct of them takes the extreme of their bounds and its data's). */
    bool lb_marked, ub_marked;
    size_t pair_first; /* pair types: bytes of the first member */
    char name[MPI_MAX_OBJECT_NAME];
};

static struct dt_priv *priv_of(const struct loom_type *t)
{
    return (struct dt_priv *)t->priv;
}

/* ---- predefined types ---- */

struct float_int {
    float a;
    int b;
};
struct double_int {
    double a;
    int b;
};
struct long_int {
    long a;
    int b;
};
struct two_int {
    int a;
    int b;
};
struct short_int {
    short a;
    int b;
};
struct long_double_int {
    long double a;
    int b;
};
struct two_float {
    float a;
    float b;
};
struct two_double {
    double a;
    double b;
};

#define NPRE (LOOM_NUM_PREDEFINED_TYPES + 1)
struct loom_type loom_pre_types[NPRE];
static struct dt_priv pre_priv[NPRE];
static struct loom_type_block pre_blocks[NPRE][2];
static size_t pre_starts[NPRE][2];
static pthread_once_t pre_once = PTHREAD_ONCE_INIT;
_Atomic bool loom_pre_types_ready; /* pre_init ran: no pthread_once on each lookup */
static pthread_mutex_t pre_name_lock = PTHREAD_MUTEX_INITIALIZER;

static void pre_set(MPI_Datatype h, const char *name, size_t size, size_t align, size_t first,
                    size_t second_off, size_t extent)
{
    unsigned n = LOOM_HANDLE_INDEX(h);
    struct loom_type *t = &loom_pre_types[n];
    struct dt_priv *p = &pre_priv[n];
    t->handle = h;
    t->committed = true;
    t->predefined = true;
    t->lb = 0;
    t->ub = (MPI_Aint)extent;
    t->true_lb = 0;
    t->blocks = pre_blocks[n];
    t->priv = p;
    t->basic = h;
    p->combiner = MPI_COMBINER_NAMED;
    p->align = align;
    p->starts = pre_starts[n];
    snprintf(p->name, sizeof p->name, "%s", name);
    if (!first) {
        t->size = size;
        t->nbasic = 1;
        t->nblocks = 1;
        t->blocks[0] = (struct loom_type_block){0, size};
        t->true_ub = (MPI_Aint)size;
    } else {
        size_t second = size - first;
        t->size = size;
        t->nbasic = 2;
        p->pair_first = first;
        t->blocks[0] = (struct loom_type_block){0, first};
        if (second_off == first) {
            t->nblocks = 1;
            t->blocks[0].len = size;
        } else {
            t->nblocks = 2;
            t->blocks[1] = (struct loom_type_block){(MPI_Aint)second_off, second};
            pre_starts[n][1] = first;
        }
        t->true_ub = (MPI_Aint)(second_off + second);
    }
    t->contig = t->nblocks == 1 && t->blocks[0].len == t->size && extent == t->size;
}

#define SIMPLE(h, ctype) pre_set(h, #h, sizeof(ctype), _Alignof(ctype), 0, 0, sizeof(ctype))
#define PAIR(h, st)                                                                                \
    pre_set(h, #h, sizeof(((struct st *)0)->a) + sizeof(((struct st *)0)->b), _Alignof(struct st), \
            sizeof(((struct st *)0)->a), offsetof(struct st, b), sizeof(struct st))

/* MPI_LB and MPI_UB: no data, extent 0, a marker of the bound. */
static void pre_marker(MPI_Datatype h, const char *name, bool lb)
{
    pre_set(h, name, 0, 1, 0, 0, 0);
    struct loom_type *t = &loom_pre_types[LOOM_HANDLE_INDEX(h)];
    t->nblocks = 0;
    t->nbasic = 0;
    t->basic = 0;
    t->contig = false;
    pre_priv[LOOM_HANDLE_INDEX(h)].lb_marked = lb;
    pre_priv[LOOM_HANDLE_INDEX(h)].ub_marked = !lb;
}

static void pre_init(void)
{
    SIMPLE(MPI_CHAR, char);
    SIMPLE(MPI_SIGNED_CHAR, signed char);
    SIMPLE(MPI_UNSIGNED_CHAR, unsigned char);
    SIMPLE(MPI_BYTE, unsigned char);
    SIMPLE(MPI_WCHAR, wchar_t);
    SIMPLE(MPI_SHORT, short);
    SIMPLE(MPI_UNSIGNED_SHORT, unsigned short);
    SIMPLE(MPI_INT, int);
    SIMPLE(MPI_UNSIGNED, unsigned);
    SIMPLE(MPI_LONG, long);
    SIMPLE(MPI_UNSIGNED_LONG, unsigned long);
    SIMPLE(MPI_LONG_LONG_INT, long long);
    SIMPLE(MPI_UNSIGNED_LONG_LONG, unsigned long long);
    SIMPLE(MPI_FLOAT, float);
    SIMPLE(MPI_DOUBLE, double);
    SIMPLE(MPI_LONG_DOUBLE, long double);
    SIMPLE(MPI_INT8_T, int8_t);
    SIMPLE(MPI_INT16_T, int16_t);
    SIMPLE(MPI_INT32_T, int32_t);
    SIMPLE(MPI_INT64_T, int64_t);
    SIMPLE(MPI_UINT8_T, uint8_t);
    SIMPLE(MPI_UINT16_T, uint16_t);
    SIMPLE(MPI_UINT32_T, uint32_t);
    SIMPLE(MPI_UINT64_T, uint64_t);
    SIMPLE(MPI_C_BOOL, _Bool);
    SIMPLE(MPI_C_FLOAT_COMPLEX, float _Complex);
    SIMPLE(MPI_C_DOUBLE_COMPLEX, double _Complex);
    SIMPLE(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex);
    SIMPLE(MPI_AINT, MPI_Aint);
    SIMPLE(MPI_OFFSET, MPI_Offset);
    SIMPLE(MPI_COUNT, MPI_Count);
    SIMPLE(MPI_PACKED, unsigned char);
    PAIR(MPI_FLOAT_INT, float_int);
    PAIR(MPI_DOUBLE_INT, double_int);
    PAIR(MPI_LONG_INT, long_int);
    PAIR(MPI_2INT, two_int);
    PAIR(MPI_SHORT_INT, short_int);
    PAIR(MPI_LONG_DOUBLE_INT, long_double_int);
    /* Fortran's types as gfortran lays them out on this platform. */
    PAIR(MPI_2INTEGER, two_int);
    PAIR(MPI_2REAL, two_float);
    PAIR(MPI_2DOUBLE_PRECISION, two_double);
    SIMPLE(MPI_CHARACTER, char);
    SIMPLE(MPI_LOGICAL, int32_t);
    SIMPLE(MPI_INTEGER, int32_t);
    SIMPLE(MPI_REAL, float);
    SIMPLE(MPI_DOUBLE_PRECISION, double);
    SIMPLE(MPI_COMPLEX, float _Complex);
    SIMPLE(MPI_DOUBLE_COMPLEX, double _Complex);
    SIMPLE(MPI_INTEGER1, int8_t);
    SIMPLE(MPI_INTEGER2, int16_t);
    SIMPLE(MPI_INTEGER4, int32_t);
    SIMPLE(MPI_INTEGER8, int64_t);
    SIMPLE(MPI_REAL4, float);
    SIMPLE(MPI_REAL8, double);
    SIMPLE(MPI_REAL16, _Float128);
    SIMPLE(MPI_COMPLEX8, float _Complex);
    SIMPLE(MPI_COMPLEX16, double _Complex);
    SIMPLE(MPI_COMPLEX32, _Complex _Float128);
    SIMPLE(MPI_CXX_BOOL, _Bool);
    SIMPLE(MPI_CXX_FLOAT_COMPLEX, float _Complex);
    SIMPLE(MPI_CXX_DOUBLE_COMPLEX, double _Complex);
    SIMPLE(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex);
    pre_marker(MPI_LB, "MPI_LB", true);
    pre_marker(MPI_UB, "MPI_UB", false);
}

static bool is_pair(int basic)
{
    return basic >= MPI_FLOAT_INT && basic <= MPI_2DOUBLE_PRECISION;
}

struct loom_type *loom_type_get_slow(MPI_Datatype h)
{
    if (loom_handle_is_builtin(h, LOOM_KIND_DATATYPE)) {
        unsigned n = LOOM_HANDLE_INDEX(h);
        if (n == 0 || n > LOOM_NUM_PREDEFINED_TYPES)
            return NULL;
        if (LOOM_UNLIKELY(!atomic_load_explicit(&loom_pre_types_ready, memory_order_acquire))) {
            pthread_once(&pre_once, pre_init);
            atomic_store_explicit(&loom_pre_types_ready, true, memory_order_release);
        }
        return &loom_pre_types[n];
    }
    return loom_handle_get(LOOM_KIND_DATATYPE, h);
}

const char *loom_type_problem(MPI_Datatype h, bool need_commit, char *buf, size_t len)
{
    if (h == MPI_DATATYPE_NULL)
        return "is MPI_DATATYPE_NULL";
    struct loom_type *t = loom_type_get(h);
    if (!t) {
        if (LOOM_HANDLE_KIND(h) == LOOM_KIND_DATATYPE &&
            LOOM_HANDLE_STORAGE(h) == LOOM_HANDLE_TABLE)
            snprintf(buf, len, "0x%x was freed or never created", (unsigned)h);
        else
            snprintf(buf, len, "0x%x is not a datatype handle", (unsigned)h);
        return buf;
    }
    if (need_commit && !t->committed) {
        snprintf(buf, len, "0x%x is not committed", (unsigned)h);
        return buf;
    }
    return NULL;
}

/* ---- reference counts ---- */

static void type_destroy(struct loom_type *t)
{
    struct dt_priv *p = priv_of(t);
    for (int i = 0; i < p->nd; i++)
        loom_type_release(p->types[i]);
    free(p->ints);
    free(p->aints);
    free(p->types);
    free(p->starts);
    free(p);
    free(t->blocks);
    free(t);
}

void loom_type_retain(struct loom_type *t)
{
    if (!t->predefined)
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
}

void loom_type_release(struct loom_type *t)
{
    if (t->predefined)
        return;
    /* Order this owner's last uses before another owner's destruction. */
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
        type_destroy(t);
}

void loom_type_commit(struct loom_type *t)
{
    /* Predefined types are shared by every rank and born committed. */
    if (!t->predefined)
        t->committed = true;
}

void loom_type_free(struct loom_type *t)
{
    loom_handle_free(LOOM_KIND_DATATYPE, t->handle);
    loom_type_release(t);
}

/* ---- the builder ---- */

struct builder {
    struct loom_type_block *blocks;
    size_t n, cap;
    size_t size;
    MPI_Count nbasic;
    int basic; /* -1: none seen yet */
    bool any;  /* some copy placed (bounds valid) */
    MPI_Aint lb, ub, true_lb, true_ub;
    bool true_any;             /* some data placed (true bounds valid) */
    bool lb_marked, ub_marked; /* some copy has a marker: its bounds win */
    bool explicit_bounds;
    MPI_Aint mlb, mub; /* the markers' bounds */
    size_t align;
    bool overflow, nomem;
};

static void add_block(struct builder *b, MPI_Aint off, size_t len)
{
    if (len == 0)
        return;
    if (b->n && b->blocks[b->n - 1].off + (MPI_Aint)b->blocks[b->n - 1].len == off) {
        b->blocks[b->n - 1].len += len;
        return;
    }
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 8;
        struct loom_type_block *nb = realloc(b->blocks, cap * sizeof *nb);
        if (!nb) {
            b->nomem = true;
            return;
        }
        b->blocks = nb;
        b->cap = cap;
    }
    b->blocks[b->n++] = (struct loom_type_block){off, len};
}

/* Appends `count` copies of old, the first with its origin at disp. */
static void builder_add(struct builder *b, const struct loom_type *old, MPI_Aint disp,
                        MPI_Count count)
{
    if (count <= 0 || b->overflow || b->nomem)
        return;
    MPI_Aint ext = old->ub - old->lb, span, bytes, nb;
    if (__builtin_mul_overflow((MPI_Aint)(count - 1), ext, &span) ||
        __builtin_mul_overflow((MPI_Aint)count, (MPI_Aint)old->size, &bytes) ||
        __builtin_add_overflow((MPI_Aint)b->size, bytes, &nb) ||
        __builtin_mul_overflow((MPI_Aint)count, (MPI_Aint)old->nbasic, &bytes)) {
        b->overflow = true;
        return;
    }
    MPI_Aint lo = span < 0 ? span : 0, hi = span > 0 ? span : 0;
    MPI_Aint lb = disp + old->lb + lo, ub = disp + old->ub + hi;
    MPI_Aint tlb = disp + old->true_lb + lo, tub = disp + old->true_ub + hi;
    struct dt_priv *op = priv_of(old);
    /* MPI_LB and MPI_UB place no data: they count as markers only (as in
     * MPICH; an lb marker does not raise the ub of the data, nor an ub
     * marker lower its lb). */
    if (!(old->predefined && (op->lb_marked || op->ub_marked))) {
        if (!b->any) {
            b->lb = lb, b->ub = ub;
            b->any = true;
        } else {
            b->lb = lb < b->lb ? lb : b->lb;
            b->ub = ub > b->ub ? ub : b->ub;
        }
        if (!b->true_any) {
            b->true_lb = tlb, b->true_ub = tub;
            b->true_any = true;
        } else {
            b->true_lb = tlb < b->true_lb ? tlb : b->true_lb;
            b->true_ub = tub > b->true_ub ? tub : b->true_ub;
        }
    }
    if (op->lb_marked) {
        b->mlb = b->lb_marked && b->mlb < lb ? b->mlb : lb;
        b->lb_marked = true;
    }
    if (op->ub_marked) {
        b->mub = b->ub_marked && b->mub > ub ? b->mub : ub;
        b->ub_marked = true;
    }
    if (op->align > b->align)
        b->align = op->align;
    b->explicit_bounds |= op->explicit_bounds;
    b->size = (size_t)nb;
    b->nbasic += count * old->nbasic;
    if (old->size) {
        if (b->basic == -1)
            b->basic = old->basic;
        else if (b->basic != old->basic)
            b->basic = 0;
    }
    if (old->contig) {
        add_block(b, disp + old->blocks[0].off, (size_t)(count * (MPI_Count)old->size));
        return;
    }
    for (MPI_Count i = 0; i < count && !b->nomem; i++)
        for (size_t j = 0; j < old->nblocks; j++)
            add_block(b, disp + (MPI_Aint)i * ext + old->blocks[j].off, old->blocks[j].len);
}

/* Runs of owned indices along one dimension of a darray. */
struct run {
    MPI_Aint start, len;
};

/* The runs process coordinate c owns of a dimension of g elements over p
 * processes; NULL with *n_p = 0 when it owns none, or on NOMEM (*nomem_p). */
static struct run *darray_runs(int g, int distrib, int darg, int p, int c, size_t *n_p,
                               bool *nomem_p)
{
    *n_p = 0;
    struct run *r;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        r = malloc(sizeof *r);
        if (!r)
            goto err_nomem;
        r[0] = (struct run){0, g};
        *n_p = 1;
        return r;
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        MPI_Aint b = darg == MPI_DISTRIBUTE_DFLT_DARG ? ((MPI_Aint)g + p - 1) / p : darg;
        MPI_Aint s = (MPI_Aint)c * b;
        if (s >= g)
            return NULL;
        r = malloc(sizeof *r);
        if (!r)
            goto err_nomem;
        r[0] = (struct run){s, s + b > g ? g - s : b};
        *n_p = 1;
        return r;
    }
    MPI_Aint b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    size_t n = 0;
    for (MPI_Aint s = (MPI_Aint)c * b; s < g; s += (MPI_Aint)p * b)
        n++;
    if (!n)
        return NULL;
    r = malloc(n * sizeof *r);
    if (!r)
        goto err_nomem;
    n = 0;
    for (MPI_Aint s = (MPI_Aint)c * b; s < g; s += (MPI_Aint)p * b)
        r[n++] = (struct run){s, s + b > g ? g - s : b};
    *n_p = n;
    return r;
err_nomem:
    *nomem_p = true;
    return NULL;
}

/* Places the copies of old of a (sub)array: dimension d (0 = slowest) holds
 * runs[d], elements of dimension d are stride[d] bytes apart. */
static void array_fill(struct builder *b, const struct loom_type *old, int nd,
                       struct run *const *runs, const size_t *nruns, const MPI_Aint *stride, int d,
                       MPI_Aint base)
{
    if (d == nd - 1) {
        for (size_t k = 0; k < nruns[d]; k++)
            builder_add(b, old, base + runs[d][k].start * stride[d], runs[d][k].len);
        return;
    }
    for (size_t k = 0; k < nruns[d]; k++)
        for (MPI_Aint i = 0; i < runs[d][k].len; i++)
            array_fill(b, old, nd, runs, nruns, stride, d + 1,
                       base + (runs[d][k].start + i) * stride[d]);
}

/* Subarray (darray when distribs) layout; sets *total_p = elements of the whole array. */
static void build_array(struct builder *b, const struct loom_type *old, int nd, const int *sizes,
                        const int *subsizes, const int *starts, const int *distribs,
                        const int *dargs, const int *psizes, int rank, int order, MPI_Aint *total_p)
{
    struct run **runs = calloc((size_t)nd, sizeof *runs);
    size_t *nruns = calloc((size_t)nd, sizeof *nruns);
    MPI_Aint *stride = calloc((size_t)nd, sizeof *stride);
    int *coords = calloc((size_t)nd, sizeof *coords);
    if (!runs || !nruns || !stride || !coords) {
        b->nomem = true;
        goto out;
    }
    /* Process grid coordinates are row-major whatever the array order. */
    if (distribs) {
        int r = rank;
        for (int i = nd - 1; i >= 0; i--) {
            coords[i] = r % psizes[i];
            r /= psizes[i];
        }
    }
    MPI_Aint ext = old->ub - old->lb, s = ext, total = 1;
    bool empty = false;
    for (int k = 0; k < nd; k++) {
        /* d counts from the slowest dimension; i is the argument index. */
        int d = nd - 1 - k;
        int i = order == MPI_ORDER_C ? d : k;
        stride[d] = s;
        if (__builtin_mul_overflow(s, (MPI_Aint)sizes[i], &s) ||
            __builtin_mul_overflow(total, (MPI_Aint)sizes[i], &total)) {
            b->overflow = true;
            goto out;
        }
        if (distribs) {
            runs[d] = darray_runs(sizes[i], distribs[i], dargs[i], psizes[i], coords[i], &nruns[d],
                                  &b->nomem);
        } else if (subsizes[i] > 0) {
            runs[d] = malloc(sizeof **runs);
            if (runs[d]) {
                runs[d][0] = (struct run){starts[i], subsizes[i]};
                nruns[d] = 1;
            } else {
                b->nomem = true;
            }
        }
        if (b->nomem)
            goto out;
        if (!nruns[d])
            empty = true;
    }
    *total_p = total;
    if (!empty)
        array_fill(b, old, nd, runs, nruns, stride, 0, 0);
out:
    if (runs)
        for (int i = 0; i < nd; i++)
            free(runs[i]);
    free(runs);
    free(nruns);
    free(stride);
    free(coords);
}

/* Number of ints, aints and types in the contents of a constructor. */
static void contents_counts(int combiner, const int *ints, int *ni, int *na, int *nd)
{
    int c = ints ? ints[0] : 0;
    switch (combiner) {
    case MPI_COMBINER_DUP:
        *ni = 0, *na = 0, *nd = 1;
        break;
    case MPI_COMBINER_CONTIGUOUS:
        *ni = 1, *na = 0, *nd = 1;
        break;
    case MPI_COMBINER_VECTOR:
        *ni = 3, *na = 0, *nd = 1;
        break;
    case MPI_COMBINER_HVECTOR:
        *ni = 2, *na = 1, *nd = 1;
        break;
    case MPI_COMBINER_INDEXED:
        *ni = 2 * c + 1, *na = 0, *nd = 1;
        break;
    case MPI_COMBINER_HINDEXED:
        *ni = c + 1, *na = c, *nd = 1;
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        *ni = c + 2, *na = 0, *nd = 1;
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        *ni = 2, *na = c, *nd = 1;
        break;
    case MPI_COMBINER_STRUCT:
        *ni = c + 1, *na = c, *nd = c;
        break;
    case MPI_COMBINER_SUBARRAY:
        *ni = 3 * c + 2, *na = 0, *nd = 1;
        break;
    case MPI_COMBINER_DARRAY:
        *ni = 4 * ints[2] + 4, *na = 0, *nd = 1;
        break;
    case MPI_COMBINER_RESIZED:
        *ni = 0, *na = 2, *nd = 1;
        break;
    case MPI_COMBINER_F90_INTEGER:
        *ni = 1, *na = 0, *nd = 0;
        break;
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
        *ni = 2, *na = 0, *nd = 0;
        break;
    default:
        *ni = 0, *na = 0, *nd = 0;
        break;
    }
}

static void *dup_array(const void *a, size_t n, size_t each, bool *nomem)
{
    if (!n)
        return NULL;
    void *c = malloc(n * each);
    if (!c)
        *nomem = true;
    else
        memcpy(c, a, n * each);
    return c;
}

int loom_type_create(int combiner, const int *ints, const MPI_Aint *aints,
                     struct loom_type *const *types, struct loom_type **new_p)
{
    struct builder b = {.basic = -1, .align = 1};
    struct loom_type *t0 = types[0];
    MPI_Aint ext0 = t0->ub - t0->lb;
    bool set_bounds = false, pad = false;
    MPI_Aint new_lb = 0, new_ub = 0;
    switch (combiner) {
    case MPI_COMBINER_DUP:
        builder_add(&b, t0, 0, 1);
        set_bounds = true, new_lb = t0->lb, new_ub = t0->ub;
        break;
    case MPI_COMBINER_F90_INTEGER:
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
        /* types[0]: the predefined type of that kind (not in the contents). */
        builder_add(&b, t0, 0, 1);
        break;
    case MPI_COMBINER_RESIZED:
        builder_add(&b, t0, 0, 1);
        set_bounds = true, new_lb = aints[0], new_ub = aints[0] + aints[1];
        break;
    case MPI_COMBINER_CONTIGUOUS:
        builder_add(&b, t0, 0, ints[0]);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        MPI_Aint stride = combiner == MPI_COMBINER_VECTOR ? (MPI_Aint)ints[2] * ext0 : aints[0];
        for (int i = 0; i < ints[0]; i++)
            builder_add(&b, t0, (MPI_Aint)i * stride, ints[1]);
        break;
    }
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < ints[0]; i++)
            builder_add(&b, t0, (MPI_Aint)ints[1 + ints[0] + i] * ext0, ints[1 + i]);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < ints[0]; i++)
            builder_add(&b, t0, aints[i], ints[1 + i]);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int i = 0; i < ints[0]; i++)
            builder_add(&b, t0, (MPI_Aint)ints[2 + i] * ext0, ints[1]);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < ints[0]; i++)
            builder_add(&b, t0, aints[i], ints[1]);
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < ints[0]; i++)
            builder_add(&b, types[i], aints[i], ints[1 + i]);
        pad = true;
        break;
    case MPI_COMBINER_SUBARRAY: {
        int nd = ints[0];
        MPI_Aint total = 0;
        build_array(&b, t0, nd, ints + 1, ints + 1 + nd, ints + 1 + 2 * nd, NULL, NULL, NULL, 0,
                    ints[1 + 3 * nd], &total);
        set_bounds = true, new_lb = 0, new_ub = total * ext0;
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int nd = ints[2];
        MPI_Aint total = 0;
        build_array(&b, t0, nd, ints + 3, NULL, NULL, ints + 3 + nd, ints + 3 + 2 * nd,
                    ints + 3 + 3 * nd, ints[1], ints[3 + 4 * nd], &total);
        set_bounds = true, new_lb = 0, new_ub = total * ext0;
        break;
    }
    default:
        return LOOM_ERR_INVALID;
    }
    int rc = b.nomem ? LOOM_ERR_NOMEM : b.overflow ? LOOM_ERR_INVALID : LOOM_OK;
    if (rc)
        goto err_blocks;

    struct loom_type *t = calloc(1, sizeof *t);
    struct dt_priv *p = calloc(1, sizeof *p);
    rc = LOOM_ERR_NOMEM;
    if (!t || !p)
        goto err_obj;
    t->size = b.size;
    t->nbasic = b.nbasic;
    t->basic = b.basic == -1 ? 0 : b.basic;
    t->nblocks = b.n;
    t->blocks = b.blocks;
    b.blocks = NULL;
    if (b.any)
        t->lb = b.lb, t->ub = b.ub;
    if (b.lb_marked)
        t->lb = b.mlb;
    if (b.ub_marked)
        t->ub = b.mub;
    if (b.true_any)
        t->true_lb = b.true_lb, t->true_ub = b.true_ub;
    if (set_bounds) {
        t->lb = new_lb, t->ub = new_ub;
        if (combiner != MPI_COMBINER_DUP)
            b.explicit_bounds = true;
    }
    if (pad && !b.explicit_bounds && !b.ub_marked && b.align > 1) {
        MPI_Aint ext = t->ub - t->lb, r = ext % (MPI_Aint)b.align;
        if (r)
            t->ub += (MPI_Aint)b.align - r;
    }
    t->contig =
        t->nblocks == 1 && t->blocks[0].len == t->size && t->ub - t->lb == (MPI_Aint)t->size;
    p->combiner = combiner;
    p->align = b.align;
    p->explicit_bounds = b.explicit_bounds;
    p->lb_marked = b.lb_marked;
    p->ub_marked = b.ub_marked;
    contents_counts(combiner, ints, &p->ni, &p->na, &p->nd);
    bool nomem = false;
    p->ints = dup_array(ints, (size_t)p->ni, sizeof *ints, &nomem);
    p->aints = dup_array(aints, (size_t)p->na, sizeof *aints, &nomem);
    p->types = dup_array(types, (size_t)p->nd, sizeof *types, &nomem);
    p->starts = t->nblocks ? malloc(t->nblocks * sizeof *p->starts) : NULL;
    if (nomem || (t->nblocks && !p->starts))
        goto err_contents;
    size_t at = 0;
    for (size_t i = 0; i < t->nblocks; i++) {
        p->starts[i] = at;
        at += t->blocks[i].len;
    }
    t->priv = p;
    atomic_init(&t->refs, 1);
    t->handle = loom_handle_alloc(LOOM_KIND_DATATYPE, t);
    if (!t->handle)
        goto err_contents;
    for (int i = 0; i < p->nd; i++)
        loom_type_retain(p->types[i]);
    *new_p = t;
    return LOOM_OK;

err_contents:
    free(p->ints);
    free(p->aints);
    free(p->types);
    free(p->starts);
    free(t->blocks);
err_obj:
    free(t);
    free(p);
err_blocks:
    free(b.blocks);
    return rc;
}

int loom_type_clone(struct loom_type *t, struct loom_type **new_p)
{
    struct dt_priv *p = priv_of(t);
    int rc = loom_type_create(p->combiner, p->ints, p->aints, p->types, new_p);
    if (rc == LOOM_OK) {
        (*new_p)->committed = t->committed;
        loom_type_set_name(*new_p, p->name);
    }
    return rc;
}

/* ---- envelope, contents, names ---- */

void loom_type_envelope(const struct loom_type *t, int *ni_p, int *na_p, int *nd_p, int *combiner_p)
{
    struct dt_priv *p = priv_of(t);
    *ni_p = p->ni, *na_p = p->na, *nd_p = p->nd, *combiner_p = p->combiner;
}

void loom_type_contents(const struct loom_type *t, const int **ints_p, const MPI_Aint **aints_p,
                        struct loom_type *const **types_p)
{
    struct dt_priv *p = priv_of(t);
    *ints_p = p->ints, *aints_p = p->aints, *types_p = p->types;
}

void loom_type_set_name(struct loom_type *t, const char *name)
{
    struct dt_priv *p = priv_of(t);
    /* Predefined types are shared by all ranks. */
    if (t->predefined)
        pthread_mutex_lock(&pre_name_lock);
    snprintf(p->name, sizeof p->name, "%s", name);
    if (t->predefined)
        pthread_mutex_unlock(&pre_name_lock);
}

int loom_type_get_name(const struct loom_type *t, char *buf)
{
    struct dt_priv *p = priv_of(t);
    if (t->predefined)
        pthread_mutex_lock(&pre_name_lock);
    int n = snprintf(buf, MPI_MAX_OBJECT_NAME, "%s", p->name);
    if (t->predefined)
        pthread_mutex_unlock(&pre_name_lock);
    return n;
}

size_t loom_type_find_block(const struct loom_type *t, size_t offset, size_t *in_p)
{
    const size_t *starts = priv_of(t)->starts;
    size_t lo = 0, hi = t->nblocks;
    /* The last block whose start is <= offset. */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (starts[mid] <= offset)
            lo = mid;
        else
            hi = mid;
    }
    *in_p = offset - starts[lo];
    return lo;
}

/* ---- basic elements (MPI_Get_elements) ---- */

static MPI_Count elements_in(const struct loom_type *t, size_t rem);

/* Basic elements in the first rem bytes of a sequence of copies of old. */
static MPI_Count elements_seq(const struct loom_type *old, size_t rem)
{
    if (!rem)
        return 0;
    if (!old->size)
        return MPI_UNDEFINED;
    MPI_Count e = elements_in(old, rem % old->size);
    if (e == MPI_UNDEFINED)
        return e;
    return (MPI_Count)(rem / old->size) * old->nbasic + e;
}

/* Basic elements in the first rem bytes of one element of t (rem < t->size). */
static MPI_Count elements_in(const struct loom_type *t, size_t rem)
{
    if (!rem)
        return 0;
    struct dt_priv *p = priv_of(t);
    if (t->basic && !is_pair(t->basic)) {
        size_t bs = loom_pre_types[LOOM_HANDLE_INDEX(t->basic)].size;
        return rem % bs ? MPI_UNDEFINED : (MPI_Count)(rem / bs);
    }
    if (p->combiner == MPI_COMBINER_NAMED)
        return rem == p->pair_first ? 1 : MPI_UNDEFINED;
    if (p->combiner != MPI_COMBINER_STRUCT)
        return elements_seq(p->types[0], rem);
    MPI_Count acc = 0;
    for (int i = 0; i < p->ints[0]; i++) {
        size_t len = (size_t)p->ints[1 + i] * p->types[i]->size;
        if (rem >= len) {
            acc += (MPI_Count)p->ints[1 + i] * p->types[i]->nbasic;
            rem -= len;
            continue;
        }
        MPI_Count e = elements_seq(p->types[i], rem);
        return e == MPI_UNDEFINED ? e : acc + e;
    }
    return acc;
}

MPI_Count loom_type_elements(const struct loom_type *t, MPI_Count nbytes)
{
    if (nbytes == 0)
        return 0;
    if (nbytes < 0 || t->size == 0)
        return MPI_UNDEFINED;
    MPI_Count e = elements_in(t, (size_t)nbytes % t->size);
    if (e == MPI_UNDEFINED)
        return e;
    return (nbytes / (MPI_Count)t->size) * t->nbasic + e;
}

/* ---- type signatures ---- */

void loom_type_signature(const struct loom_type *t, size_t count, loom_type_run_fn *fn, void *arg)
{
    if (!count || !t->size)
        return;
    if (t->basic) {
        const struct loom_type *basic = &loom_pre_types[LOOM_HANDLE_INDEX(t->basic)];
        fn(basic, count * (t->size / basic->size), arg);
        return;
    }
    struct dt_priv *p = priv_of(t);
    if (p->combiner == MPI_COMBINER_STRUCT) {
        for (size_t r = 0; r < count; r++)
            for (int i = 0; i < p->ints[0]; i++)
                loom_type_signature(p->types[i], (size_t)p->ints[1 + i], fn, arg);
        return;
    }
    /* Every other constructor repeats its one old type. */
    const struct loom_type *old = p->types[0];
    loom_type_signature(old, count * (t->size / old->size), fn, arg);
}

/* ---- the types of MPI_Type_create_f90_integer/real/complex ---- */

/* Made once per (combiner, p, r), kept for the job (MPI-3.1 17.1.9: the
 * handles are predefined; freeing them is erroneous). */
struct f90_entry {
    int combiner, p, r;
    struct loom_type *t;
};
static struct f90_entry f90_types[64];
static int f90_n;
static pthread_mutex_t f90_lock = PTHREAD_MUTEX_INITIALIZER;

int loom_type_f90(int combiner, int p, int r, MPI_Datatype base, struct loom_type **t_p)
{
    int rc = LOOM_OK;
    pthread_mutex_lock(&f90_lock);
    for (int i = 0; i < f90_n; i++) {
        struct f90_entry *e = &f90_types[i];
        if (e->combiner == combiner && e->p == p && e->r == r) {
            *t_p = e->t;
            goto out;
        }
    }
    rc = LOOM_ERR_NOMEM;
    if (f90_n == (int)LOOM_ARRAY_SIZE(f90_types))
        goto out;
    int ints[2] = {combiner == MPI_COMBINER_F90_INTEGER ? r : p, r};
    struct loom_type *b = loom_type_get(base), *t;
    if ((rc = loom_type_create(combiner, ints, NULL, &b, &t)) != LOOM_OK)
        goto out;
    t->committed = true;
    snprintf(priv_of(t)->name, MPI_MAX_OBJECT_NAME, "%s", priv_of(b)->name);
    f90_types[f90_n++] = (struct f90_entry){combiner, p, r, t};
    *t_p = t;
out:
    pthread_mutex_unlock(&f90_lock);
    return rc;
}

bool loom_type_is_named(const struct loom_type *t)
{
    int c = priv_of(t)->combiner;
    return t->predefined || c == MPI_COMBINER_F90_INTEGER || c == MPI_COMBINER_F90_REAL ||
           c == MPI_COMBINER_F90_COMPLEX;
}
