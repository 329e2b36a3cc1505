/* A small self-contained JSON reader and writer for the arena protocol.
 *
 * json_parse builds a tree of jval nodes (free it with json_free). It accepts
 * RFC 8259 JSON: objects, arrays, strings with every escape including
 * \uXXXX and surrogate pairs (decoded to UTF-8), numbers, true/false/null.
 * Nesting is limited so a hostile line cannot exhaust the stack. */
#ifndef ARENA_JSON_H
#define ARENA_JSON_H

#include <stddef.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype type;
    int boolean;          /* J_BOOL */
    double num;           /* J_NUM */
    char *str;            /* J_STR: UTF-8, NUL-terminated */
    size_t len;           /* J_STR: bytes, without the NUL */
    struct jval **items;  /* J_ARR and J_OBJ values */
    char **keys;          /* J_OBJ keys (NUL-terminated) */
    size_t count;         /* J_ARR / J_OBJ entries */
} jval;

/* Parses exactly one JSON value (surrounding whitespace allowed).
 * Returns NULL and sets *err to a static description on failure. */
jval *json_parse(const char *text, size_t len, const char **err);
void json_free(jval *v);

/* Lookups; each returns NULL when absent or of another type. */
const jval *json_get(const jval *obj, const char *key);
const char *json_get_str(const jval *obj, const char *key);
int json_get_int(const jval *obj, const char *key, long *out); /* 1 if an integer was there */
int json_is_str(const jval *v, const char *s);

/* A growable output buffer. */
typedef struct {
    char *data;
    size_t len, cap;
} sbuf;

void sb_init(sbuf *b);
void sb_free(sbuf *b);
void sb_add(sbuf *b, const char *s, size_t n);
void sb_puts(sbuf *b, const char *s);
void sb_json_string(sbuf *b, const char *s, size_t n); /* quoted and escaped */
void sb_json_value(sbuf *b, const jval *v);            /* any parsed value back to JSON */

#endif
