/*
 * A small, strict JSON reader (RFC 8259) for Loom's configuration files
 * (the collective tuning table): text in, a tree out, or an error message
 * with the line and column (1-based, columns in characters) where the text
 * stops being JSON.
 *
 * Strict: one value per text, no comments, no trailing commas, no leading
 * zeros, no NaN/Infinity, valid UTF-8 only, no control characters in
 * strings, no duplicate keys in an object, no \u0000 (strings are C
 * strings), nesting at most LOOM_JSON_MAX_DEPTH deep.
 */
#ifndef LOOM_UTIL_JSON_H
#define LOOM_UTIL_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "util/common.h"

#define LOOM_JSON_MAX_DEPTH 64

enum loom_json_type {
    LOOM_JSON_NULL,
    LOOM_JSON_BOOL,
    LOOM_JSON_NUMBER,
    LOOM_JSON_STRING,
    LOOM_JSON_ARRAY,
    LOOM_JSON_OBJECT,
};

struct loom_json {
    enum loom_json_type type;
    int line, column;        /* where the value starts in the text */
    bool boolean;            /* BOOL */
    bool integer;            /* NUMBER written without fraction or exponent */
    double number;           /* NUMBER */
    char *string;            /* STRING: NUL-terminated UTF-8 */
    size_t count;            /* ARRAY, OBJECT: elements or members */
    struct loom_json *items; /* ARRAY, OBJECT: [count] values, in text order */
    char **keys;             /* OBJECT: [count] member names */
};

struct loom_json_error {
    int line, column;
    char message[160];
};

/* Parses len bytes of text into a tree (*root_p, free with loom_json_free).
 * LOOM_ERR_INVALID with *err filled when the text is not JSON,
 * LOOM_ERR_NOMEM when out of memory. */
int loom_json_parse(const char *text, size_t len, struct loom_json **root_p,
                    struct loom_json_error *err) LOOM_MUST_CHECK;

/* Frees a tree from loom_json_parse (NULL is fine). */
void loom_json_free(struct loom_json *root);

/* The member `key` of an object, or NULL (also when v is not an object). */
const struct loom_json *loom_json_get(const struct loom_json *v, const char *key);

/* "null", "boolean", "number", "string", "array", "object". */
const char *loom_json_type_name(enum loom_json_type type);

#endif
