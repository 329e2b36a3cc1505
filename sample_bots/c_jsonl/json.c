#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct {
    const char *p, *end;
    const char *err;
    int depth;
} parser;

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fputs("out of memory\n", stderr);
        exit(3);
    }
    return p;
}

static void *xrealloc(void *ptr, size_t size) {
    void *p = realloc(ptr, size ? size : 1);
    if (!p) {
        fputs("out of memory\n", stderr);
        exit(3);
    }
    return p;
}

static void skip_ws(parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static jval *fail(parser *ps, const char *msg) {
    if (!ps->err) ps->err = msg;
    return NULL;
}

static jval *parse_value(parser *ps);

static int hex4(parser *ps, unsigned *out) {
    unsigned v = 0;
    if (ps->end - ps->p < 4) return 0;
    for (int i = 0; i < 4; i++) {
        char c = *ps->p++;
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static void put_utf8(sbuf *b, unsigned cp) {
    char tmp[4];
    size_t n;
    if (cp < 0x80) { tmp[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { tmp[0] = (char)(0xC0 | (cp >> 6)); tmp[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        tmp[0] = (char)(0xE0 | (cp >> 12)); tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        tmp[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        tmp[0] = (char)(0xF0 | (cp >> 18)); tmp[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        tmp[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); tmp[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
    }
    sb_add(b, tmp, n);
}

/* Reads a string body after its opening quote into a fresh buffer. */
static char *parse_string_raw(parser *ps, size_t *len_out) {
    sbuf b;
    sb_init(&b);
    while (ps->p < ps->end) {
        unsigned char c = (unsigned char)*ps->p++;
        if (c == '"') {
            sb_add(&b, "", 1); /* NUL terminator */
            *len_out = b.len - 1;
            return b.data;
        }
        if (c < 0x20) { ps->err = "control character in a string"; break; }
        if (c != '\\') { sb_add(&b, (const char *)&c, 1); continue; }
        if (ps->p >= ps->end) break;
        char e = *ps->p++;
        switch (e) {
            case '"': sb_add(&b, "\"", 1); break;
            case '\\': sb_add(&b, "\\", 1); break;
            case '/': sb_add(&b, "/", 1); break;
            case 'b': sb_add(&b, "\b", 1); break;
            case 'f': sb_add(&b, "\f", 1); break;
            case 'n': sb_add(&b, "\n", 1); break;
            case 'r': sb_add(&b, "\r", 1); break;
            case 't': sb_add(&b, "\t", 1); break;
            case 'u': {
                unsigned cp, lo;
                if (!hex4(ps, &cp)) { ps->err = "bad \\u escape"; goto bad; }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    /* A high surrogate must be followed by \u and a low one. */
                    if (ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') {
                        ps->p += 2;
                        if (!hex4(ps, &lo) || lo < 0xDC00 || lo > 0xDFFF) { ps->err = "bad surrogate pair"; goto bad; }
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    } else {
                        cp = 0xFFFD; /* lone surrogate: replacement character */
                    }
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    cp = 0xFFFD;
                }
                put_utf8(&b, cp);
                break;
            }
            default: ps->err = "bad escape in a string"; goto bad;
        }
    }
bad:
    if (!ps->err) ps->err = "unterminated string";
    sb_free(&b);
    return NULL;
}

static jval *new_val(jtype t) {
    jval *v = xcalloc(1, sizeof *v);
    v->type = t;
    return v;
}

static jval *parse_number(parser *ps) {
    const char *start = ps->p;
    if (ps->p < ps->end && *ps->p == '-') ps->p++;
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return fail(ps, "bad number");
    if (*ps->p == '0') ps->p++;
    else while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return fail(ps, "bad number");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return fail(ps, "bad number");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    char tmp[64];
    size_t n = (size_t)(ps->p - start);
    if (n >= sizeof tmp) n = sizeof tmp - 1; /* precision beyond this is irrelevant here */
    memcpy(tmp, start, n);
    tmp[n] = 0;
    jval *v = new_val(J_NUM);
    v->num = strtod(tmp, NULL);
    return v;
}

static int literal(parser *ps, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return 0;
    ps->p += n;
    return 1;
}

static jval *parse_container(parser *ps, int is_obj) {
    jval *v = new_val(is_obj ? J_OBJ : J_ARR);
    size_t cap = 0;
    char close = is_obj ? '}' : ']';
    if (++ps->depth > MAX_DEPTH) { json_free(v); return fail(ps, "nesting too deep"); }
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) { ps->p++; ps->depth--; return v; }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (is_obj) {
            size_t klen;
            if (ps->p >= ps->end || *ps->p != '"') { json_free(v); return fail(ps, "expected a key"); }
            ps->p++;
            key = parse_string_raw(ps, &klen);
            if (!key) { json_free(v); return NULL; }
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') { free(key); json_free(v); return fail(ps, "expected ':'"); }
            ps->p++;
        }
        jval *item = parse_value(ps);
        if (!item) { free(key); json_free(v); return NULL; }
        if (v->count == cap) {
            cap = cap ? cap * 2 : 4;
            v->items = xrealloc(v->items, cap * sizeof *v->items);
            if (is_obj) v->keys = xrealloc(v->keys, cap * sizeof *v->keys);
        }
        v->items[v->count] = item;
        if (is_obj) v->keys[v->count] = key;
        v->count++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
        if (ps->p < ps->end && *ps->p == close) { ps->p++; ps->depth--; return v; }
        json_free(v);
        return fail(ps, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static jval *parse_value(parser *ps) {
    skip_ws(ps);
    if (ps->p >= ps->end) return fail(ps, "unexpected end of input");
    char c = *ps->p;
    if (c == '{') { ps->p++; return parse_container(ps, 1); }
    if (c == '[') { ps->p++; return parse_container(ps, 0); }
    if (c == '"') {
        size_t len;
        ps->p++;
        char *s = parse_string_raw(ps, &len);
        if (!s) return NULL;
        jval *v = new_val(J_STR);
        v->str = s;
        v->len = len;
        return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(ps);
    if (literal(ps, "true")) { jval *v = new_val(J_BOOL); v->boolean = 1; return v; }
    if (literal(ps, "false")) return new_val(J_BOOL);
    if (literal(ps, "null")) return new_val(J_NULL);
    return fail(ps, "unexpected character");
}

jval *json_parse(const char *text, size_t len, const char **err) {
    parser ps = {text, text + len, NULL, 0};
    jval *v = parse_value(&ps);
    if (v) {
        skip_ws(&ps);
        if (ps.p != ps.end) { json_free(v); v = NULL; ps.err = "trailing characters after the value"; }
    }
    if (!v && err) *err = ps.err ? ps.err : "invalid JSON";
    return v;
}

void json_free(jval *v) {
    if (!v) return;
    for (size_t i = 0; i < v->count; i++) {
        json_free(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

const jval *json_get(const jval *obj, const char *key) {
    if (!obj || obj->type != J_OBJ) return NULL;
    for (size_t i = 0; i < obj->count; i++)
        if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
    return NULL;
}

const char *json_get_str(const jval *obj, const char *key) {
    const jval *v = json_get(obj, key);
    return v && v->type == J_STR ? v->str : NULL;
}

int json_get_int(const jval *obj, const char *key, long *out) {
    const jval *v = json_get(obj, key);
    if (!v || v->type != J_NUM || v->num != floor(v->num)) return 0;
    *out = (long)v->num;
    return 1;
}

int json_is_str(const jval *v, const char *s) {
    return v && v->type == J_STR && strcmp(v->str, s) == 0;
}

void sb_init(sbuf *b) { b->data = NULL; b->len = b->cap = 0; }

void sb_free(sbuf *b) { free(b->data); sb_init(b); }

void sb_add(sbuf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1) cap *= 2;
        b->data = xrealloc(b->data, cap);
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void sb_puts(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

void sb_json_string(sbuf *b, const char *s, size_t n) {
    sb_add(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"') sb_add(b, "\\\"", 2);
        else if (c == '\\') sb_add(b, "\\\\", 2);
        else if (c == '\n') sb_add(b, "\\n", 2);
        else if (c < 0x20) {
            char tmp[8];
            snprintf(tmp, sizeof tmp, "\\u%04x", c);
            sb_add(b, tmp, 6);
        } else sb_add(b, (const char *)&c, 1);
    }
    sb_add(b, "\"", 1);
}

void sb_json_value(sbuf *b, const jval *v) {
    char tmp[64];
    switch (v->type) {
        case J_NULL: sb_puts(b, "null"); break;
        case J_BOOL: sb_puts(b, v->boolean ? "true" : "false"); break;
        case J_NUM:
            if (v->num == floor(v->num) && fabs(v->num) < 9e15) snprintf(tmp, sizeof tmp, "%.0f", v->num);
            else snprintf(tmp, sizeof tmp, "%.17g", v->num);
            sb_puts(b, tmp);
            break;
        case J_STR: sb_json_string(b, v->str, v->len); break;
        case J_ARR:
        case J_OBJ:
            sb_puts(b, v->type == J_ARR ? "[" : "{");
            for (size_t i = 0; i < v->count; i++) {
                if (i) sb_puts(b, ",");
                if (v->type == J_OBJ) {
                    sb_json_string(b, v->keys[i], strlen(v->keys[i]));
                    sb_puts(b, ":");
                }
                sb_json_value(b, v->items[i]);
            }
            sb_puts(b, v->type == J_ARR ? "]" : "}");
            break;
    }
}
