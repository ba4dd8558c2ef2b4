/*
 * Typed copies: a cursor walks each layout from a message offset (element,
 * then block by binary search over the blocks' message offsets, then byte),
 * and every step copies the overlap of the current source and destination
 * blocks with one memcpy. Copying N elements of a type of b blocks costs
 * O(N * b) block copies and no intermediate buffer; a contiguous side turns
 * the walk into a pack or an unpack, and two contiguous sides into one memcpy.
 */
#include <string.h>

#include "datatype/datatype.h"

struct cursor {
    const struct loom_type *t;
    char *elem; /* origin of the current element */
    MPI_Aint ext;
    size_t blk; /* current block of the element */
    size_t in;  /* bytes of it already passed */
};

static void cursor_init(struct cursor *c, const void *buf, const struct loom_type *t, size_t offset)
{
    c->t = t;
    c->ext = t->ub - t->lb;
    c->elem = (char *)buf + (MPI_Aint)(offset / t->size) * c->ext;
    c->blk = loom_type_find_block(t, offset % t->size, &c->in);
}

static inline char *cursor_ptr(const struct cursor *c)
{
    return c->elem + c->t->blocks[c->blk].off + (MPI_Aint)c->in;
}

static inline size_t cursor_left(const struct cursor *c)
{
    return c->t->blocks[c->blk].len - c->in;
}

static inline void cursor_advance(struct cursor *c, size_t k)
{
    c->in += k;
    if (c->in == c->t->blocks[c->blk].len) {
        c->in = 0;
        if (++c->blk == c->t->nblocks) {
            c->blk = 0;
            c->elem += c->ext;
        }
    }
}

/* memcpy with the common small sizes inlined. */
static inline void copy_bytes(void *dst, const void *src, size_t k)
{
    switch (k) {
    case 1:
        memcpy(dst, src, 1);
        break;
    case 2:
        memcpy(dst, src, 2);
        break;
    case 4:
        memcpy(dst, src, 4);
        break;
    case 8:
        memcpy(dst, src, 8);
        break;
    case 16:
        memcpy(dst, src, 16);
        break;
    default:
        memcpy(dst, src, k);
        break;
    }
}

void loom_type_pack(void *out, const void *src, const struct loom_type *t, size_t offset,
                    size_t nbytes)
{
    if (!nbytes)
        return;
    if (t->contig) {
        memcpy(out, (const char *)src + t->blocks[0].off + offset, nbytes);
        return;
    }
    struct cursor c;
    cursor_init(&c, src, t, offset);
    char *o = out;
    while (nbytes) {
        size_t k = cursor_left(&c);
        if (k > nbytes)
            k = nbytes;
        copy_bytes(o, cursor_ptr(&c), k);
        o += k;
        nbytes -= k;
        cursor_advance(&c, k);
    }
}

void loom_type_unpack(void *dst, const struct loom_type *t, const void *in, size_t offset,
                      size_t nbytes)
{
    if (!nbytes)
        return;
    if (t->contig) {
        memcpy((char *)dst + t->blocks[0].off + offset, in, nbytes);
        return;
    }
    struct cursor c;
    cursor_init(&c, dst, t, offset);
    const char *i = in;
    while (nbytes) {
        size_t k = cursor_left(&c);
        if (k > nbytes)
            k = nbytes;
        copy_bytes(cursor_ptr(&c), i, k);
        i += k;
        nbytes -= k;
        cursor_advance(&c, k);
    }
}

void loom_type_copy(void *dst, const struct loom_type *dt, const void *src,
                    const struct loom_type *st, size_t offset, size_t nbytes)
{
    if (!nbytes)
        return;
    if (st->contig) {
        loom_type_unpack(dst, dt, (const char *)src + st->blocks[0].off + offset, offset, nbytes);
        return;
    }
    if (dt->contig) {
        loom_type_pack((char *)dst + dt->blocks[0].off + offset, src, st, offset, nbytes);
        return;
    }
    struct cursor s, d;
    cursor_init(&s, src, st, offset);
    cursor_init(&d, dst, dt, offset);
    while (nbytes) {
        size_t k = cursor_left(&s), kd = cursor_left(&d);
        if (kd < k)
            k = kd;
        if (k > nbytes)
            k = nbytes;
        copy_bytes(cursor_ptr(&d), cursor_ptr(&s), k);
        nbytes -= k;
        cursor_advance(&s, k);
        cursor_advance(&d, k);
    }
}
