/*
 * The strict JSON reader of json.h: a recursive-descent parser over a byte
 * range (not necessarily NUL-terminated) that tracks line and column, builds
 * the tree in growing arrays and stops at the first error, freeing what it
 * built.
 */
#include "util/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
    const char *p, *end;
    int line, column;
    int depth;
    struct loom_json_error *err;
    int status; /* LOOM_ERR_INVALID or LOOM_ERR_NOMEM once failed */
};

/* Records the first error at the current position. */
__attribute__((format(printf, 2, 3))) static int fail(struct parser *ps, const char *fmt, ...)
{
    if (ps->status == LOOM_OK) {
        ps->status = LOOM_ERR_INVALID;
        ps->err->line = ps->line;
        ps->err->column = ps->column;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->err->message, sizeof ps->err->message, fmt, ap);
        va_end(ap);
    }
    return ps->status;
}

static int nomem(struct parser *ps)
{
    if (ps->status == LOOM_OK) {
        ps->status = LOOM_ERR_NOMEM;
        ps->err->line = ps->line;
        ps->err->column = ps->column;
        snprintf(ps->err->message, sizeof ps->err->message, "out of memory");
    }
    return ps->status;
}

/* Consumes one byte; columns count characters (UTF-8 lead bytes). */
static void advance(struct parser *ps)
{
    unsigned char c = (unsigned char)*ps->p++;
    if (c == '\n') {
        ps->line++;
        ps->column = 1;
    } else if ((c & 0xC0) != 0x80) {
        ps->column++;
    }
}

static void skip_space(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        advance(ps);
}

/* Error for the byte at the current position (or the end of the text). */
static int unexpected(struct parser *ps, const char *wanted)
{
    if (ps->p >= ps->end)
        return fail(ps, "unexpected end of text (expected %s)", wanted);
    unsigned char c = (unsigned char)*ps->p;
    if (c >= 0x20 && c < 0x7F)
        return fail(ps, "unexpected '%c' (expected %s)", c, wanted);
    return fail(ps, "unexpected byte 0x%02x (expected %s)", c, wanted);
}

const char *loom_json_type_name(enum loom_json_type type)
{
    static const char *const names[] = {"null", "boolean", "number", "string", "array", "object"};
    return (unsigned)type < LOOM_ARRAY_SIZE(names) ? names[type] : "?";
}

/* Frees what v owns (not v itself). */
static void release(struct loom_json *v)
{
    free(v->string);
    for (size_t i = 0; i < v->count; i++) {
        release(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

void loom_json_free(struct loom_json *root)
{
    if (!root)
        return;
    release(root);
    free(root);
}

const struct loom_json *loom_json_get(const struct loom_json *v, const char *key)
{
    if (!v || v->type != LOOM_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

/* ---- strings ----------------------------------------------------------- */

struct buf {
    char *s;
    size_t len, cap;
};

static bool buf_put(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 32;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *ns = realloc(b->s, cap);
        if (!ns)
            return false;
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
    return true;
}

/* Length of the valid UTF-8 sequence at p (< end), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, min = 0x10000;
    else
        return 0;
    if ((size_t)(end - p) < n)
        return 0;
    unsigned cp = c & (0x7F >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static size_t utf8_encode(unsigned cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Four hex digits after "\u"; -1 when they are not. */
static long hex4(struct parser *ps)
{
    if (ps->end - ps->p < 4)
        return -1;
    long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = ps->p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    for (int i = 0; i < 4; i++)
        advance(ps);
    return v;
}

/* A string at '"'; *out_p gets the decoded, NUL-terminated text. */
static int parse_string(struct parser *ps, char **out_p)
{
    struct buf b = {0};
    advance(ps); /* the opening quote */
    for (;;) {
        if (ps->p >= ps->end) {
            fail(ps, "unterminated string");
            goto err;
        }
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            advance(ps);
            break;
        }
        if (c < 0x20) {
            fail(ps, "control character 0x%02x in a string (write it as \\u%04x)", c, c);
            goto err;
        }
        if (c != '\\') {
            size_t n = utf8_len((const unsigned char *)ps->p, (const unsigned char *)ps->end);
            if (n == 0) {
                fail(ps, "invalid UTF-8 in a string");
                goto err;
            }
            if (!buf_put(&b, ps->p, n)) {
                nomem(ps);
                goto err;
            }
            for (size_t i = 0; i < n; i++)
                advance(ps);
            continue;
        }
        /* An escape. */
        int line = ps->line, column = ps->column;
        advance(ps);
        if (ps->p >= ps->end) {
            fail(ps, "unterminated string");
            goto err;
        }
        char e = *ps->p, out[4];
        size_t n = 1;
        switch (e) {
        case '"':
        case '\\':
        case '/':
            out[0] = e;
            break;
        case 'b':
            out[0] = '\b';
            break;
        case 'f':
            out[0] = '\f';
            break;
        case 'n':
            out[0] = '\n';
            break;
        case 'r':
            out[0] = '\r';
            break;
        case 't':
            out[0] = '\t';
            break;
        case 'u': {
            advance(ps);
            long cp = hex4(ps);
            if (cp < 0) {
                ps->line = line, ps->column = column;
                fail(ps, "\\u must be followed by four hex digits");
                goto err;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo = -1;
                if (ps->end - ps->p >= 2 && ps->p[0] == '\\' && ps->p[1] == 'u') {
                    advance(ps);
                    advance(ps);
                    lo = hex4(ps);
                }
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    ps->line = line, ps->column = column;
                    fail(ps, "unpaired UTF-16 surrogate \\u%04lx", cp);
                    goto err;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                ps->line = line, ps->column = column;
                fail(ps, "unpaired UTF-16 surrogate \\u%04lx", cp);
                goto err;
            } else if (cp == 0) {
                ps->line = line, ps->column = column;
                fail(ps, "\\u0000 is not supported in strings");
                goto err;
            }
            n = utf8_encode((unsigned)cp, out);
            if (!buf_put(&b, out, n)) {
                nomem(ps);
                goto err;
            }
            continue;
        }
        default:
            ps->line = line, ps->column = column;
            if ((unsigned char)e >= 0x20 && (unsigned char)e < 0x7F)
                fail(ps, "invalid escape '\\%c'", e);
            else
                fail(ps, "invalid escape (backslash before byte 0x%02x)", (unsigned char)e);
            goto err;
        }
        advance(ps);
        if (!buf_put(&b, out, n)) {
            nomem(ps);
            goto err;
        }
    }
    if (!b.s && !buf_put(&b, "", 0)) {
        nomem(ps);
        goto err;
    }
    *out_p = b.s;
    return LOOM_OK;
err:
    free(b.s);
    return ps->status;
}

/* ---- numbers and literals ---------------------------------------------- */

static bool is_digit(const struct parser *ps)
{
    return ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9';
}

static int parse_number(struct parser *ps, struct loom_json *v)
{
    const char *start = ps->p;
    bool integer = true;
    if (*ps->p == '-')
        advance(ps);
    if (!is_digit(ps))
        return unexpected(ps, "a digit");
    if (*ps->p == '0') {
        advance(ps);
        if (is_digit(ps))
            return fail(ps, "leading zeros are not allowed in numbers");
    } else {
        while (is_digit(ps))
            advance(ps);
    }
    if (ps->p < ps->end && *ps->p == '.') {
        integer = false;
        advance(ps);
        if (!is_digit(ps))
            return unexpected(ps, "a digit after '.'");
        while (is_digit(ps))
            advance(ps);
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        integer = false;
        advance(ps);
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            advance(ps);
        if (!is_digit(ps))
            return unexpected(ps, "a digit in the exponent");
        while (is_digit(ps))
            advance(ps);
    }
    /* strtod needs a terminated copy; the grammar above is locale-free. */
    size_t n = (size_t)(ps->p - start);
    char small[64], *copy = n < sizeof small ? small : malloc(n + 1);
    if (!copy)
        return nomem(ps);
    memcpy(copy, start, n);
    copy[n] = 0;
    double d = strtod(copy, NULL);
    if (copy != small)
        free(copy);
    if (isinf(d)) {
        ps->line = v->line, ps->column = v->column;
        return fail(ps, "number out of range");
    }
    v->type = LOOM_JSON_NUMBER;
    v->number = d;
    v->integer = integer;
    return LOOM_OK;
}

static int parse_literal(struct parser *ps, struct loom_json *v)
{
    static const struct {
        const char *word;
        enum loom_json_type type;
        bool value;
    } lits[] = {{"true", LOOM_JSON_BOOL, true},
                {"false", LOOM_JSON_BOOL, false},
                {"null", LOOM_JSON_NULL, false}};
    for (size_t i = 0; i < LOOM_ARRAY_SIZE(lits); i++) {
        size_t n = strlen(lits[i].word);
        if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, lits[i].word, n) == 0) {
            const char *after = ps->p + n;
            if (after < ps->end &&
                ((*after >= 'a' && *after <= 'z') || (*after >= 'A' && *after <= 'Z') ||
                 (*after >= '0' && *after <= '9') || *after == '_'))
                break; /* "nullx", "trueish" */
            for (size_t k = 0; k < n; k++)
                advance(ps);
            v->type = lits[i].type;
            v->boolean = lits[i].value;
            return LOOM_OK;
        }
    }
    return unexpected(ps, "a value (object, array, string, number, true, false or null)");
}

/* ---- values ------------------------------------------------------------ */

static int parse_value(struct parser *ps, struct loom_json *v);

/* Appends an empty value to an array or object under construction. */
static struct loom_json *append(struct parser *ps, struct loom_json *v, size_t *cap, bool keyed)
{
    if (v->count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        struct loom_json *items = realloc(v->items, ncap * sizeof *items);
        if (!items) {
            nomem(ps);
            return NULL;
        }
        v->items = items;
        if (keyed) {
            char **keys = realloc(v->keys, ncap * sizeof *keys);
            if (!keys) {
                nomem(ps);
                return NULL;
            }
            v->keys = keys;
        }
        *cap = ncap;
    }
    struct loom_json *item = &v->items[v->count];
    memset(item, 0, sizeof *item);
    if (keyed)
        v->keys[v->count] = NULL;
    v->count++;
    return item;
}

static int parse_array(struct parser *ps, struct loom_json *v)
{
    size_t cap = 0;
    v->type = LOOM_JSON_ARRAY;
    advance(ps); /* '[' */
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        advance(ps);
        return LOOM_OK;
    }
    for (;;) {
        skip_space(ps);
        if (ps->p < ps->end && *ps->p == ']')
            return fail(ps, "trailing comma before ']'");
        struct loom_json *item = append(ps, v, &cap, false);
        if (!item)
            return ps->status;
        if (parse_value(ps, item) != LOOM_OK)
            return ps->status;
        skip_space(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            advance(ps);
            continue;
        }
        if (ps->p < ps->end && *ps->p == ']') {
            advance(ps);
            return LOOM_OK;
        }
        return unexpected(ps, "',' or ']' after an array element");
    }
}

static int parse_object(struct parser *ps, struct loom_json *v)
{
    size_t cap = 0;
    v->type = LOOM_JSON_OBJECT;
    advance(ps); /* '{' */
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        advance(ps);
        return LOOM_OK;
    }
    for (;;) {
        skip_space(ps);
        if (ps->p < ps->end && *ps->p == '}')
            return fail(ps, "trailing comma before '}'");
        if (ps->p >= ps->end || *ps->p != '"')
            return unexpected(ps, "a member name in double quotes");
        int line = ps->line, column = ps->column;
        char *key;
        if (parse_string(ps, &key) != LOOM_OK)
            return ps->status;
        if (loom_json_get(v, key)) {
            ps->line = line, ps->column = column;
            fail(ps, "duplicate member \"%.100s\"", key);
            free(key);
            return ps->status;
        }
        struct loom_json *item = append(ps, v, &cap, true);
        if (!item) {
            free(key);
            return ps->status;
        }
        v->keys[v->count - 1] = key;
        skip_space(ps);
        if (ps->p >= ps->end || *ps->p != ':')
            return unexpected(ps, "':' after a member name");
        advance(ps);
        skip_space(ps);
        if (parse_value(ps, item) != LOOM_OK)
            return ps->status;
        skip_space(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            advance(ps);
            continue;
        }
        if (ps->p < ps->end && *ps->p == '}') {
            advance(ps);
            return LOOM_OK;
        }
        return unexpected(ps, "',' or '}' after an object member");
    }
}

/* A value at the current position (no leading space). */
static int parse_value(struct parser *ps, struct loom_json *v)
{
    v->line = ps->line;
    v->column = ps->column;
    if (ps->p >= ps->end)
        return unexpected(ps, "a value");
    char c = *ps->p;
    if (c == '{' || c == '[') {
        if (ps->depth >= LOOM_JSON_MAX_DEPTH)
            return fail(ps, "nesting deeper than %d levels", LOOM_JSON_MAX_DEPTH);
        ps->depth++;
        int rc = c == '{' ? parse_object(ps, v) : parse_array(ps, v);
        ps->depth--;
        return rc;
    }
    if (c == '"') {
        v->type = LOOM_JSON_STRING;
        return parse_string(ps, &v->string);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return parse_number(ps, v);
    return parse_literal(ps, v);
}

int loom_json_parse(const char *text, size_t len, struct loom_json **root_p,
                    struct loom_json_error *err)
{
    struct loom_json_error ignored;
    struct parser ps = {
        .p = text,
        .end = text + len,
        .line = 1,
        .column = 1,
        .err = err ? err : &ignored,
    };
    struct loom_json *root = calloc(1, sizeof *root);
    if (!root)
        return nomem(&ps);
    /* A UTF-8 byte order mark is tolerated (RFC 8259 section 8.1). */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        ps.p += 3;
    skip_space(&ps);
    if (ps.p >= ps.end) {
        fail(&ps, "empty text (expected a JSON value)");
        goto err;
    }
    if (parse_value(&ps, root) != LOOM_OK)
        goto err;
    skip_space(&ps);
    if (ps.p < ps.end) {
        fail(&ps, "text after the JSON value");
        goto err;
    }
    *root_p = root;
    return LOOM_OK;
err:
    loom_json_free(root);
    return ps.status;
}
