/* A tiny read-only JSON reader for the C tests: enough to walk the JSON results
 * of the sessionkit C API and tests/fixtures/manifest.json. Values are pointers
 * into the text; nothing is allocated except by mj_str. Malformed input gives
 * NULL / 0 / -1, never a crash. */
#ifndef MINIJSON_H
#define MINIJSON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline const char *mj_ws(const char *p) {
    while (p && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* The end of the string starting at p (p at the opening quote). */
static inline const char *mj_skip_string(const char *p) {
    if (!p || *p != '"') return NULL;
    for (p++; *p; p++) {
        if (*p == '\\') {
            if (!p[1]) return NULL;
            p++;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* The end of the value starting at p (after leading white space). */
static inline const char *mj_skip(const char *p) {
    p = mj_ws(p);
    if (!p || !*p) return NULL;
    if (*p == '"') return mj_skip_string(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = mj_ws(p + 1);
        if (p && *p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                p = mj_skip_string(mj_ws(p));
                p = mj_ws(p);
                if (!p || *p != ':') return NULL;
                p++;
            }
            p = mj_ws(mj_skip(p));
            if (!p) return NULL;
            if (*p == ',') { p++; continue; }
            if (*p == close) return p + 1;
            return NULL;
        }
    }
    /* number, true, false, null */
    const char *s = p;
    while (*p && strchr("+-0123456789.eEtruefalsn", *p)) p++;
    return p == s ? NULL : p;
}

/* The value of `key` in the object at v, or NULL. */
static inline const char *mj_get(const char *v, const char *key) {
    v = mj_ws(v);
    if (!v || *v != '{') return NULL;
    const char *p = mj_ws(v + 1);
    size_t klen = strlen(key);
    if (*p == '}') return NULL;
    for (;;) {
        const char *ks = mj_ws(p);
        const char *ke = mj_skip_string(ks);
        if (!ke) return NULL;
        p = mj_ws(ke);
        if (*p != ':') return NULL;
        const char *val = mj_ws(p + 1);
        /* keys in the tests are plain ASCII: compare the raw text */
        if ((size_t)(ke - ks - 2) == klen && memcmp(ks + 1, key, klen) == 0) return val;
        p = mj_ws(mj_skip(val));
        if (!p || *p != ',') return NULL;
        p++;
    }
}

/* The i-th element of the array at v, or NULL. */
static inline const char *mj_at(const char *v, size_t i) {
    v = mj_ws(v);
    if (!v || *v != '[') return NULL;
    const char *p = mj_ws(v + 1);
    if (*p == ']') return NULL;
    for (size_t n = 0;; n++) {
        p = mj_ws(p);
        if (n == i) return p;
        p = mj_ws(mj_skip(p));
        if (!p || *p != ',') return NULL;
        p++;
    }
}

/* Elements of the array at v, or -1 when v is not an array. */
static inline long mj_len(const char *v) {
    v = mj_ws(v);
    if (!v || *v != '[') return -1;
    long n = 0;
    while (mj_at(v, (size_t)n)) n++;
    return n;
}

/* The i-th key of the object at v (decoded into a static buffer), or NULL. */
static inline const char *mj_key_at(const char *v, size_t i, const char **val);

static inline int mj_is(const char *v, const char *lit) {
    v = mj_ws(v);
    return v && strncmp(v, lit, strlen(lit)) == 0;
}
static inline int mj_is_null(const char *v) { return mj_is(v, "null"); }
static inline int mj_is_true(const char *v) { return mj_is(v, "true"); }
static inline long long mj_int(const char *v) { v = mj_ws(v); return v ? strtoll(v, NULL, 10) : -1; }

static inline void mj_put_utf8(char **o, uint32_t c) {
    char *q = *o;
    if (c < 0x80) *q++ = (char)c;
    else if (c < 0x800) { *q++ = (char)(0xC0 | (c >> 6)); *q++ = (char)(0x80 | (c & 0x3F)); }
    else if (c < 0x10000) { *q++ = (char)(0xE0 | (c >> 12)); *q++ = (char)(0x80 | ((c >> 6) & 0x3F)); *q++ = (char)(0x80 | (c & 0x3F)); }
    else { *q++ = (char)(0xF0 | (c >> 18)); *q++ = (char)(0x80 | ((c >> 12) & 0x3F)); *q++ = (char)(0x80 | ((c >> 6) & 0x3F)); *q++ = (char)(0x80 | (c & 0x3F)); }
    *o = q;
}

static inline uint32_t mj_hex4(const char *p) {
    char b[5] = {0};
    memcpy(b, p, 4);
    return (uint32_t)strtoul(b, NULL, 16);
}

/* The string value at v, decoded (malloc'd; free it), or NULL if not a string. */
static inline char *mj_str(const char *v) {
    v = mj_ws(v);
    const char *e = mj_skip_string(v);
    if (!e) return NULL;
    char *out = (char *)malloc((size_t)(e - v) + 1), *o = out;
    for (const char *p = v + 1; p < e - 1; p++) {
        if (*p != '\\') { *o++ = *p; continue; }
        p++;
        switch (*p) {
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case 'r': *o++ = '\r'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'u': {
            uint32_t c = mj_hex4(p + 1);
            p += 4;
            /* A pair of surrogate escapes is one character outside the BMP
             * (the manifest spells UTF-8 text so); a lone one stays as it is. */
            if (c >= 0xD800 && c < 0xDC00 && p[1] == '\\' && p[2] == 'u') {
                uint32_t lo = mj_hex4(p + 3);
                if (lo >= 0xDC00 && lo < 0xE000) {
                    c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
            }
            mj_put_utf8(&o, c);
            break;
        }
        default: *o++ = *p;
        }
    }
    *o = 0;
    return out;
}

static inline const char *mj_key_at(const char *v, size_t i, const char **val) {
    static char buf[4096];
    v = mj_ws(v);
    if (!v || *v != '{') return NULL;
    const char *p = mj_ws(v + 1);
    if (*p == '}') return NULL;
    for (size_t n = 0;; n++) {
        const char *ks = mj_ws(p);
        const char *ke = mj_skip_string(ks);
        if (!ke) return NULL;
        p = mj_ws(ke);
        if (*p != ':') return NULL;
        const char *vv = mj_ws(p + 1);
        if (n == i) {
            char *k = mj_str(ks);
            strncpy(buf, k, sizeof buf - 1);
            free(k);
            if (val) *val = vv;
            return buf;
        }
        p = mj_ws(mj_skip(vv));
        if (!p || *p != ',') return NULL;
        p++;
    }
}

/* The string at key of the object at v, decoded (malloc'd), or NULL. */
static inline char *mj_get_str(const char *v, const char *key) { return mj_str(mj_get(v, key)); }

/* Whether the JSON values at a and b are equal: objects key by key in any order
 * (keys as plain ASCII, as mj_get reads them), arrays element by element,
 * strings decoded, numbers by their text or else their value, literals by text. */
static inline int mj_equal(const char *a, const char *b) {
    a = mj_ws(a);
    b = mj_ws(b);
    if (!a || !b || !*a || !*b) return 0;
    if (*a == '"' || *b == '"') {
        char *x = mj_str(a), *y = mj_str(b);
        int eq = x && y && strcmp(x, y) == 0;
        free(x);
        free(y);
        return eq;
    }
    if (*a == '[' || *b == '[') {
        long n = mj_len(a);
        if (*a != *b || n != mj_len(b)) return 0;
        for (long i = 0; i < n; i++)
            if (!mj_equal(mj_at(a, (size_t)i), mj_at(b, (size_t)i))) return 0;
        return 1;
    }
    if (*a == '{' || *b == '{') {
        if (*a != *b) return 0;
        size_t na = 0, nb = 0;
        const char *val;
        while (mj_key_at(b, nb, &val)) nb++;
        for (;; na++) {
            const char *k = mj_key_at(a, na, &val);
            if (!k) break;
            char *key = strdup(k); /* mj_key_at's buffer is reused below */
            const char *other = mj_get(b, key);
            int eq = other && mj_equal(val, other);
            free(key);
            if (!eq) return 0;
        }
        return na == nb;
    }
    const char *ae = mj_skip(a), *be = mj_skip(b);
    if (!ae || !be) return 0;
    if (ae - a == be - b && memcmp(a, b, (size_t)(ae - a)) == 0) return 1;
    int a_num = *a == '-' || (*a >= '0' && *a <= '9'), b_num = *b == '-' || (*b >= '0' && *b <= '9');
    return a_num && b_num && strtod(a, NULL) == strtod(b, NULL);
}

#endif
