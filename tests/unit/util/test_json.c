/*
 * The strict JSON reader (src/util/json.c): every kind of value, escapes
 * and UTF-8, the tree's shape and positions, and one rejected text per rule
 * with the line:column and message it must report.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "util/json.h"

static struct loom_json *parse(const char *text)
{
    struct loom_json *v = NULL;
    struct loom_json_error err;
    int rc = loom_json_parse(text, strlen(text), &v, &err);
    if (rc != LOOM_OK) {
        fprintf(stderr, "unexpected error for %s: %d:%d: %s\n", text, err.line, err.column,
                err.message);
        return NULL;
    }
    return v;
}

/* Checks that text is rejected at line:column with a message containing what. */
static void reject(const char *text, int line, int column, const char *what)
{
    struct loom_json *v = (struct loom_json *)1;
    struct loom_json_error err = {0};
    int rc = loom_json_parse(text, strlen(text), &v, &err);
    CHECK_EQ(rc, LOOM_ERR_INVALID);
    CHECK(v == (struct loom_json *)1); /* untouched on failure */
    if (rc != LOOM_ERR_INVALID)
        return;
    bool ok = err.line == line && err.column == column && strstr(err.message, what);
    if (!ok)
        fprintf(stderr, "for %s: got %d:%d: %s; want %d:%d: ...%s...\n", text, err.line, err.column,
                err.message, line, column, what);
    CHECK(ok);
}

static void test_scalars(void)
{
    struct loom_json *v = parse(" null ");
    REQUIRE(v);
    CHECK_EQ(v->type, LOOM_JSON_NULL);
    loom_json_free(v);
    v = parse("true");
    REQUIRE(v);
    CHECK(v->type == LOOM_JSON_BOOL && v->boolean);
    loom_json_free(v);
    v = parse("false");
    REQUIRE(v);
    CHECK(v->type == LOOM_JSON_BOOL && !v->boolean);
    loom_json_free(v);

    struct {
        const char *text;
        double value;
        bool integer;
    } nums[] = {{"0", 0, true},
                {"-0", 0, true},
                {"42", 42, true},
                {"-17", -17, true},
                {"1048576", 1048576, true},
                {"3.25", 3.25, false},
                {"-0.5", -0.5, false},
                {"1e3", 1000, false},
                {"2E-2", 0.02, false},
                {"6.02e+23", 6.02e23, false},
                {"12345678901234567890", 12345678901234567890.0, true}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        v = parse(nums[i].text);
        REQUIRE(v);
        CHECK_EQ(v->type, LOOM_JSON_NUMBER);
        CHECK(fabs(v->number - nums[i].value) <= 1e-12 * fabs(nums[i].value));
        CHECK_EQ(v->integer, nums[i].integer);
        loom_json_free(v);
    }
}

static void test_strings(void)
{
    struct {
        const char *text, *value;
    } strs[] = {
        {"\"\"", ""},
        {"\"plain\"", "plain"},
        {"\"q\\\"b\\\\s\\/\"", "q\"b\\s/"},
        {"\"\\b\\f\\n\\r\\t\"", "\b\f\n\r\t"},
        {"\"\\u0041\\u00e9\\u20AC\"", "A\xC3\xA9\xE2\x82\xAC"},
        {"\"\\ud83d\\ude00\"", "\xF0\x9F\x98\x80"}, /* a surrogate pair */
        {"\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"",
         "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"},
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        struct loom_json *v = parse(strs[i].text);
        REQUIRE(v);
        CHECK_EQ(v->type, LOOM_JSON_STRING);
        CHECK(strcmp(v->string, strs[i].value) == 0);
        loom_json_free(v);
    }
}

static void test_tree(void)
{
    const char *text = "{\n"
                       "  \"format\": \"loom-tuning\",\n"
                       "  \"version\": 1,\n"
                       "  \"entries\": [\n"
                       "    {\"collective\": \"bcast\", \"ranks\": 4, \"ok\": true},\n"
                       "    [], {}, null\n"
                       "  ]\n"
                       "}\n";
    struct loom_json *v = parse(text);
    REQUIRE(v);
    CHECK_EQ(v->type, LOOM_JSON_OBJECT);
    CHECK_EQ(v->count, 3);
    CHECK(strcmp(v->keys[0], "format") == 0 && strcmp(v->keys[2], "entries") == 0);
    const struct loom_json *f = loom_json_get(v, "format");
    REQUIRE(f);
    CHECK(f->type == LOOM_JSON_STRING && strcmp(f->string, "loom-tuning") == 0);
    CHECK_EQ(f->line, 2);
    CHECK_EQ(f->column, 13);
    CHECK(loom_json_get(v, "missing") == NULL);
    CHECK(loom_json_get(f, "format") == NULL); /* not an object */
    const struct loom_json *e = loom_json_get(v, "entries");
    REQUIRE(e && e->type == LOOM_JSON_ARRAY);
    CHECK_EQ(e->count, 4);
    const struct loom_json *e0 = &e->items[0];
    CHECK_EQ(e0->type, LOOM_JSON_OBJECT);
    CHECK_EQ(e0->line, 5);
    CHECK_EQ(e0->column, 5);
    const struct loom_json *r = loom_json_get(e0, "ranks");
    REQUIRE(r);
    CHECK(r->type == LOOM_JSON_NUMBER && r->number == 4 && r->integer);
    CHECK_EQ(r->line, 5);
    CHECK_EQ(r->column, 38);
    CHECK(e->items[1].type == LOOM_JSON_ARRAY && e->items[1].count == 0);
    CHECK(e->items[2].type == LOOM_JSON_OBJECT && e->items[2].count == 0);
    CHECK_EQ(e->items[3].type, LOOM_JSON_NULL);
    CHECK(strcmp(loom_json_type_name(LOOM_JSON_OBJECT), "object") == 0);
    loom_json_free(v);
    loom_json_free(NULL);

    /* Columns count characters, not bytes. */
    struct loom_json_error err;
    const char *utf = "[\"\xC3\xA9\xE2\x82\xAC\", x]";
    CHECK_EQ(loom_json_parse(utf, strlen(utf), &v, &err), LOOM_ERR_INVALID);
    CHECK_EQ(err.column, 8);

    /* Not NUL-terminated: only len bytes are read. */
    CHECK_EQ(loom_json_parse("[1]garbage", 3, &v, &err), LOOM_OK);
    CHECK(v->type == LOOM_JSON_ARRAY && v->count == 1);
    loom_json_free(v);

    /* Deep but allowed nesting; one level more is refused. */
    char deep[2 * LOOM_JSON_MAX_DEPTH + 3];
    for (int i = 0; i < LOOM_JSON_MAX_DEPTH; i++) {
        deep[i] = '[';
        deep[LOOM_JSON_MAX_DEPTH + i] = ']';
    }
    deep[2 * LOOM_JSON_MAX_DEPTH] = 0;
    v = parse(deep);
    CHECK(v != NULL);
    loom_json_free(v);
    char deeper[sizeof deep + 2];
    snprintf(deeper, sizeof deeper, "[%s]", deep);
    reject(deeper, 1, LOOM_JSON_MAX_DEPTH + 1, "nesting deeper than");
}

static void test_errors(void)
{
    reject("", 1, 1, "empty text");
    reject("  \n ", 2, 2, "empty text");
    reject("{", 1, 2, "unexpected end of text");
    reject("[1, 2", 1, 6, "',' or ']'");
    reject("[1 2]", 1, 4, "unexpected '2' (expected ',' or ']'");
    reject("{\"a\" 1}", 1, 6, "':' after a member name");
    reject("{\"a\": 1 \"b\": 2}", 1, 9, "',' or '}'");
    reject("{a: 1}", 1, 2, "member name in double quotes");
    reject("[1, 2,]", 1, 7, "trailing comma before ']'");
    reject("{\"a\": 1,\n }", 2, 2, "trailing comma before '}'");
    reject("{\"a\": 1, \"a\": 2}", 1, 10, "duplicate member \"a\"");
    reject("01", 1, 2, "leading zeros");
    reject("-", 1, 2, "a digit");
    reject("1.", 1, 3, "a digit after '.'");
    reject("1e", 1, 3, "exponent");
    reject(".5", 1, 1, "unexpected '.'");
    reject("+1", 1, 1, "unexpected '+'");
    reject("1e999", 1, 1, "out of range");
    reject("NaN", 1, 1, "unexpected 'N'");
    reject("nul", 1, 1, "unexpected 'n'");
    reject("nullx", 1, 1, "unexpected 'n'");
    reject("True", 1, 1, "unexpected 'T'");
    reject("\"abc", 1, 5, "unterminated string");
    reject("\"a\tb\"", 1, 3, "control character 0x09");
    reject("[\"a\\qb\"]", 1, 4, "invalid escape '\\q'");
    reject("\"\\u12\"", 1, 2, "four hex digits");
    reject("\"\\ud800\"", 1, 2, "unpaired UTF-16 surrogate");
    reject("\"\\udc00\\u0041\"", 1, 2, "unpaired UTF-16 surrogate");
    reject("\"\\u0000\"", 1, 2, "\\u0000 is not supported");
    reject("\"\xC3\"", 1, 2, "invalid UTF-8");
    reject("\"\xC0\xAF\"", 1, 2, "invalid UTF-8");     /* overlong */
    reject("\"\xED\xA0\x80\"", 1, 2, "invalid UTF-8"); /* encoded surrogate */
    reject("\xFF", 1, 1, "unexpected byte 0xff");
    reject("[1] [2]", 1, 5, "text after the JSON value");
    reject("// comment\n1", 1, 1, "unexpected '/'");
    reject("{\n  \"entries\": [\n    {\"ranks\": 4,}\n  ]\n}", 3, 17, "trailing comma before '}'");
}

int main(void)
{
    test_scalars();
    test_strings();
    test_tree();
    test_errors();
    return check_summary();
}
