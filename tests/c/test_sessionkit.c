/* C tests of the sessionkit C ABI (include/sessionkit.h).
 *
 * Usage: test_sessionkit <tests/fixtures directory>
 * Prints one line per test and ends with "N passed, M failed"; exits non-zero
 * when a test failed. Run by tests/c/run.sh against the shared and the static
 * library, under AddressSanitizer and under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include "sessionkit.h"
#include "minijson.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- a small test harness ------------------------------------------------ */

static int t_failures;
static int n_passed, n_failed;
static char g_base[256];
static const char *g_fixtures;

#define FAILF(...)                                                    \
    do {                                                              \
        t_failures++;                                                 \
        fprintf(stderr, "    %s:%d: ", __FILE__, __LINE__);           \
        fprintf(stderr, __VA_ARGS__);                                 \
        fputc('\n', stderr);                                          \
    } while (0)
#define CHECK(c)                                                      \
    do {                                                              \
        if (!(c)) FAILF("check failed: %s", #c);                      \
    } while (0)
#define CHECK_STR(got, want)                                          \
    do {                                                              \
        const char *g_ = (got), *w_ = (want);                         \
        if (!g_ || !w_ || strcmp(g_, w_) != 0)                        \
            FAILF("%s: got \"%.300s\", want \"%.300s\"", #got,        \
                  g_ ? g_ : "(null)", w_ ? w_ : "(null)");            \
    } while (0)

static void check_status(sk_status got, sk_status want, const char *needle, const char *expr,
                         int line) {
    const char *err = sk_last_error();
    if (got != want) {
        t_failures++;
        fprintf(stderr, "    line %d: %s\n      returned %s (%d), want %s; last error: %.400s\n",
                line, expr, sk_status_name(got), (int)got, sk_status_name(want), err);
        return;
    }
    if (want == SK_OK) {
        if (err == NULL || err[0] != 0) {
            t_failures++;
            fprintf(stderr, "    line %d: %s succeeded but the last error is \"%s\"\n", line,
                    expr, err ? err : "(NULL)");
        }
        return;
    }
    if (err == NULL || err[0] == 0) {
        t_failures++;
        fprintf(stderr, "    line %d: %s failed without a last-error message\n", line, expr);
    } else if (needle && !strstr(err, needle)) {
        t_failures++;
        fprintf(stderr, "    line %d: %s: last error \"%.400s\" does not mention \"%s\"\n",
                line, expr, err, needle);
    }
}
#define ST(call, want) check_status((call), (want), NULL, #call, __LINE__)
#define OK(call) check_status((call), SK_OK, NULL, #call, __LINE__)
#define ERR(call, want, needle) check_status((call), (want), (needle), #call, __LINE__)
#define NUL(call, name) check_status((call), SK_NULL_ARGUMENT, (name), #call, __LINE__)

static void run(const char *name, void (*fn)(void)) {
    t_failures = 0;
    fn();
    if (t_failures == 0) {
        n_passed++;
        printf("ok     %s\n", name);
    } else {
        n_failed++;
        printf("FAILED %s (%d checks)\n", name, t_failures);
    }
    fflush(stdout);
}

/* ---- file helpers --------------------------------------------------------- */

static char *path_join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

static void mkdir_p(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            mkdir(buf, 0700);
            *p = '/';
        }
    }
    mkdir(buf, 0700);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    buf[got] = 0;
    if (len) *len = got;
    return buf;
}

static void write_file(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) { FAILF("cannot write %s: %s", path, strerror(errno)); return; }
    fwrite(data, 1, len, f);
    fclose(f);
}

static void write_text(const char *dir, const char *name, const char *text) {
    char *p = path_join(dir, name);
    write_file(p, text, strlen(text));
    free(p);
}

static int file_is(const char *dir, const char *name, const char *want) {
    char *p = path_join(dir, name);
    char *got = read_file(p, NULL);
    int same = got && strcmp(got, want) == 0;
    free(p);
    free(got);
    return same;
}

/* A fresh directory under the test's temporary base. */
static char *fresh_dir(const char *name) {
    static int counter;
    char buf[512];
    snprintf(buf, sizeof buf, "%s/%d-%s", g_base, ++counter, name);
    mkdir_p(buf);
    return strdup(buf);
}

/* Open a store for `root` with its own home under the temporary base. */
static sk_store *open_store_with(const char *root, const char *extra_options) {
    char *home = fresh_dir("home");
    char opts[1024];
    snprintf(opts, sizeof opts, "{\"home\": \"%s\"%s%s}", home, extra_options ? ", " : "",
             extra_options ? extra_options : "");
    sk_store *store = NULL;
    OK(sk_store_open(root, opts, &store));
    free(home);
    return store;
}

static sk_store *open_store(const char *root) { return open_store_with(root, NULL); }

/* The raw JSON text of a value (malloc'd). */
static char *raw(const char *v) {
    const char *e = mj_skip(v);
    if (!v || !e) return strdup("");
    size_t n = (size_t)(e - v);
    char *s = malloc(n + 1);
    memcpy(s, v, n);
    s[n] = 0;
    return s;
}

/* The ids of the messages of a JSON array (or the strings of an array of ids),
 * joined with ','. */
static char *ids_of(const char *array) {
    size_t cap = 64, len = 0;
    char *out = calloc(1, cap);
    for (size_t i = 0;; i++) {
        const char *m = mj_at(array, i);
        if (!m) break;
        char *id = mj_get_str(m, "id");
        if (!id) id = mj_str(m);
        if (!id) id = strdup("?");
        size_t n = strlen(id);
        if (len + n + 2 > cap) {
            cap = (len + n + 2) * 2;
            out = realloc(out, cap);
        }
        if (len) out[len++] = ',';
        memcpy(out + len, id, n);
        len += n;
        out[len] = 0;
        free(id);
    }
    return out;
}

static char *session_id(sk_session *s) {
    char *id = NULL;
    OK(sk_session_id(s, &id));
    return id;
}

/* Append one message and return its stored id (malloc'd). */
static char *append(sk_session *s, const char *json) {
    char *out = NULL;
    OK(sk_session_append(s, json, &out));
    char *id = out ? mj_get_str(out, "id") : NULL;
    sk_string_free(out);
    return id ? id : strdup("");
}

static char *active_ids(sk_session *s) {
    char *path = NULL;
    OK(sk_session_active_path(s, &path));
    char *ids = ids_of(path ? path : "[]");
    sk_string_free(path);
    return ids;
}

/* ---- tests: library functions -------------------------------------------- */

static void test_version(void) {
    /* The shared table of enums and defaults: static, the same every call. */
    const char *defaults = sk_defaults();
    CHECK(defaults == sk_defaults());
    char *scope = mj_get_str(mj_get(defaults, "defaults"), "memoryScope");
    CHECK_STR(scope, "project");
    free(scope);
    CHECK(mj_len(mj_get(mj_get(defaults, "enums"), "errorKind")) == 8);
    CHECK_STR(sk_version(), SK_VERSION);
    CHECK(sk_abi_version() == SK_ABI_VERSION);
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", SK_VERSION_MAJOR, SK_VERSION_MINOR, SK_VERSION_PATCH);
    CHECK(strncmp(sk_version(), want, strlen(want)) == 0);
    const char *names[] = {"OK", "NOT_FOUND", "BUSY", "CONFLICT", "INVALID_INPUT", "CORRUPT",
                           "IO", "UNSUPPORTED", "INTERNAL", "NULL_ARGUMENT", "INVALID_UTF8"};
    for (int i = 0; i <= 10; i++) CHECK_STR(sk_status_name(i), names[i]);
    CHECK_STR(sk_status_name(11), "UNKNOWN");
    CHECK_STR(sk_status_name(-1), "UNKNOWN");
    CHECK(SK_OK == 0 && SK_NOT_FOUND == 1 && SK_BUSY == 2 && SK_CONFLICT == 3 &&
          SK_INVALID_INPUT == 4 && SK_CORRUPT == 5 && SK_IO == 6 && SK_UNSUPPORTED == 7 &&
          SK_INTERNAL == 8 && SK_NULL_ARGUMENT == 9 && SK_INVALID_UTF8 == 10);
    CHECK(sizeof(sk_status) == 4);
    sk_string_free(NULL);
}

/* ---- tests: store ---------------------------------------------------------- */

static void test_store(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    CHECK(store != NULL);
    char *info = NULL;
    OK(sk_store_info(store, &info));
    char *dir = mj_get_str(info, "dir"), *code = mj_get_str(info, "projectCode");
    struct stat st;
    CHECK(dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK(code && code[0] == '-');
    char *proot = mj_get_str(info, "projectRoot");
    CHECK(proot && strstr(proot, "root") != NULL);
    free(proot);
    free(dir);
    free(code);
    sk_string_free(info);

    char *list = NULL;
    OK(sk_store_list_sessions(store, &list));
    CHECK_STR(list, "[]");
    sk_string_free(list);
    char *cont = (char *)"unchanged";
    OK(sk_store_continue_session(store, &cont));
    CHECK_STR(cont, "null");
    sk_string_free(cont);

    char *report = NULL;
    OK(sk_store_rebuild_index(store, &report));
    CHECK(mj_int(mj_get(report, "sessions")) == 0);
    sk_string_free(report);

    /* Bad options: unknown key, bad value, not JSON. */
    sk_store *other = NULL;
    ERR(sk_store_open(root, "{\"nope\": 1}", &other), SK_INVALID_INPUT, "nope");
    ERR(sk_store_open(root, "{\"blobThreshold\": 0}", &other), SK_INVALID_INPUT, "blobThreshold");
    ERR(sk_store_open(root, "not json", &other), SK_INVALID_INPUT, "store options");
    CHECK(other == NULL);
    ST(sk_store_open("/nonexistent/sk-test/dir", "{}", &other), SK_NOT_FOUND);
    CHECK(other == NULL);

    /* Close sets the handle to NULL; closing again and closing NULL do nothing. */
    sk_store_close(&store);
    CHECK(store == NULL);
    sk_store_close(&store);
    sk_store_close(NULL);
    free(root);
}

/* ---- tests: settings, instruction files, memory ---------------------------- */

static void test_settings_instructions_memory(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    char *w = NULL;
    OK(sk_store_set_setting(store, "user", "model", "\"small\"", &w));
    sk_string_free(w);
    OK(sk_store_set_setting(store, "project", "model", "\"large\"", &w));
    char *path = mj_get_str(w, "path");
    CHECK(path && strstr(path, "/.sessionkit/settings.json") != NULL);
    free(path);
    sk_string_free(w);
    char *s = NULL;
    OK(sk_store_settings(store, NULL, &s));
    CHECK(mj_is(mj_get(mj_get(s, "values"), "model"), "\"large\""));
    CHECK(mj_is(mj_get(mj_get(s, "origins"), "model"), "\"project\""));
    sk_string_free(s);
    OK(sk_store_settings(store, "{\"sources\": [\"user\"]}", &s));
    CHECK(mj_is(mj_get(mj_get(s, "values"), "model"), "\"small\""));
    sk_string_free(s);
    OK(sk_store_unset_setting(store, "project", "model", &w));
    CHECK(mj_is_true(mj_get(w, "existed")));
    sk_string_free(w);
    w = NULL;
    ERR(sk_store_set_setting(store, "host", "model", "1", &w), SK_INVALID_INPUT, "host");
    ERR(sk_store_set_setting(store, "team", "model", "1", &w), SK_INVALID_INPUT, "team");
    ERR(sk_store_set_setting(store, "user", "model", "not json", &w), SK_INVALID_INPUT, "value_json");
    NUL(sk_store_set_setting(store, "user", NULL, "1", &w), "key");
    CHECK(w == NULL);

    /* A malformed local file: reported with its line, the rest still loads. */
    char *dot = path_join(root, ".sessionkit");
    write_text(dot, "settings.local.json", "{\n  \"a\": ]\n}");
    OK(sk_store_settings(store, "", &s));
    const char *local = mj_at(mj_get(s, "sources"), 2);
    CHECK(mj_is(mj_get(local, "status"), "\"error\""));
    char *err = mj_get_str(local, "error");
    CHECK(err && strstr(err, "line 2, column 8") != NULL);
    free(err);
    CHECK(mj_is(mj_get(mj_get(s, "values"), "model"), "\"small\""));
    sk_string_free(s);
    ERR(sk_store_set_setting(store, "local", "a", "1", &w), SK_CORRUPT, "line 2");

    /* An older project file brought to the current shape, its original kept. */
    write_text(dot, "settings.json", "{\"instructionFiles\": [\"TEAM.md\"]}");
    OK(sk_store_migrate_settings(store, "project", &w));
    char *backup = mj_get_str(w, "backup");
    CHECK(backup && strstr(backup, "settings.json.v1.bak") != NULL);
    CHECK(mj_len(mj_get(w, "migrations")) == 2);
    sk_string_free(w);
    OK(sk_store_settings(store, "{\"sources\": [\"project\"]}", &s));
    CHECK(mj_is(mj_get(mj_get(mj_get(s, "values"), "instructions"), "names"), "[\"TEAM.md\"]"));
    sk_string_free(s);
    OK(sk_store_migrate_settings(store, "project", &w));
    CHECK(mj_is(mj_get(w, "backup"), "null"));
    sk_string_free(w);
    OK(sk_store_unset_setting(store, "project", "instructions", &w));
    sk_string_free(w);
    w = NULL;
    ERR(sk_store_migrate_settings(store, "host", &w), SK_INVALID_INPUT, "host");
    NUL(sk_store_migrate_settings(store, NULL, &w), "source");
    CHECK(w == NULL);
    free(backup);
    free(dot);

    /* Instruction files: the root's, its include, and a cycle reported. */
    write_text(root, "AGENTS.md", "Be brief. @notes.md");
    write_text(root, "notes.md", "@AGENTS.md");
    char *ins = NULL;
    OK(sk_store_instructions(store, root, NULL, &ins));
    CHECK(mj_len(mj_get(ins, "files")) == 2);
    CHECK(mj_is(mj_get(mj_at(mj_get(ins, "files"), 1), "level"), "\"include\""));
    CHECK(mj_is(mj_get(mj_at(mj_get(ins, "problems"), 0), "kind"), "\"cycle\""));
    sk_string_free(ins);
    OK(sk_store_instructions(store, root, "{\"names\": [\"CLAUDE.md\"]}", &ins));
    CHECK(mj_len(mj_get(ins, "files")) == 0);
    sk_string_free(ins);
    ERR(sk_store_instructions(store, "/nonexistent/sk-test", NULL, &ins), SK_NOT_FOUND, "nonexistent");

    /* Memory. */
    char *m = NULL;
    OK(sk_store_memory_write(store, "project", "build", "# Build\nRun make.", false, &m));
    CHECK(mj_is(mj_get(m, "summary"), "\"Build\""));
    sk_string_free(m);
    ERR(sk_store_memory_write(store, "project", "build", "x", false, &m), SK_CONFLICT, "build");
    OK(sk_store_memory_write(store, "project", "build", "Run cargo.", true, &m));
    sk_string_free(m);
    OK(sk_store_memory_read(store, "project", "build", &m));
    CHECK_STR(m, "Run cargo.");
    sk_string_free(m);
    OK(sk_store_memory_list(store, "project", &m));
    CHECK(mj_len(m) == 1);
    sk_string_free(m);
    m = NULL;
    ERR(sk_store_memory_write(store, "project", "../escape", "x", false, &m), SK_INVALID_INPUT,
        "memory name");
    ERR(sk_store_memory_write(store, "team", "a", "x", false, &m), SK_INVALID_INPUT, "scope");
    OK(sk_store_memory_delete(store, "project", "build"));
    ERR(sk_store_memory_read(store, "project", "build", &m), SK_NOT_FOUND, "build");
    CHECK(m == NULL);
    NUL(sk_store_memory_delete(store, "project", NULL), "name");
    NUL(sk_store_memory_list(NULL, "user", &m), "store");

    sk_store_close(&store);
    free(root);
}

/* ---- tests: search ---------------------------------------------------------- */

static void test_search(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    sk_session *s = NULL;
    OK(sk_session_create(store, "{\"id\": \"s-find\"}", &s));
    free(append(s, "{\"id\": \"u1\", \"role\": \"user\", \"content\": \"Why does parse_config fail?\"}"));
    free(append(s, "{\"id\": \"a1\", \"role\": \"assistant\", \"content\": \"Look at src/main.rs\"}"));
    char *out = NULL;
    OK(sk_store_search(store, "{\"text\": \"parse_config\"}", &out));
    const char *hits = mj_get(out, "hits");
    CHECK(mj_len(hits) == 1);
    char *sid = mj_get_str(mj_at(hits, 0), "sessionId"), *mid = mj_get_str(mj_at(hits, 0), "messageId");
    char *snippet = mj_get_str(mj_at(hits, 0), "snippet");
    CHECK_STR(sid, "s-find");
    CHECK_STR(mid, "u1");
    CHECK(snippet && strstr(snippet, "\xc2\xabparse_config\xc2\xbb") != NULL);
    free(sid);
    free(mid);
    free(snippet);
    sk_string_free(out);
    out = NULL;
    OK(sk_store_search(store, "{\"text\": \"src/main.rs\", \"role\": \"user\"}", &out));
    CHECK(mj_len(mj_get(out, "hits")) == 0);
    sk_string_free(out);
    out = NULL;
    ERR(sk_store_search(store, "{\"text\": \"x\", \"since\": \"soon\"}", &out), SK_INVALID_INPUT,
        "soon");
    ERR(sk_store_search(store, "{\"txt\": \"x\"}", &out), SK_INVALID_INPUT, "txt");
    CHECK(out == NULL);
    NUL(sk_store_search(store, NULL, &out), "query_json");
    OK(sk_session_close(&s));
    sk_store_close(&store);
    free(root);
}

/* ---- tests: sessions, views ------------------------------------------------ */

static void test_session_lifecycle(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    sk_session *s = NULL;
    OK(sk_session_create(store, "{\"title\": \"First\", \"id\": \"s-1\"}", &s));
    CHECK(s != NULL);
    char *id = session_id(s);
    CHECK_STR(id, "s-1");

    char *u1 = append(s, "{\"role\": \"user\", \"content\": \"Fix the failing test\"}");
    char *out = NULL;
    OK(sk_session_append(s, "{\"role\": \"assistant\", \"content\": \"Looking.\", \"id\": \"a1\"}",
                         &out));
    char *parent = mj_get_str(out, "parentId");
    CHECK_STR(parent, u1);
    char *ts = mj_get_str(out, "timestamp");
    CHECK(ts && strlen(ts) > 10);
    free(ts);
    free(parent);
    sk_string_free(out);

    char *batch = NULL;
    OK(sk_session_append_batch(
        s,
        "[{\"role\": \"user\", \"content\": \"Run it\", \"id\": \"u2\"},"
        " {\"role\": \"assistant\", \"content\": \"Done.\", \"id\": \"a2\"}]",
        &batch));
    CHECK(mj_len(batch) == 2);
    char *bids = ids_of(batch);
    CHECK_STR(bids, "u2,a2");
    free(bids);
    sk_string_free(batch);

    char *ids = active_ids(s);
    char want[256];
    snprintf(want, sizeof want, "%s,a1,u2,a2", u1);
    CHECK_STR(ids, want);
    free(ids);


    /* patch, update_state, rename */
    OK(sk_session_patch(s, "a2", "{\"meta\": {\"usage\": {\"output_tokens\": 7}}}"));
    char *entry = NULL;
    OK(sk_session_update_state(s, "{\"status\": \"completed\"}", &entry));
    char *status = mj_get_str(entry, "status");
    CHECK_STR(status, "completed");
    free(status);
    sk_string_free(entry);
    OK(sk_session_rename(s, "Renamed", &entry));
    char *title = mj_get_str(entry, "title");
    CHECK_STR(title, "Renamed");
    free(title);
    sk_string_free(entry);
    OK(sk_session_sync(s));

    /* info */
    char *info = NULL;
    OK(sk_session_info(s, &info));
    char *head = mj_get_str(info, "head");
    CHECK_STR(head, "a2");
    free(head);
    CHECK(mj_get(mj_get(info, "entry"), "messageCount") &&
          mj_int(mj_get(mj_get(info, "entry"), "messageCount")) == 4);
    CHECK(mj_len(mj_get(info, "pruned")) == 0);
    sk_string_free(info);

    /* set_head / resume_at: branch, then back */
    OK(sk_session_set_head(s, "a1"));
    char *b1 = append(s, "{\"role\": \"user\", \"content\": \"Other idea\"}");
    ids = active_ids(s);
    snprintf(want, sizeof want, "%s,a1,%s", u1, b1);
    CHECK_STR(ids, want);
    free(ids);
    OK(sk_session_resume_at(s, "a2"));
    ids = active_ids(s);
    snprintf(want, sizeof want, "%s,a1,u2,a2", u1);
    CHECK_STR(ids, want);
    free(ids);
    OK(sk_session_set_head(s, NULL));
    ids = active_ids(s);
    CHECK_STR(ids, "");
    free(ids);
    OK(sk_session_set_head(s, "a2"));
    ERR(sk_session_set_head(s, "missing-message"), SK_NOT_FOUND, "missing-message");

    /* model view with options */
    char *mv = NULL;
    OK(sk_session_model_view(s, NULL, &mv));
    CHECK(mj_len(mv) == 4);
    sk_string_free(mv);
    OK(sk_session_model_view(s, "{\"lastN\": 2}", &mv));
    ids = ids_of(mv);
    CHECK_STR(ids, "u2,a2");
    free(ids);
    sk_string_free(mv);
    ERR(sk_session_model_view(s, "{\"lastN\": \"x\"}", &mv), SK_INVALID_INPUT, "model view options");
    ERR(sk_session_model_view(s, "{\"lastM\": 1}", &mv), SK_INVALID_INPUT, "lastM");

    /* a view of the open session */
    sk_view *v = NULL;
    OK(sk_session_read(s, &v));
    char *vj = NULL;
    OK(sk_view_info(v, &vj));
    CHECK(mj_int(mj_get(vj, "messageCount")) == 5);
    head = mj_get_str(vj, "head");
    CHECK_STR(head, "a2");
    free(head);
    CHECK(mj_len(mj_get(vj, "records")) >= 1); /* the state record */
    CHECK(mj_get(mj_get(vj, "report"), "skipped") != NULL);
    sk_string_free(vj);
    OK(sk_view_active_path(v, &vj));
    CHECK(mj_len(vj) == 4);
    sk_string_free(vj);
    OK(sk_view_ui(v, &vj));
    CHECK(mj_is_true(mj_get(mj_at(vj, 0), "visible")));
    CHECK(mj_get(mj_at(vj, 0), "compacted") != NULL);
    sk_string_free(vj);
    OK(sk_view_model(v, "{\"tokenBudget\": 100000}", &vj));
    CHECK(mj_len(vj) == 4);
    sk_string_free(vj);
    OK(sk_view_message(v, "a2", &vj));
    CHECK(mj_int(mj_get(mj_get(mj_get(vj, "meta"), "usage"), "output_tokens")) == 7);
    sk_string_free(vj);
    ERR(sk_view_message(v, "nope", &vj), SK_NOT_FOUND, "nope");
    OK(sk_view_tree(v, &vj));
    CHECK(mj_len(vj) == 5);
    CHECK(mj_get(mj_at(vj, 0), "onActivePath") != NULL);
    sk_string_free(vj);
    OK(sk_view_branches(v, &vj));
    CHECK(mj_len(vj) == 2);
    sk_string_free(vj);
    sk_view_close(&v);
    CHECK(v == NULL);
    sk_view_close(&v);
    sk_view_close(NULL);

    /* A second writer is refused while the first holds the lock. */
    sk_session *second = NULL;
    ERR(sk_session_open(store, "s-1", &second), SK_BUSY, "s-1");
    CHECK(second == NULL);
    ERR(sk_store_rename_session(store, "s-1", "x", &out), SK_BUSY, NULL);
    ERR(sk_store_delete_session(store, "s-1"), SK_BUSY, NULL);
    ERR(sk_session_create(store, "{\"id\": \"s-1\"}", &second), SK_CONFLICT, "s-1");

    OK(sk_session_close(&s));
    CHECK(s == NULL);
    OK(sk_session_close(&s));
    OK(sk_session_close(NULL));

    /* store-level reads */
    char *list = NULL;
    OK(sk_store_list_sessions(store, &list));
    CHECK(mj_len(list) == 1);
    char *lid = mj_get_str(mj_at(list, 0), "id");
    CHECK_STR(lid, "s-1");
    free(lid);
    sk_string_free(list);
    OK(sk_store_session_entry(store, "s-1", &entry));
    title = mj_get_str(entry, "title");
    CHECK_STR(title, "Renamed");
    free(title);
    sk_string_free(entry);
    OK(sk_store_continue_session(store, &entry));
    lid = mj_get_str(entry, "id");
    CHECK_STR(lid, "s-1");
    free(lid);
    sk_string_free(entry);
    OK(sk_store_rename_session(store, "s-1", "Third title", &entry));
    title = mj_get_str(entry, "title");
    CHECK_STR(title, "Third title");
    free(title);
    sk_string_free(entry);
    OK(sk_store_model_view(store, "s-1", NULL, &mv));
    ids = ids_of(mv);
    snprintf(want, sizeof want, "%s,a1,u2,a2", u1);
    CHECK_STR(ids, want);
    free(ids);
    sk_string_free(mv);
    OK(sk_store_model_view(store, "s-1", "{\"lastN\": 1}", &mv));
    CHECK(mj_len(mv) == 1);
    sk_string_free(mv);
    OK(sk_store_read_session(store, "s-1", &v));
    OK(sk_view_active_path(v, &vj));
    CHECK(mj_len(vj) == 4);
    sk_string_free(vj);
    sk_view_close(&v);
    OK(sk_store_rebuild_index(store, &out));
    CHECK(mj_int(mj_get(out, "sessions")) == 1);
    sk_string_free(out);

    /* reopen for writing, append continues from the head */
    OK(sk_session_open(store, "s-1", &s));
    char *u3 = append(s, "{\"role\": \"user\", \"content\": \"And now?\"}");
    OK(sk_session_read(s, &v));
    OK(sk_view_message(v, u3, &vj));
    parent = mj_get_str(vj, "parentId");
    CHECK_STR(parent, "a2");
    free(parent);
    sk_string_free(vj);
    sk_view_close(&v);
    OK(sk_session_close(&s));

    /* delete */
    OK(sk_store_delete_session(store, "s-1"));
    ERR(sk_store_session_entry(store, "s-1", &entry), SK_NOT_FOUND, "s-1");
    ERR(sk_store_read_session(store, "s-1", &v), SK_NOT_FOUND, "s-1");
    ERR(sk_session_open(store, "s-1", &s), SK_NOT_FOUND, "s-1");
    OK(sk_store_list_sessions(store, &list));
    CHECK_STR(list, "[]");
    sk_string_free(list);

    free(u1);
    free(u3);
    free(b1);
    free(id);
    sk_store_close(&store);
    free(root);
}

/* Groups from several callers in one write: each group is accepted or refused
 * on its own; a refused one is not written. */
static void test_append_groups(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    sk_session *s = NULL;
    OK(sk_session_create(store, NULL, &s));
    /* append_groups: one write, a result per group; the refused group (a
       message without a role) is left out and the next chains past it. */
    char *groups = NULL;
    OK(sk_session_append_groups(
        s,
        "[[{\"role\": \"user\", \"content\": \"g1\", \"id\": \"g1\"}],"
        " [{\"content\": \"no role\"}],"
        " [{\"role\": \"assistant\", \"content\": \"g3\", \"id\": \"g3\"}]]",
        &groups));
    CHECK(mj_len(groups) == 3);
    char *g1 = mj_get_str(mj_at(mj_get(mj_at(groups, 0), "ok"), 0), "id");
    CHECK_STR(g1, "g1");
    free(g1);
    char *code = mj_get_str(mj_get(mj_at(groups, 1), "error"), "code");
    CHECK_STR(code, "INVALID_INPUT");
    free(code);
    char *g3parent = mj_get_str(mj_at(mj_get(mj_at(groups, 2), "ok"), 0), "parentId");
    CHECK_STR(g3parent, "g1");
    free(g3parent);
    sk_string_free(groups);
    ERR(sk_session_append_groups(s, "[{\"role\": \"user\"}]", &groups), SK_INVALID_INPUT,
        "item 0 is an object");
    char *ids = active_ids(s);
    CHECK_STR(ids, "g1,g3");
    free(ids);
    sk_subagent *a = NULL;
    OK(sk_session_spawn_subagent(s, "worker", NULL, &a));
    OK(sk_subagent_append_groups(a, "[[{\"content\": 1}], [{\"role\": \"user\", \"content\": \"t\"}]]",
                                 &groups));
    CHECK(mj_get(mj_at(groups, 0), "error") != NULL);
    CHECK(mj_len(mj_get(mj_at(groups, 1), "ok")) == 1);
    sk_string_free(groups);
    sk_subagent_close(&a);
    OK(sk_session_close(&s));
    sk_store_close(&store);
    free(root);
}

/* The facade's remaining operations, each as a C host calls it. */
static void test_more_operations(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    sk_session *s = NULL;
    OK(sk_session_create(store, "{\"id\": \"more\"}", &s));
    char *out = NULL;

    /* OpenAI Responses items: appended as messages, read back, popped. */
    OK(sk_session_append_responses_items(
        s, "[{\"role\": \"user\", \"content\": \"q\"}, {\"role\": \"assistant\", \"content\": \"a\"}]", &out));
    CHECK(mj_len(out) == 2);
    sk_string_free(out);
    ERR(sk_session_append_responses_items(s, "{}", &out), SK_INVALID_INPUT, "items_json");
    OK(sk_session_responses_items(s, "{\"limit\": 1}", &out));
    CHECK(mj_len(out) == 1);
    char *content = mj_get_str(mj_at(out, 0), "content");
    CHECK_STR(content, "a");
    free(content);
    sk_string_free(out);
    ERR(sk_session_responses_items(s, "{\"limits\": 1}", &out), SK_INVALID_INPUT, "limits");
    OK(sk_session_pop_responses_item(s, &out));
    content = mj_get_str(out, "content");
    CHECK_STR(content, "a");
    free(content);
    sk_string_free(out);
    OK(sk_session_responses_items(s, NULL, &out));
    CHECK(mj_len(out) == 1);
    sk_string_free(out);
    ERR(sk_session_replace_responses_items_with_compaction(s, "[{\"role\": \"user\", \"content\": \"x\"}]", &out),
        SK_INVALID_INPUT, "compaction");

    /* Undo the latest turn, conversation only. */
    free(append(s, "{\"role\": \"user\", \"content\": \"second\", \"id\": \"u2\"}"));
    OK(sk_session_rewind_turns(s, 1, "conversation", false, &out));
    char *msg = mj_get_str(out, "messageId");
    CHECK_STR(msg, "u2");
    free(msg);
    sk_string_free(out);
    ERR(sk_session_rewind_turns(s, 0, "conversation", false, &out), SK_INVALID_INPUT, NULL);
    ERR(sk_session_rewind_turns(s, 1, "sideways", false, &out), SK_INVALID_INPUT, "sideways");

    OK(sk_session_last_snapshot(s, &out));
    CHECK(mj_is_null(out));
    sk_string_free(out);
    OK(sk_session_flush_index(s));

    OK(sk_store_session_ids(store, &out));
    CHECK(mj_len(out) == 1);
    sk_string_free(out);
    OK(sk_store_check_file_history(store, &out));
    CHECK(out != NULL && out[0] == '{');
    sk_string_free(out);
    OK(sk_store_prune_orphan_file_history(store, &out));
    CHECK(mj_len(out) == 0);
    sk_string_free(out);
    OK(sk_checkpoint_summaries(store, "more", &out));
    CHECK(mj_len(out) == 0);
    sk_string_free(out);
    ERR(sk_store_branch_file_history(store, "more", "not-a-snapshot"), SK_INVALID_INPUT, NULL);

    uint64_t fsyncs = 0, after = 0;
    OK(sk_session_fsync_count(s, &fsyncs));
    free(append(s, "{\"role\": \"user\", \"content\": \"synced\"}"));
    OK(sk_session_sync(s));
    OK(sk_session_fsync_count(s, &after));
    CHECK(after == fsyncs + 1); /* the sync asked for, and no other */
    OK(sk_store_log_path(store, "more", &out));
    char *log = mj_str(out);
    CHECK(log && strstr(log, "more.jsonl") != NULL);
    free(log);
    sk_string_free(out);
    ERR(sk_store_log_path(store, "../x", &out), SK_INVALID_INPUT, NULL);
    OK(sk_store_memory_path(store, "user", &out));
    char *mem = mj_str(out);
    CHECK(mem && strstr(mem, "memory") != NULL);
    free(mem);
    sk_string_free(out);
    ERR(sk_store_memory_path(store, "team", &out), SK_INVALID_INPUT, "team");
    sk_session *again = NULL;
    ERR(sk_session_open_or_create(store, "more", &again), SK_BUSY, NULL);
    OK(sk_session_open_or_create(store, "made-on-open", &again));
    char *made = session_id(again);
    CHECK_STR(made, "made-on-open");
    free(made);
    OK(sk_session_close(&again));
    OK(sk_session_open_or_create(store, "made-on-open", &again));
    OK(sk_session_close(&again));

    /* Erase: the old handle is gone, the new one is an empty session of the same id. */
    sk_session *fresh = NULL;
    OK(sk_session_erase(&s, &fresh));
    CHECK(s == NULL);
    char *ids = active_ids(fresh);
    CHECK_STR(ids, "");
    free(ids);
    char *id = session_id(fresh);
    CHECK_STR(id, "more");
    free(id);
    NUL(sk_session_erase(&s, &fresh), "session");
    OK(sk_session_close(&fresh));
    sk_store_close(&store);
    free(root);
}

/* Shared writers: two handles on one conversation take turns, each write
 * continuing from the other's; an exclusive holder makes a shared writer wait,
 * then SK_BUSY; any conversation id maps to a session id in the store. */
static void test_shared_writers(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store_with(root, "\"busyTimeoutMs\": 100");
    sk_session *a = NULL, *b = NULL;
    OK(sk_session_open_conversation(store, "user@example.com", &a));
    OK(sk_session_open_conversation(store, "user@example.com", &b));
    char *ida = session_id(a), *idb = session_id(b);
    CHECK_STR(ida, idb);
    char *mapped = NULL;
    OK(sk_conversation_session_id("user@example.com", &mapped));
    CHECK_STR(ida, mapped);
    CHECK(strncmp(mapped, "c-user-example-com-", 19) == 0);
    char *q = append(a, "{\"role\": \"user\", \"content\": \"q\"}");
    char *out = NULL;
    OK(sk_session_append(b, "{\"role\": \"assistant\", \"content\": \"a\"}", &out));
    char *parent = mj_get_str(out, "parentId");
    CHECK_STR(parent, q); /* b continued from a's message */
    free(parent);
    sk_string_free(out);
    OK(sk_session_close(&a));
    OK(sk_session_close(&b));
    char *entry = NULL;
    OK(sk_store_session_entry(store, ida, &entry));
    char *conv = mj_get_str(entry, "conversationId");
    CHECK_STR(conv, "user@example.com");
    free(conv);
    sk_string_free(entry);

    sk_session *held = NULL, *shared = NULL;
    OK(sk_session_create(store, "{\"id\": \"held\"}", &held));
    ERR(sk_session_open_shared(store, "held", &shared), SK_BUSY, "held");
    OK(sk_session_close(&held));
    OK(sk_session_open_shared(store, "held", &shared));
    free(append(shared, "{\"role\": \"user\", \"content\": \"now\"}"));
    OK(sk_session_close(&shared));

    char *o = NULL;
    ERR(sk_conversation_session_id("", &o), SK_INVALID_INPUT, "empty");
    ERR(sk_session_open_conversation(store, "", &shared), SK_INVALID_INPUT, "empty");
    OK(sk_conversation_session_id("../x", &o));
    CHECK(strchr(o, '/') == NULL && o[0] != '.');
    sk_string_free(o);
    sk_string_free(mapped);
    sk_string_free(ida);
    sk_string_free(idb);
    free(q);
    sk_store_close(&store);
    free(root);
}

static void test_fork(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    sk_session *s = NULL;
    OK(sk_session_create(store, "{\"id\": \"src\", \"title\": \"Source\"}", &s));
    free(append(s, "{\"role\": \"user\", \"content\": \"one\", \"id\": \"m1\"}"));
    free(append(s, "{\"role\": \"assistant\", \"content\": \"two\", \"id\": \"m2\"}"));
    free(append(s, "{\"role\": \"user\", \"content\": \"three\", \"id\": \"m3\"}"));
    /* The source may be held by its writer while it is forked. */
    sk_session *f = NULL;
    OK(sk_session_fork(store, "src", "{\"at\": \"m2\", \"title\": \"Fork\"}", &f));
    char *fid = session_id(f);
    CHECK(fid && strcmp(fid, "src") != 0);
    char *ids = active_ids(f);
    CHECK_STR(ids, "m1,m2");
    free(ids);
    char *info = NULL;
    OK(sk_session_info(f, &info));
    const char *from = mj_get(mj_get(info, "entry"), "forkedFrom");
    char *fs = mj_get_str(from, "sessionId"), *fm = mj_get_str(from, "messageId");
    CHECK_STR(fs, "src");
    CHECK_STR(fm, "m2");
    free(fs);
    free(fm);
    sk_string_free(info);
    free(append(f, "{\"role\": \"user\", \"content\": \"forked\", \"id\": \"f1\"}"));
    OK(sk_session_close(&f));

    sk_session *whole = NULL;
    OK(sk_session_fork(store, "src", NULL, &whole));
    ids = active_ids(whole);
    CHECK_STR(ids, "m1,m2,m3");
    free(ids);
    OK(sk_session_close(&whole));
    ERR(sk_session_fork(store, "src", "{\"at\": \"zzz\"}", &whole), SK_NOT_FOUND, "zzz");
    ERR(sk_session_fork(store, "no-such", NULL, &whole), SK_NOT_FOUND, "no-such");
    ERR(sk_session_fork(store, "src", "{\"bad\": 1}", &whole), SK_INVALID_INPUT, "bad");
    CHECK(whole == NULL);
    OK(sk_session_close(&s));

    char *list = NULL;
    OK(sk_store_list_sessions(store, &list));
    CHECK(mj_len(list) == 3);
    /* A page is that slice of the listing, with the total. */
    char *page = NULL;
    OK(sk_store_list_page(store, "{\"offset\": 1, \"limit\": 1}", &page));
    CHECK(mj_int(mj_get(page, "total")) == 3);
    CHECK(mj_len(mj_get(page, "sessions")) == 1);
    char *want = mj_get_str(mj_at(list, 1), "id");
    char *got = mj_get_str(mj_at(mj_get(page, "sessions"), 0), "id");
    CHECK(want && got && strcmp(want, got) == 0);
    free(want);
    free(got);
    sk_string_free(page);
    OK(sk_store_list_page(store, NULL, &page));
    CHECK(mj_len(mj_get(page, "sessions")) == 3);
    sk_string_free(page);
    page = NULL;
    ERR(sk_store_list_page(store, "{\"page\": 2}", &page), SK_INVALID_INPUT, "page");
    CHECK(page == NULL);
    sk_string_free(list);
    free(fid);
    sk_store_close(&store);
    free(root);
}

static void test_subagents(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    sk_session *s = NULL;
    OK(sk_session_create(store, "{\"id\": \"main\"}", &s));
    free(append(s, "{\"role\": \"user\", \"content\": \"Find uses of --quiet\"}"));

    sk_subagent *a = NULL;
    OK(sk_session_spawn_subagent(s, "explorer-1", "{\"task\": \"find\"}", &a));
    char *aid = NULL;
    OK(sk_subagent_id(a, &aid));
    CHECK_STR(aid, "explorer-1");
    sk_string_free(aid);
    char *out = NULL;
    OK(sk_subagent_append(a, "{\"role\": \"user\", \"content\": \"Search\"}", &out));
    sk_string_free(out);
    OK(sk_subagent_append_batch(
        a, "[{\"role\": \"assistant\", \"content\": \"grep\"}, {\"role\": \"tool\", \"content\": \"1 hit\"}]",
        &out));
    CHECK(mj_len(out) == 2);
    sk_string_free(out);
    ERR(sk_subagent_append_batch(a, "{\"role\": \"user\"}", &out), SK_INVALID_INPUT, "array");
    ERR(sk_subagent_append_batch(a, "[1]", &out), SK_INVALID_INPUT, "non-object");
    ERR(sk_subagent_append(a, "[]", &out), SK_INVALID_INPUT, "object");
    sk_view *v = NULL;
    OK(sk_subagent_read(a, &v));
    char *vj = NULL;
    OK(sk_view_active_path(v, &vj));
    CHECK(mj_len(vj) == 3);
    sk_string_free(vj);
    sk_view_close(&v);
    OK(sk_subagent_finish(a, "{\"summary\": \"One use.\"}", false));
    ERR(sk_subagent_finish(a, "{broken", false), SK_INVALID_INPUT, "result_json");

    /* Its lock is exclusive. */
    sk_subagent *again = NULL;
    ERR(sk_session_open_subagent(s, "explorer-1", &again), SK_BUSY, NULL);
    sk_subagent_close(&a);
    CHECK(a == NULL);
    sk_subagent_close(&a);
    sk_subagent_close(NULL);
    OK(sk_session_open_subagent(s, "explorer-1", &again));
    OK(sk_subagent_append(again, "{\"role\": \"user\", \"content\": \"more\"}", &out));
    sk_string_free(out);
    sk_subagent_close(&again);
    ERR(sk_session_open_subagent(s, "ghost", &again), SK_NOT_FOUND, "ghost");

    /* A subagent with a generated id and no metadata, failed. */
    sk_subagent *b = NULL;
    OK(sk_session_spawn_subagent(s, NULL, NULL, &b));
    char *bid = NULL;
    OK(sk_subagent_id(b, &bid));
    CHECK(bid && strlen(bid) > 0);
    OK(sk_subagent_finish(b, "\"gave up\"", true));
    sk_subagent_close(&b);

    char *list = NULL;
    OK(sk_store_list_subagents(store, "main", &list));
    CHECK(mj_len(list) == 2);
    char *first = mj_get_str(mj_at(list, 0), "agentId");
    char *st0 = mj_get_str(mj_at(list, 0), "status"), *st1 = mj_get_str(mj_at(list, 1), "status");
    CHECK_STR(first, "explorer-1");
    CHECK_STR(st0, "completed");
    CHECK_STR(st1, "failed");
    free(first);
    free(st0);
    free(st1);
    sk_string_free(list);
    OK(sk_store_read_subagent(store, "main", "explorer-1", &v));
    OK(sk_view_active_path(v, &vj));
    CHECK(mj_len(vj) == 4);
    sk_string_free(vj);
    sk_view_close(&v);
    OK(sk_store_read_subagent(store, "main", bid, &v));
    sk_view_close(&v);
    ERR(sk_store_read_subagent(store, "main", "ghost", &v), SK_NOT_FOUND, "ghost");
    ERR(sk_store_read_subagent(store, "main", "../x", &v), SK_INVALID_INPUT, "agent id");
    sk_string_free(bid);

    /* The main log recorded spawns and results. */
    OK(sk_session_read(s, &v));
    OK(sk_view_info(v, &vj));
    CHECK(mj_len(mj_get(vj, "records")) == 4);
    sk_string_free(vj);
    sk_view_close(&v);
    OK(sk_session_close(&s));
    sk_store_close(&store);
    free(root);
}

static void test_compaction(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    sk_session *s = NULL;
    OK(sk_session_create(store, NULL, &s));
    free(append(s, "{\"role\": \"system\", \"content\": \"You are helpful.\"}"));
    char msg[1024], text[401];
    memset(text, 'w', 400);
    text[400] = 0;
    for (int i = 0; i < 10; i++) {
        snprintf(msg, sizeof msg, "{\"role\": \"user\", \"content\": \"q%d %s\"}", i, text);
        free(append(s, msg));
        snprintf(msg, sizeof msg, "{\"role\": \"assistant\", \"content\": \"r%d %s\"}", i, text);
        free(append(s, msg));
    }
    char *plan = NULL;
    OK(sk_session_select_compaction(s, "{\"tokenBudget\": 1000000}", &plan));
    CHECK_STR(plan, "null");
    sk_string_free(plan);
    OK(sk_session_select_compaction(
        s, "{\"tokenBudget\": 1200, \"keepLastTurns\": 2, \"summaryTokens\": 100}", &plan));
    CHECK(plan && mj_len(mj_get(plan, "replaces")) > 0);
    CHECK(mj_len(mj_get(plan, "messages")) == mj_len(mj_get(plan, "replaces")));
    CHECK(mj_int(mj_get(plan, "tokensBefore")) > mj_int(mj_get(plan, "tokensAfter")));
    char *replaces = raw(mj_get(plan, "replaces"));
    long n_replaced = mj_len(replaces);
    sk_string_free(plan);

    ERR(sk_session_select_compaction(s, "{}", &plan), SK_INVALID_INPUT, "tokenBudget");
    ERR(sk_session_apply_compaction(s, "[\"nope\"]", "\"x\"", &plan),
        SK_INVALID_INPUT, NULL);
    ERR(sk_session_apply_compaction(s, "{\"a\": 1}", "\"x\"", &plan),
        SK_INVALID_INPUT, "replaces_json");

    char *before = NULL;
    OK(sk_session_model_view(s, NULL, &before));
    char *summary = NULL;
    ERR(sk_session_apply_compaction(s, replaces, "{\"content\": \"x\"}", &summary),
        SK_INVALID_INPUT, "summary");
    OK(sk_session_apply_compaction(s, replaces, "\"Earlier: ten questions.\"",
                                   &summary));
    char *sid = mj_get_str(summary, "id");
    CHECK(sid != NULL);
    char *after = NULL;
    OK(sk_session_model_view(s, NULL, &after));
    CHECK(mj_len(after) == mj_len(before) - n_replaced + 1);
    char *ids = ids_of(after);
    CHECK(sid && strstr(ids, sid) != NULL);
    free(ids);
    /* The UI still shows everything, the replaced messages marked compacted. */
    sk_view *v = NULL;
    OK(sk_session_read(s, &v));
    char *ui = NULL;
    OK(sk_view_ui(v, &ui));
    CHECK(mj_is_true(mj_get(mj_at(ui, 1), "compacted")));
    sk_string_free(ui);
    sk_view_close(&v);
    /* Resume reads the same model view from the end of the log. */
    char *sid_s = session_id(s);
    char *resumed = NULL;
    OK(sk_store_model_view(store, sid_s, NULL, &resumed));
    CHECK_STR(resumed, after);
    sk_string_free(resumed);
    sk_string_free(sid_s);
    free(sid);
    sk_string_free(summary);
    sk_string_free(before);
    sk_string_free(after);
    free(replaces);
    OK(sk_session_close(&s));
    sk_store_close(&store);
    free(root);
}

static void test_file_history(void) {
    char *root = fresh_dir("project");
    write_text(root, "a.txt", "one\n");
    sk_store *store = open_store(root);
    sk_session *s = NULL;
    OK(sk_session_create(store, NULL, &s));
    OK(sk_session_track_read(s, "[\"a.txt\"]"));
    char *um = NULL;
    OK(sk_session_user_input(s, "{\"content\": \"Change a.txt\"}", &um));
    char *uid = mj_get_str(um, "id");
    char *hash = mj_get_str(um, "checkpointHash");
    char *role = mj_get_str(um, "role");
    CHECK(hash && strlen(hash) > 0);
    CHECK_STR(role, "user");
    free(role);
    free(hash);
    sk_string_free(um);
    ERR(sk_session_user_input(s, "{\"role\": \"assistant\", \"content\": \"x\"}", &um),
        SK_INVALID_INPUT, "user");

    char *snap = NULL;
    OK(sk_session_before_edit(s, "[\"a.txt\"]", &snap));
    CHECK(snap && strlen(snap) > 0);
    sk_string_free(snap);
    write_text(root, "a.txt", "two\n");
    OK(sk_session_after_edit(s, "[\"a.txt\"]", &snap));
    CHECK(snap && strlen(snap) > 0);
    sk_string_free(snap);
    free(append(s, "{\"role\": \"assistant\", \"content\": \"Changed it.\"}"));

    char *tracked = NULL;
    OK(sk_session_tracked_files(s, &tracked));
    CHECK_STR(tracked, "[\"a.txt\"]");
    sk_string_free(tracked);

    char *changes = NULL;
    OK(sk_session_external_changes(s, "[\"a.txt\", \"b.txt\"]", &changes));
    char *c0 = mj_get_str(mj_at(changes, 0), "status"), *c1 = mj_get_str(mj_at(changes, 1), "status");
    CHECK_STR(c0, "unchanged");
    CHECK_STR(c1, "notRead");
    free(c0);
    free(c1);
    sk_string_free(changes);
    OK(sk_session_ensure_unchanged(s, "[\"a.txt\"]"));

    /* Someone edits the file outside the agent. */
    write_text(root, "a.txt", "three\n");
    OK(sk_session_external_changes(s, "[\"a.txt\"]", &changes));
    c0 = mj_get_str(mj_at(changes, 0), "status");
    CHECK_STR(c0, "modified");
    free(c0);
    sk_string_free(changes);
    ERR(sk_session_ensure_unchanged(s, "[\"a.txt\"]"), SK_CONFLICT, "a.txt");

    char *cands = NULL;
    OK(sk_session_undo_candidates(s, &cands));
    CHECK(mj_len(cands) == 1);
    char *cid = mj_get_str(mj_at(cands, 0), "messageId");
    CHECK_STR(cid, uid);
    CHECK(mj_is_true(mj_get(mj_at(cands, 0), "restorable")));
    free(cid);
    sk_string_free(cands);

    char *plan = NULL;
    OK(sk_session_rewind_plan(s, uid, &plan));
    char *ppath = mj_get_str(mj_at(mj_get(plan, "files"), 0), "path");
    CHECK_STR(ppath, "a.txt");
    free(ppath);
    CHECK(mj_len(mj_get(plan, "conflicts")) == 1);
    sk_string_free(plan);
    CHECK(file_is(root, "a.txt", "three\n")); /* a plan changes nothing */

    char *res = NULL;
    ERR(sk_session_rewind(s, uid, "both", false, &res), SK_CONFLICT, "a.txt");
    CHECK(file_is(root, "a.txt", "three\n"));
    ERR(sk_session_rewind(s, uid, "sideways", false, &res), SK_INVALID_INPUT, "sideways");
    CHECK(res == NULL);
    /* The preview: the plan and where the head goes, for each mode. */
    char *pv = NULL;
    OK(sk_session_rewind_preview(s, uid, "both", &pv));
    CHECK(mj_len(mj_get(mj_get(pv, "plan"), "conflicts")) == 1);
    CHECK(mj_is_null(mj_get(mj_get(pv, "head"), "to"))); /* the first message */
    char *from = mj_get_str(mj_get(pv, "head"), "from");
    CHECK(from != NULL && strlen(from) > 0);
    char *pmode = mj_get_str(pv, "mode");
    CHECK_STR(pmode, "both");
    free(pmode);
    sk_string_free(pv);
    OK(sk_session_rewind_preview(s, uid, "files", &pv));
    char *to = mj_get_str(mj_get(pv, "head"), "to");
    CHECK_STR(to, from); /* files only: the head stays */
    free(to);
    free(from);
    sk_string_free(pv);
    OK(sk_session_rewind_preview(s, uid, "conversation", &pv));
    CHECK(mj_is_null(mj_get(pv, "plan")));
    sk_string_free(pv);
    pv = NULL;
    ERR(sk_session_rewind_preview(s, uid, "sideways", &pv), SK_INVALID_INPUT, "sideways");
    ERR(sk_session_rewind_preview(s, "no-such-message", "both", &pv), SK_NOT_FOUND,
        "no-such-message");
    CHECK(pv == NULL);
    CHECK(file_is(root, "a.txt", "three\n")); /* a preview changes nothing */

    OK(sk_session_rewind(s, uid, "both", true, &res));
    CHECK(file_is(root, "a.txt", "one\n"));
    char *undo = mj_get_str(res, "undoSnapshot");
    CHECK(undo != NULL);
    CHECK(mj_is_null(mj_get(res, "head"))); /* the user message was the first */
    sk_string_free(res);
    char *ids = active_ids(s);
    CHECK_STR(ids, "");
    free(ids);

    /* Undo the rewind's file side. */
    OK(sk_session_snapshot_plan(s, undo ? undo : "x", &plan));
    CHECK(mj_len(mj_get(plan, "files")) == 1);
    sk_string_free(plan);
    OK(sk_session_restore_snapshot(s, undo ? undo : "x", false, &res));
    CHECK(file_is(root, "a.txt", "three\n"));
    sk_string_free(res);
    ERR(sk_session_snapshot_plan(s, "0000000000000000000000000000000000000000", &plan),
        SK_NOT_FOUND, NULL);
    free(undo);

    OK(sk_session_rewind(s, uid, "conversation", false, &res));
    sk_string_free(res);
    ERR(sk_session_rewind_plan(s, "no-such-message", &plan), SK_NOT_FOUND, "no-such-message");

    char *sid = session_id(s);
    OK(sk_session_close(&s));
    char *report = NULL;
    OK(sk_store_file_history_sizes(store, &report));
    char *hs = mj_get_str(mj_at(mj_get(report, "sessions"), 0), "sessionId");
    CHECK_STR(hs, sid);
    CHECK(mj_int(mj_get(mj_at(mj_get(report, "sessions"), 0), "snapshots")) >= 3);
    free(hs);
    sk_string_free(report);
    OK(sk_store_gc(store, &report));
    CHECK(mj_get(report, "bytesFreed") != NULL);
    /* Blobs and temp files are collected too; nothing of theirs is old yet. */
    CHECK(mj_int(mj_get(mj_get(report, "blobs"), "blobsRemoved")) == 0);
    CHECK(mj_int(mj_get(mj_get(report, "tempFiles"), "removed")) == 0);
    sk_string_free(report);
    OK(sk_store_delete_session(store, sid));
    OK(sk_store_gc(store, &report));
    CHECK(mj_int(mj_get(report, "objectsAfter")) <= mj_int(mj_get(report, "objectsBefore")));
    sk_string_free(report);
    sk_string_free(sid);
    free(uid);
    sk_store_close(&store);
    free(root);
}

/* ---- tests: look-up by prefix, doctor ----------------------------------------- */

static void test_lookup_and_doctor(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    const char *ids[] = {"abc-1", "abc-2", "xyz"};
    for (int i = 0; i < 3; i++) {
        char opts[64];
        snprintf(opts, sizeof opts, "{\"id\": \"%s\"}", ids[i]);
        sk_session *s = NULL;
        OK(sk_session_create(store, opts, &s));
        free(append(s, "{\"role\": \"user\", \"content\": \"hi\", \"id\": \"m-1\"}"));
        free(append(s, "{\"role\": \"assistant\", \"content\": \"yes\", \"id\": \"m-2\"}"));
        free(append(s, "{\"role\": \"user\", \"content\": \"ok\", \"id\": \"n\"}"));
        OK(sk_session_close(&s));
    }

    /* Sessions by prefix: unique, exact, none, ambiguous (naming both), empty. */
    char *id = NULL;
    OK(sk_store_resolve_session(store, "x", &id));
    CHECK_STR(id, "xyz");
    sk_string_free(id);
    id = NULL;
    OK(sk_store_resolve_session(store, "abc-2", &id));
    CHECK_STR(id, "abc-2");
    sk_string_free(id);
    id = NULL;
    ERR(sk_store_resolve_session(store, "nope", &id), SK_NOT_FOUND, "nope");
    ERR(sk_store_resolve_session(store, "abc", &id), SK_INVALID_INPUT, "ambiguous");
    CHECK(strstr(sk_last_error(), "abc-1") && strstr(sk_last_error(), "abc-2"));
    ERR(sk_store_resolve_session(store, "", &id), SK_INVALID_INPUT, "empty");
    CHECK(id == NULL);

    /* Messages by prefix, in a view. */
    sk_view *v = NULL;
    OK(sk_store_read_session(store, "xyz", &v));
    OK(sk_view_resolve_message(v, "n", &id));
    CHECK_STR(id, "n");
    sk_string_free(id);
    id = NULL;
    OK(sk_view_resolve_message(v, "m-2", &id));
    CHECK_STR(id, "m-2");
    sk_string_free(id);
    id = NULL;
    ERR(sk_view_resolve_message(v, "m", &id), SK_INVALID_INPUT, "m-1, m-2");
    ERR(sk_view_resolve_message(v, "q", &id), SK_NOT_FOUND, "\"q\"");
    CHECK(id == NULL);
    sk_view_close(&v);

    /* A healthy store. */
    char *report = NULL;
    OK(sk_store_doctor(store, NULL, &report));
    CHECK(mj_is_true(mj_get(report, "ok")));
    CHECK(!mj_is_true(mj_get(report, "repair")));
    CHECK(mj_len(mj_get(report, "logs")) == 3);
    char *state = mj_get_str(mj_get(report, "index"), "state");
    CHECK_STR(state, "ok");
    free(state);
    sk_string_free(report);

    /* A crash's torn last line: found, not repaired without asking. */
    char *info = NULL;
    OK(sk_store_info(store, &info));
    char *dir = mj_get_str(info, "dir");
    sk_string_free(info);
    char *log = path_join(dir ? dir : "", "xyz.jsonl");
    size_t len = 0;
    char *bytes = read_file(log, &len);
    const char torn[] = "{\"id\": \"m-9\", \"role\": \"us";
    char *damaged = malloc(len + sizeof torn);
    memcpy(damaged, bytes ? bytes : "", len);
    memcpy(damaged + len, torn, sizeof torn);
    write_file(log, damaged, len + sizeof torn - 1);
    OK(sk_store_doctor(store, "", &report));
    CHECK(!mj_is_true(mj_get(report, "ok")));
    for (long i = 0; i < mj_len(mj_get(report, "logs")); i++) {
        const char *c = mj_at(mj_get(report, "logs"), (size_t)i);
        char *cid = mj_get_str(c, "id");
        int is_xyz = cid && strcmp(cid, "xyz") == 0;
        CHECK(is_xyz ? !mj_is_null(mj_get(c, "tornTail")) : mj_is_true(mj_get(c, "ok")));
        free(cid);
    }
    sk_string_free(report);
    size_t len_after = 0;
    free(read_file(log, &len_after));
    CHECK(len_after == len + sizeof torn - 1); /* nothing written */

    OK(sk_store_doctor(store, "{\"repair\": true}", &report));
    CHECK(mj_is_true(mj_get(report, "ok")));
    CHECK(mj_is_true(mj_get(report, "repair")));
    sk_string_free(report);
    OK(sk_store_doctor(store, NULL, &report));
    CHECK(mj_is_true(mj_get(report, "ok")));
    sk_string_free(report);

    report = NULL;
    ERR(sk_store_doctor(store, "{\"fix\": true}", &report), SK_INVALID_INPUT, "fix");
    ERR(sk_store_doctor(store, "[", &report), SK_INVALID_INPUT, "doctor options");
    CHECK(report == NULL);

    free(bytes);
    free(damaged);
    free(log);
    free(dir);
    sk_store_close(&store);
    free(root);
}

/* ---- tests: bad input ------------------------------------------------------ */

static char sentinel_byte;
#define SENTINEL ((char *)&sentinel_byte)

/* Every pointer argument, one at a time, NULL. */
static void test_null_arguments(void) {
    char *root = fresh_dir("root");
    sk_store *st = open_store(root);
    sk_session *se = NULL;
    OK(sk_session_create(st, "{\"id\": \"n1\"}", &se));
    free(append(se, "{\"role\": \"user\", \"content\": \"hi\", \"id\": \"m1\"}"));
    sk_subagent *sa = NULL;
    OK(sk_session_spawn_subagent(se, "ag", NULL, &sa));
    sk_view *vi = NULL;
    OK(sk_session_read(se, &vi));
    char *o = SENTINEL;
    sk_store *ost = NULL;
    sk_session *ose = NULL;
    sk_subagent *osa = NULL;
    sk_view *ovi = NULL;
    const char *P = "[\"a.txt\"]";

    NUL(sk_store_open(NULL, NULL, &ost), "project_root");
    NUL(sk_store_open(root, NULL, NULL), "out_store");
    NUL(sk_store_info(NULL, &o), "store");
    NUL(sk_store_info(st, NULL), "out_json");
    NUL(sk_store_list_sessions(NULL, &o), "store");
    NUL(sk_store_list_sessions(st, NULL), "out_json");
    NUL(sk_store_list_page(NULL, NULL, &o), "store");
    NUL(sk_store_list_page(st, NULL, NULL), "out_json");
    NUL(sk_store_session_entry(NULL, "n1", &o), "store");
    NUL(sk_store_session_entry(st, NULL, &o), "session_id");
    NUL(sk_store_session_entry(st, "n1", NULL), "out_json");
    NUL(sk_store_continue_session(NULL, &o), "store");
    NUL(sk_store_continue_session(st, NULL), "out_json");
    NUL(sk_store_rename_session(NULL, "n1", "t", &o), "store");
    NUL(sk_store_rename_session(st, NULL, "t", &o), "session_id");
    NUL(sk_store_rename_session(st, "n1", NULL, &o), "title");
    NUL(sk_store_rename_session(st, "n1", "t", NULL), "out_entry_json");
    NUL(sk_store_delete_session(NULL, "n1"), "store");
    NUL(sk_store_delete_session(st, NULL), "session_id");
    NUL(sk_store_read_session(NULL, "n1", &ovi), "store");
    NUL(sk_store_read_session(st, NULL, &ovi), "session_id");
    NUL(sk_store_read_session(st, "n1", NULL), "out_view");
    NUL(sk_store_model_view(NULL, "n1", NULL, &o), "store");
    NUL(sk_store_model_view(st, NULL, NULL, &o), "session_id");
    NUL(sk_store_model_view(st, "n1", NULL, NULL), "out_json");
    NUL(sk_store_list_subagents(NULL, "n1", &o), "store");
    NUL(sk_store_list_subagents(st, NULL, &o), "session_id");
    NUL(sk_store_list_subagents(st, "n1", NULL), "out_json");
    NUL(sk_store_read_subagent(NULL, "n1", "ag", &ovi), "store");
    NUL(sk_store_read_subagent(st, NULL, "ag", &ovi), "session_id");
    NUL(sk_store_read_subagent(st, "n1", NULL, &ovi), "agent_id");
    NUL(sk_store_read_subagent(st, "n1", "ag", NULL), "out_view");
    NUL(sk_store_rebuild_index(NULL, &o), "store");
    NUL(sk_store_rebuild_index(st, NULL), "out_report_json");
    NUL(sk_store_gc(NULL, &o), "store");
    NUL(sk_store_gc(st, NULL), "out_report_json");
    NUL(sk_store_file_history_sizes(NULL, &o), "store");
    NUL(sk_store_file_history_sizes(st, NULL), "out_report_json");
    NUL(sk_store_resolve_session(NULL, "n", &o), "store");
    NUL(sk_store_resolve_session(st, NULL, &o), "prefix");
    NUL(sk_store_resolve_session(st, "n", NULL), "out_id");
    NUL(sk_store_doctor(NULL, NULL, &o), "store");
    NUL(sk_store_doctor(st, NULL, NULL), "out_report_json");

    NUL(sk_session_create(NULL, NULL, &ose), "store");
    NUL(sk_session_create(st, NULL, NULL), "out_session");
    NUL(sk_session_open(NULL, "n1", &ose), "store");
    NUL(sk_session_open(st, NULL, &ose), "session_id");
    NUL(sk_session_open(st, "n1", NULL), "out_session");
    NUL(sk_session_open_shared(NULL, "n1", &ose), "store");
    NUL(sk_session_open_shared(st, NULL, &ose), "session_id");
    NUL(sk_session_open_shared(st, "n1", NULL), "out_session");
    NUL(sk_session_open_conversation(NULL, "n1", &ose), "store");
    NUL(sk_session_open_conversation(st, NULL, &ose), "conversation_id");
    NUL(sk_session_open_conversation(st, "n1", NULL), "out_session");
    NUL(sk_conversation_session_id(NULL, &o), "conversation_id");
    NUL(sk_conversation_session_id("x", NULL), "out_id");
    NUL(sk_session_fork(NULL, "n1", NULL, &ose), "store");
    NUL(sk_session_fork(st, NULL, NULL, &ose), "source_id");
    NUL(sk_session_fork(st, "n1", NULL, NULL), "out_session");
    NUL(sk_session_id(NULL, &o), "session");
    NUL(sk_session_id(se, NULL), "out_id");
    NUL(sk_session_info(NULL, &o), "session");
    NUL(sk_session_info(se, NULL), "out_json");
    NUL(sk_session_append(NULL, "{}", &o), "session");
    NUL(sk_session_append(se, NULL, &o), "message_json");
    NUL(sk_session_append(se, "{\"role\": \"user\"}", NULL), "out_message_json");
    NUL(sk_session_append_batch(NULL, "[]", &o), "session");
    NUL(sk_session_append_batch(se, NULL, &o), "messages_json");
    NUL(sk_session_append_batch(se, "[]", NULL), "out_messages_json");
    NUL(sk_session_append_groups(NULL, "[]", &o), "session");
    NUL(sk_session_append_groups(se, NULL, &o), "groups_json");
    NUL(sk_session_append_groups(se, "[]", NULL), "out_results_json");
    NUL(sk_session_update_state(NULL, "{}", &o), "session");
    NUL(sk_session_update_state(se, NULL, &o), "state_json");
    NUL(sk_session_update_state(se, "{}", NULL), "out_entry_json");
    NUL(sk_session_patch(NULL, "m1", "{}"), "session");
    NUL(sk_session_patch(se, NULL, "{}"), "message_id");
    NUL(sk_session_patch(se, "m1", NULL), "patch_json");
    NUL(sk_session_set_head(NULL, "m1"), "session");
    NUL(sk_session_resume_at(NULL, "m1"), "session");
    NUL(sk_session_resume_at(se, NULL), "message_id");
    NUL(sk_session_rename(NULL, "t", &o), "session");
    NUL(sk_session_rename(se, NULL, &o), "title");
    NUL(sk_session_rename(se, "t", NULL), "out_entry_json");
    NUL(sk_session_sync(NULL), "session");
    NUL(sk_session_read(NULL, &ovi), "session");
    NUL(sk_session_read(se, NULL), "out_view");
    NUL(sk_session_active_path(NULL, &o), "session");
    NUL(sk_session_active_path(se, NULL), "out_json");
    NUL(sk_session_model_view(NULL, NULL, &o), "session");
    NUL(sk_session_model_view(se, NULL, NULL), "out_json");
    NUL(sk_session_select_compaction(NULL, "{\"tokenBudget\": 1}", &o), "session");
    NUL(sk_session_select_compaction(se, NULL, &o), "policy_json");
    NUL(sk_session_select_compaction(se, "{\"tokenBudget\": 1}", NULL), "out_plan_json");
    NUL(sk_session_apply_compaction(NULL, "[]", "{}", &o), "session");
    NUL(sk_session_apply_compaction(se, NULL, "{}", &o), "replaces_json");
    NUL(sk_session_apply_compaction(se, "[]", NULL, &o), "summary_json");
    NUL(sk_session_apply_compaction(se, "[]", "{}", NULL), "out_message_json");
    NUL(sk_session_spawn_subagent(NULL, NULL, NULL, &osa), "session");
    NUL(sk_session_spawn_subagent(se, NULL, NULL, NULL), "out_subagent");
    NUL(sk_session_open_subagent(NULL, "ag", &osa), "session");
    NUL(sk_session_open_subagent(se, NULL, &osa), "agent_id");
    NUL(sk_session_open_subagent(se, "ag", NULL), "out_subagent");
    NUL(sk_session_user_input(NULL, "{}", &o), "session");
    NUL(sk_session_user_input(se, NULL, &o), "message_json");
    NUL(sk_session_user_input(se, "{}", NULL), "out_message_json");
    NUL(sk_session_track_read(NULL, P), "session");
    NUL(sk_session_track_read(se, NULL), "paths_json");
    NUL(sk_session_before_edit(NULL, P, &o), "session");
    NUL(sk_session_before_edit(se, NULL, &o), "paths_json");
    NUL(sk_session_before_edit(se, P, NULL), "out_snapshot");
    NUL(sk_session_after_edit(NULL, P, &o), "session");
    NUL(sk_session_after_edit(se, NULL, &o), "paths_json");
    NUL(sk_session_after_edit(se, P, NULL), "out_snapshot");
    NUL(sk_session_tracked_files(NULL, &o), "session");
    NUL(sk_session_tracked_files(se, NULL), "out_json");
    NUL(sk_session_external_changes(NULL, P, &o), "session");
    NUL(sk_session_external_changes(se, NULL, &o), "paths_json");
    NUL(sk_session_external_changes(se, P, NULL), "out_json");
    NUL(sk_session_ensure_unchanged(NULL, P), "session");
    NUL(sk_session_ensure_unchanged(se, NULL), "paths_json");
    NUL(sk_session_undo_candidates(NULL, &o), "session");
    NUL(sk_session_undo_candidates(se, NULL), "out_json");
    NUL(sk_session_rewind_plan(NULL, "m1", &o), "session");
    NUL(sk_session_rewind_plan(se, NULL, &o), "message_id");
    NUL(sk_session_rewind_plan(se, "m1", NULL), "out_plan_json");
    NUL(sk_session_rewind(NULL, "m1", "both", false, &o), "session");
    NUL(sk_session_rewind(se, NULL, "both", false, &o), "message_id");
    NUL(sk_session_rewind(se, "m1", NULL, false, &o), "mode");
    NUL(sk_session_rewind(se, "m1", "both", false, NULL), "out_result_json");
    NUL(sk_session_rewind_preview(NULL, "m1", "both", &o), "session");
    NUL(sk_session_rewind_preview(se, NULL, "both", &o), "message_id");
    NUL(sk_session_rewind_preview(se, "m1", NULL, &o), "mode");
    NUL(sk_session_rewind_preview(se, "m1", "both", NULL), "out_json");
    NUL(sk_session_snapshot_plan(NULL, "x", &o), "session");
    NUL(sk_session_snapshot_plan(se, NULL, &o), "snapshot");
    NUL(sk_session_snapshot_plan(se, "x", NULL), "out_plan_json");
    NUL(sk_session_restore_snapshot(NULL, "x", false, &o), "session");
    NUL(sk_session_restore_snapshot(se, NULL, false, &o), "snapshot");
    NUL(sk_session_restore_snapshot(se, "x", false, NULL), "out_result_json");

    NUL(sk_subagent_id(NULL, &o), "subagent");
    NUL(sk_subagent_id(sa, NULL), "out_id");
    NUL(sk_subagent_append(NULL, "{}", &o), "subagent");
    NUL(sk_subagent_append(sa, NULL, &o), "message_json");
    NUL(sk_subagent_append(sa, "{\"role\": \"user\"}", NULL), "out_message_json");
    NUL(sk_subagent_append_batch(NULL, "[]", &o), "subagent");
    NUL(sk_subagent_append_batch(sa, NULL, &o), "messages_json");
    NUL(sk_subagent_append_batch(sa, "[]", NULL), "out_messages_json");
    NUL(sk_subagent_append_groups(NULL, "[]", &o), "subagent");
    NUL(sk_subagent_append_groups(sa, NULL, &o), "groups_json");
    NUL(sk_subagent_append_groups(sa, "[]", NULL), "out_results_json");
    NUL(sk_subagent_finish(NULL, "{}", false), "subagent");
    NUL(sk_subagent_finish(sa, NULL, false), "result_json");
    NUL(sk_subagent_read(NULL, &ovi), "subagent");
    NUL(sk_subagent_read(sa, NULL), "out_view");

    NUL(sk_view_info(NULL, &o), "view");
    NUL(sk_view_info(vi, NULL), "out_json");
    NUL(sk_view_active_path(NULL, &o), "view");
    NUL(sk_view_active_path(vi, NULL), "out_json");
    NUL(sk_view_ui(NULL, &o), "view");
    NUL(sk_view_ui(vi, NULL), "out_json");
    NUL(sk_view_model(NULL, NULL, &o), "view");
    NUL(sk_view_model(vi, NULL, NULL), "out_json");
    NUL(sk_view_message(NULL, "m1", &o), "view");
    NUL(sk_view_message(vi, NULL, &o), "message_id");
    NUL(sk_view_message(vi, "m1", NULL), "out_json");
    NUL(sk_view_tree(NULL, &o), "view");
    NUL(sk_view_tree(vi, NULL), "out_json");
    NUL(sk_view_branches(NULL, &o), "view");
    NUL(sk_view_branches(vi, NULL), "out_json");
    NUL(sk_view_resolve_message(NULL, "m", &o), "view");
    NUL(sk_view_resolve_message(vi, NULL, &o), "prefix");
    NUL(sk_view_resolve_message(vi, "m", NULL), "out_id");

    /* Nothing was written through any out-parameter, nothing was created. */
    CHECK(o == SENTINEL);
    CHECK(ost == NULL && ose == NULL && osa == NULL && ovi == NULL);
    char *list = NULL;
    OK(sk_store_list_sessions(st, &list));
    CHECK(mj_len(list) == 1);
    sk_string_free(list);
    char *ids = active_ids(se);
    CHECK_STR(ids, "m1");
    free(ids);

    sk_view_close(&vi);
    sk_subagent_close(&sa);
    OK(sk_session_close(&se));
    sk_store_close(&st);
    free(root);
}

/* A fingerprint of everything a store holds that a failed call must not change. */
static char *fingerprint(sk_store *st, const char *id) {
    char *list = NULL, *path = NULL, *info = NULL;
    sk_view *v = NULL;
    OK(sk_store_list_sessions(st, &list));
    OK(sk_store_read_session(st, id, &v));
    OK(sk_view_active_path(v, &path));
    OK(sk_view_info(v, &info));
    sk_view_close(&v);
    size_t n = strlen(list) + strlen(path) + strlen(info) + 3;
    char *fp = malloc(n);
    snprintf(fp, n, "%s\n%s\n%s", list, path, info);
    sk_string_free(list);
    sk_string_free(path);
    sk_string_free(info);
    return fp;
}

static void test_bad_input(void) {
    char *root = fresh_dir("root");
    sk_store *st = open_store(root);
    sk_session *se = NULL;
    OK(sk_session_create(st, "{\"id\": \"b1\"}", &se));
    free(append(se, "{\"role\": \"user\", \"content\": \"hi\", \"id\": \"m1\"}"));
    OK(sk_session_sync(se));
    char *fp_before = fingerprint(st, "b1");
    char *o = SENTINEL;
    sk_session *ose = NULL;
    sk_view *ovi = NULL;
    sk_store *ost = NULL;
    sk_subagent *osa = NULL;

    /* Invalid UTF-8 in every kind of string argument. */
    const char *bad = "caf\xc3\x28";
    ERR(sk_store_open(bad, NULL, &ost), SK_INVALID_UTF8, "project_root");
    ERR(sk_store_open(root, bad, &ost), SK_INVALID_UTF8, "options_json");
    ERR(sk_session_open(st, bad, &ose), SK_INVALID_UTF8, "session_id");
    ERR(sk_session_create(st, bad, &ose), SK_INVALID_UTF8, "options_json");
    ERR(sk_session_fork(st, bad, NULL, &ose), SK_INVALID_UTF8, "source_id");
    ERR(sk_store_read_session(st, bad, &ovi), SK_INVALID_UTF8, "session_id");
    ERR(sk_store_rename_session(st, "b1", bad, &o), SK_INVALID_UTF8, "title");
    ERR(sk_session_append(se, bad, &o), SK_INVALID_UTF8, "message_json");
    ERR(sk_session_append(se, "{\"role\": \"user\", \"content\": \"caf\xc3\x28\"}", &o),
        SK_INVALID_UTF8, "first bad byte at offset");
    ERR(sk_session_append_batch(se, bad, &o), SK_INVALID_UTF8, "messages_json");
    ERR(sk_session_patch(se, bad, "{}"), SK_INVALID_UTF8, "message_id");
    ERR(sk_session_set_head(se, bad), SK_INVALID_UTF8, "message_id");
    ERR(sk_session_rename(se, bad, &o), SK_INVALID_UTF8, "title");
    ERR(sk_session_track_read(se, bad), SK_INVALID_UTF8, "paths_json");
    ERR(sk_session_rewind(se, "m1", bad, false, &o), SK_INVALID_UTF8, "mode");

    /* Text that is not JSON. */
    ERR(sk_session_append(se, "{\"role\": \"user\",", &o), SK_INVALID_INPUT, "not valid JSON");
    ERR(sk_session_append_batch(se, "[{]", &o), SK_INVALID_INPUT, "not valid JSON");
    ERR(sk_session_update_state(se, "status=done", &o), SK_INVALID_INPUT, "state_json");
    ERR(sk_session_patch(se, "m1", "{"), SK_INVALID_INPUT, "patch_json");
    ERR(sk_session_track_read(se, "[a.txt]"), SK_INVALID_INPUT, "paths_json");
    ERR(sk_session_model_view(se, "{", &o), SK_INVALID_INPUT, NULL);
    ERR(sk_session_create(st, "{", &ose), SK_INVALID_INPUT, "create options");
    ERR(sk_session_append(se, "", &o), SK_INVALID_INPUT, "message_json");
    /* JSON no reader would decode the same way (FORMAT.md §5): refused, never written. */
    ERR(sk_session_append(se, "{\"role\": \"user\", \"role\": \"assistant\"}", &o),
        SK_INVALID_INPUT, "repeats a member name");
    ERR(sk_session_append(se, "{\"role\": \"user\", \"content\": {\"a\": 1, \"\\u0061\": 2}}", &o),
        SK_INVALID_INPUT, "repeats a member name");
    ERR(sk_session_append(se, "{\"role\": \"user\", \"content\": \"\\ud800\"}", &o),
        SK_INVALID_INPUT, "hex escape");
    ERR(sk_session_append(se, "{\"role\": \"user\", \"content\": 1e400}", &o),
        SK_INVALID_INPUT, "out of range");
    ERR(sk_session_patch(se, "m1", "{\"meta\": {\"k\": 1, \"k\": 2}}"), SK_INVALID_INPUT,
        "repeats a member name");

    /* JSON of the wrong shape. */
    ERR(sk_session_append(se, "[1, 2]", &o), SK_INVALID_INPUT, "must be a JSON object");
    ERR(sk_session_append(se, "\"text\"", &o), SK_INVALID_INPUT, "must be a JSON object");
    ERR(sk_session_append_batch(se, "{\"role\": \"user\"}", &o), SK_INVALID_INPUT, "array");
    ERR(sk_session_append_batch(se, "[{\"role\": \"user\"}, 3]", &o), SK_INVALID_INPUT, "item 1");
    ERR(sk_session_update_state(se, "[]", &o), SK_INVALID_INPUT, "object");
    ERR(sk_session_update_state(se, "{\"status\": \"dancing\"}", &o), SK_INVALID_INPUT, "dancing");
    ERR(sk_session_patch(se, "m1", "42"), SK_INVALID_INPUT, "object");
    ERR(sk_session_track_read(se, "{\"path\": \"a.txt\"}"), SK_INVALID_INPUT, "array of path");
    ERR(sk_session_track_read(se, "[1]"), SK_INVALID_INPUT, "array of path");
    ERR(sk_session_select_compaction(se, "{\"tokenBudget\": \"many\"}", &o), SK_INVALID_INPUT,
        "compaction policy");
    ERR(sk_session_append(se, "{\"role\": \"user\", \"id\": \"a\\nb\"}", &o), SK_INVALID_INPUT,
        "message id");
    ERR(sk_session_append(se, "{\"role\": \"user\", \"id\": \"m1\"}", &o), SK_CONFLICT, "m1");
    ERR(sk_session_create(st, "{\"title\": 5}", &ose), SK_INVALID_INPUT, "create options");

    /* Unknown ids. */
    ERR(sk_session_open(st, "no-such-session", &ose), SK_NOT_FOUND, "no-such-session");
    ERR(sk_store_session_entry(st, "no-such-session", &o), SK_NOT_FOUND, "no-such-session");
    ERR(sk_store_delete_session(st, "no-such-session"), SK_NOT_FOUND, "no-such-session");
    ERR(sk_store_model_view(st, "no-such-session", NULL, &o), SK_NOT_FOUND, "no-such-session");
    ERR(sk_session_patch(se, "no-such-message", "{}"), SK_NOT_FOUND, "no-such-message");
    ERR(sk_session_resume_at(se, "no-such-message"), SK_NOT_FOUND, "no-such-message");

    /* Traversal ids. */
    const char *trav[] = {"../x", "..", "a/b", ".hidden", "../../etc/passwd", "a\\b", ""};
    for (size_t i = 0; i < sizeof trav / sizeof trav[0]; i++) {
        ERR(sk_session_open(st, trav[i], &ose), SK_INVALID_INPUT, "not a valid id");
        ERR(sk_store_read_session(st, trav[i], &ovi), SK_INVALID_INPUT, "not a valid id");
        ERR(sk_store_delete_session(st, trav[i]), SK_INVALID_INPUT, "not a valid id");
        ERR(sk_store_list_subagents(st, trav[i], &o), SK_INVALID_INPUT, "not a valid id");
        ERR(sk_store_read_subagent(st, "b1", trav[i], &ovi), SK_INVALID_INPUT, "not a valid id");
        ERR(sk_session_open_subagent(se, trav[i], &osa), SK_INVALID_INPUT, "not a valid id");
        ERR(sk_session_spawn_subagent(se, trav[i], NULL, &osa), SK_INVALID_INPUT, NULL);
    }
    ERR(sk_session_create(st, "{\"id\": \"../escape\"}", &ose), SK_INVALID_INPUT, "not a valid id");
    ERR(sk_session_create(st, "{\"id\": \"blobs\"}", &ose), SK_INVALID_INPUT, "reserved");
    ERR(sk_session_spawn_subagent(se, "../up", NULL, &osa), SK_INVALID_INPUT, "not a valid id");

    /* 100 MB strings: an id, and a message over the record limit. */
    size_t big = 100u * 1024 * 1024;
    char *huge = malloc(big + 1);
    memset(huge, 'x', big);
    huge[big] = 0;
    ERR(sk_session_open(st, huge, &ose), SK_INVALID_INPUT, "not a valid id");
    CHECK(strlen(sk_last_error()) < 20000); /* the message is cut, not 100 MB */
    ERR(sk_store_read_session(st, huge, &ovi), SK_INVALID_INPUT, "not a valid id");
    const char *prefix = "{\"role\": \"user\", \"content\": \"";
    memcpy(huge, prefix, strlen(prefix));
    ERR(sk_session_append(se, huge, &o), SK_INVALID_INPUT, "not valid JSON"); /* unterminated */
    memcpy(huge + big - 2, "\"}", 2);
    {
        /* A store whose blobs never take content: the record is over maxRecordBytes. */
        char *r2 = fresh_dir("root");
        sk_store *st2 = open_store_with(r2, "\"blobThreshold\": 1000000000");
        sk_session *s2 = NULL;
        OK(sk_session_create(st2, "{\"id\": \"big\"}", &s2));
        ERR(sk_session_append(s2, huge, &o), SK_INVALID_INPUT, NULL);
        char *ids = active_ids(s2);
        CHECK_STR(ids, "");
        free(ids);
        OK(sk_session_close(&s2));
        sk_store_close(&st2);
        free(r2);
    }
    free(huge);

    /* Busy. */
    ERR(sk_session_open(st, "b1", &ose), SK_BUSY, "b1");

    /* Nothing above changed the store or wrote an out-parameter. */
    CHECK(o == SENTINEL);
    CHECK(ose == NULL && ovi == NULL && ost == NULL && osa == NULL);
    char *fp_after = fingerprint(st, "b1");
    CHECK_STR(fp_after, fp_before);
    free(fp_after);
    free(fp_before);

    /* A closed handle: close sets it to NULL, and every use then says so. */
    OK(sk_session_close(&se));
    CHECK(se == NULL);
    ERR(sk_session_append(se, "{\"role\": \"user\"}", &o), SK_NULL_ARGUMENT, "already closed");
    ERR(sk_session_sync(se), SK_NULL_ARGUMENT, "session");
    sk_store_close(&st);
    ERR(sk_store_list_sessions(st, &o), SK_NULL_ARGUMENT, "already closed");
    CHECK(o == SENTINEL);

    /* The last error is cleared by the next successful call. */
    CHECK(sk_last_error()[0] != 0);
    CHECK(sk_abi_version() == SK_ABI_VERSION); /* does not clear it */
    CHECK(sk_last_error()[0] != 0);
    ost = open_store(root);
    CHECK(ost != NULL && sk_last_error()[0] == 0);
    sk_store_close(&ost);
    free(root);
}

/* ---- tests: errors --------------------------------------------------------- */

/* A missing thing is SK_NOT_FOUND whichever call finds it missing, with the id or
 * the path in the message: a log removed by hand (the index still lists it), a
 * missing subagent, the store's directory removed under an open store. */
static void test_missing_is_not_found(void) {
    char *root = fresh_dir("root");
    sk_store *st = open_store(root);
    sk_session *se = NULL;
    OK(sk_session_create(st, "{\"id\": \"gone\"}", &se));
    free(append(se, "{\"role\": \"user\", \"content\": \"hi\"}"));
    OK(sk_session_close(&se));
    char *info = NULL;
    OK(sk_store_info(st, &info));
    char *dir = mj_get_str(info, "dir");
    sk_string_free(info);
    char *log = path_join(dir, "gone.jsonl");
    CHECK(unlink(log) == 0);

    char *o = NULL;
    sk_view *v = NULL;
    ERR(sk_session_open(st, "gone", &se), SK_NOT_FOUND, "gone");
    ERR(sk_store_read_session(st, "gone", &v), SK_NOT_FOUND, "gone");
    ERR(sk_store_session_entry(st, "gone", &o), SK_NOT_FOUND, "gone");
    ERR(sk_store_rename_session(st, "gone", "t", &o), SK_NOT_FOUND, "gone");
    ERR(sk_store_delete_session(st, "gone"), SK_NOT_FOUND, "gone");
    ERR(sk_session_fork(st, "gone", NULL, &se), SK_NOT_FOUND, "gone");
    ERR(sk_store_read_subagent(st, "gone", "agent-9", &v), SK_NOT_FOUND, "agent-9");

    /* The store's directory removed: the system's "no such file" is SK_NOT_FOUND too. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    ERR(sk_store_list_sessions(st, &o), SK_NOT_FOUND, dir);
    CHECK(sk_last_errno() == ENOENT);
    ERR(sk_store_rebuild_index(st, &o), SK_NOT_FOUND, dir);
    CHECK(o == NULL && v == NULL && se == NULL);
    sk_store_close(&st);
    free(log);
    free(dir);
    free(root);
}

/* The system's error number behind an error, also through the file history's git
 * library. The tests run as root (no EACCES), so a file where a directory must be
 * (ENOTDIR) and a name too long (ENAMETOOLONG) stand for ENOSPC and EACCES. */
static void test_last_errno(void) {
    char *root = fresh_dir("root");
    char *dir = fresh_dir("errno");
    write_text(dir, "a-file", "x");
    char opts[1024];
    snprintf(opts, sizeof opts, "{\"home\": \"%s/a-file/home\"}", dir);
    sk_store *st = NULL;
    ERR(sk_store_open(root, opts, &st), SK_IO, "a-file");
    CHECK(sk_last_errno() == ENOTDIR);
    CHECK(sk_last_errno() == ENOTDIR); /* reading it clears nothing */
    char name[301];
    memset(name, 'n', 300);
    name[300] = 0;
    snprintf(opts, sizeof opts, "{\"home\": \"%s/%s\"}", dir, name);
    ERR(sk_store_open(root, opts, &st), SK_IO, NULL);
    CHECK(sk_last_errno() == ENAMETOOLONG);
    CHECK(st == NULL);

    /* Through libgit2: the directory a snapshot's pack goes to is a file. */
    st = open_store(root);
    CHECK(sk_last_errno() == 0); /* a call that succeeds clears it */
    sk_session *se = NULL;
    char *out = NULL;
    OK(sk_session_create(st, NULL, &se));
    write_text(root, "a.txt", "one\n");
    OK(sk_session_user_input(se, "{\"content\": \"edit a.txt\"}", &out));
    sk_string_free(out);
    OK(sk_session_before_edit(se, "[\"a.txt\"]", &out));
    sk_string_free(out);
    out = NULL;
    char *info = NULL;
    OK(sk_store_info(st, &info));
    char *sdir = mj_get_str(info, "dir");
    sk_string_free(info);
    char *pack = path_join(sdir, "file-history/.git/objects/pack");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", pack);
    CHECK(system(cmd) == 0);
    write_file(pack, "x", 1);
    write_text(root, "a.txt", "two\n");
    ERR(sk_session_after_edit(se, "[\"a.txt\"]", &out), SK_IO, "file history");
    CHECK(sk_last_errno() == ENOTDIR);
    CHECK(out == NULL);

    /* An error that did not come from the system has none. */
    ERR(sk_session_set_head(se, "no-such-message"), SK_NOT_FOUND, "no-such-message");
    CHECK(sk_last_errno() == 0);
    OK(sk_session_close(&se));
    sk_store_close(&st);
    free(pack);
    free(sdir);
    free(dir);
    free(root);
}

/* ---- tests: threads -------------------------------------------------------- */

struct worker {
    sk_store *store;
    sk_session *shared;
    int index;
    int errors;
    char own_id[64];
};

static void *worker_main(void *arg) {
    struct worker *w = arg;
    char opts[128], msg[128];
    snprintf(opts, sizeof opts, "{\"id\": \"thread-%d\"}", w->index);
    sk_session *own = NULL;
    if (sk_session_create(w->store, opts, &own) != SK_OK) { w->errors++; return NULL; }
    snprintf(w->own_id, sizeof w->own_id, "thread-%d", w->index);
    for (int i = 0; i < 25; i++) {
        char *out = NULL;
        snprintf(msg, sizeof msg, "{\"role\": \"user\", \"content\": \"t%d own %d\"}", w->index, i);
        if (sk_session_append(own, msg, &out) != SK_OK) w->errors++;
        sk_string_free(out);
        snprintf(msg, sizeof msg, "{\"role\": \"user\", \"content\": \"t%d shared %d\"}", w->index, i);
        if (sk_session_append(w->shared, msg, &out) != SK_OK) w->errors++;
        sk_string_free(out);
        if (i % 5 == 0) {
            if (sk_store_list_sessions(w->store, &out) != SK_OK) w->errors++;
            sk_string_free(out);
        }
        /* An error on this thread sets this thread's last error only. */
        sk_view *v = NULL;
        if (sk_store_read_session(w->store, "../x", &v) != SK_INVALID_INPUT) w->errors++;
        if (!strstr(sk_last_error(), "sk_store_read_session")) w->errors++;
        if (sk_session_sync(own) != SK_OK || sk_last_error()[0] != 0) w->errors++;
    }
    if (sk_session_close(&own) != SK_OK) w->errors++;
    return NULL;
}

static void test_threads(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    sk_session *shared = NULL;
    OK(sk_session_create(store, "{\"id\": \"shared\"}", &shared));
    struct worker w[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].store = store;
        w[i].shared = shared;
        w[i].index = i;
        CHECK(pthread_create(&t[i], NULL, worker_main, &w[i]) == 0);
    }
    /* The main thread reads while they write. */
    for (int i = 0; i < 10; i++) {
        char *list = NULL;
        OK(sk_store_list_sessions(store, &list));
        sk_string_free(list);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        CHECK(w[i].errors == 0);
    }
    /* 50 appends from two threads form one chain. */
    char *path = NULL;
    OK(sk_session_active_path(shared, &path));
    CHECK(mj_len(path) == 50);
    for (long i = 1; i < mj_len(path); i++) {
        char *parent = mj_get_str(mj_at(path, (size_t)i), "parentId");
        char *prev = mj_get_str(mj_at(path, (size_t)i - 1), "id");
        CHECK_STR(parent, prev);
        free(parent);
        free(prev);
    }
    sk_string_free(path);
    OK(sk_session_close(&shared));
    char *list = NULL;
    OK(sk_store_list_sessions(store, &list));
    CHECK(mj_len(list) == 3);
    for (long i = 0; i < mj_len(list); i++) {
        char *id = mj_get_str(mj_at(list, (size_t)i), "id");
        long count = (long)mj_int(mj_get(mj_at(list, (size_t)i), "messageCount"));
        CHECK(count == (strcmp(id, "shared") == 0 ? 50 : 25));
        free(id);
    }
    sk_string_free(list);
    sk_store_close(&store);
    free(root);
}

/* ---- tests: import and export ---------------------------------------------- */

static void test_import_export(void) {
    char *root = fresh_dir("import-root");
    char *home = fresh_dir("import-home");
    char *src = path_join(g_fixtures, "import/deepcode/seed-flat-1.jsonl");
    char paths[1024], opts[2048], sopts[1024];
    snprintf(paths, sizeof paths, "[\"%s\"]", src);
    snprintf(opts, sizeof opts, "{\"project\": \"%s\", \"store\": {\"home\": \"%s\"}}", root,
             home);
    snprintf(sopts, sizeof sopts, "{\"home\": \"%s\"}", home);
    char *report = NULL;
    OK(sk_import(paths, opts, &report));
    CHECK(mj_int(mj_get(report, "messagesAdded")) == 5);
    CHECK(mj_int(mj_get(report, "failed")) == 0);
    sk_string_free(report);
    /* Again: nothing new. */
    report = NULL;
    OK(sk_import(paths, opts, &report));
    CHECK(mj_int(mj_get(report, "messagesAdded")) == 0);
    sk_string_free(report);
    report = NULL;
    ERR(sk_import("[\"/nonexistent/sk-import\"]", opts, &report), SK_NOT_FOUND, "nonexistent");
    ERR(sk_import("not json", opts, &report), SK_INVALID_INPUT, "paths_json");
    ERR(sk_import(paths, "{\"from\": \"cursor\"}", &report), SK_INVALID_INPUT, "cursor");
    NUL(sk_import(NULL, opts, &report), "paths_json");
    CHECK(report == NULL);

    /* From another machine: its recorded /Users/dana mapped under this root
     * (code/demo does not exist there: the report says both). A mapping that
     * is not two absolute paths is refused naming mapPaths. */
    char *elsewhere = path_join(g_fixtures, "import/another-machine");
    char mpaths[1024], mopts[2048];
    snprintf(mpaths, sizeof mpaths, "[\"%s\"]", elsewhere);
    snprintf(mopts, sizeof mopts,
             "{\"mapPaths\": [{\"from\": \"/Users/dana\", \"to\": \"%s\"}], "
             "\"store\": {\"home\": \"%s\"}}",
             root, home);
    report = NULL;
    OK(sk_import(mpaths, mopts, &report));
    CHECK(mj_int(mj_get(report, "failed")) == 0);
    CHECK(strstr(report, "mapped to") != NULL);
    CHECK(strstr(report, "does not exist here") != NULL);
    sk_string_free(report);
    report = NULL;
    ERR(sk_import(mpaths, "{\"mapPaths\": [{\"from\": \"Users/dana\", \"to\": \"/x\"}]}", &report),
        SK_INVALID_INPUT, "mapPaths");
    CHECK(report == NULL);
    free(elsewhere);

    sk_store *store = NULL;
    OK(sk_store_open(root, sopts, &store));
    char *md = NULL;
    OK(sk_store_export_session(store, "seed-flat-1", "markdown", &md));
    CHECK(md && strstr(md, "<details><summary>Tool call <code>calc</code>") != NULL);
    sk_string_free(md);
    md = NULL;
    ERR(sk_store_export_session(store, "seed-flat-1", "html", &md), SK_INVALID_INPUT, "html");
    ST(sk_store_export_session(store, "no-such-session", "json", &md), SK_NOT_FOUND);
    CHECK(md == NULL);

    /* Into each agent's own store, under a home of the test's: the file is
     * there, the result says where and how to resume it; again, nothing is
     * written; bad options and an unknown session are refused. */
    const char *targets[2] = {"claude-code", "codex"};
    const char *resume[2] = {"claude --resume ", "codex resume "};
    for (int t = 0; t < 2; t++) {
        char *agent = fresh_dir(targets[t]);
        char eopts[1024];
        snprintf(eopts, sizeof eopts, "{\"to\": \"%s\", \"home\": \"%s\"}", targets[t], agent);
        char *out = NULL;
        OK(sk_store_export_to(store, "seed-flat-1", eopts, &out));
        char *to = mj_get_str(out, "to"), *file = mj_get_str(out, "path");
        char *nid = mj_get_str(out, "nativeId"), *cmd = mj_get_str(out, "resumeCommand");
        CHECK(to && strcmp(to, targets[t]) == 0);
        CHECK(mj_is(mj_get(out, "idSource"), "\"derived\""));
        CHECK(mj_is_true(mj_get(out, "written")));
        CHECK(file && strncmp(file, agent, strlen(agent)) == 0 && strstr(file, nid) != NULL);
        CHECK(cmd && strstr(cmd, resume[t]) != NULL && strstr(cmd, nid) != NULL);
        FILE *f = file ? fopen(file, "r") : NULL;
        CHECK(f != NULL);
        char line[4096] = {0};
        CHECK(f && fgets(line, sizeof line, f) != NULL);
        CHECK(strstr(line, nid) != NULL);
        if (f) fclose(f);
        sk_string_free(out);
        out = NULL;
        OK(sk_store_export_to(store, "seed-flat-1", eopts, &out));
        CHECK(!mj_is_true(mj_get(out, "written")));
        sk_string_free(out);
        out = NULL;
        ST(sk_store_export_to(store, "no-such-session", eopts, &out), SK_NOT_FOUND);
        snprintf(eopts, sizeof eopts, "{\"to\": \"%s\", \"home\": \"rel/home\"}", targets[t]);
        ERR(sk_store_export_to(store, "seed-flat-1", eopts, &out), SK_INVALID_INPUT, "rel/home");
        CHECK(out == NULL);
        free(to);
        free(file);
        free(nid);
        free(cmd);
        free(agent);
    }
    char *out = NULL;
    ERR(sk_store_export_to(store, "seed-flat-1", "{\"to\": \"cursor\"}", &out), SK_INVALID_INPUT,
        "cursor");
    ERR(sk_store_export_to(store, "seed-flat-1", "{\"to\": \"claude-code\", \"modelProvider\": \"x\"}",
                           &out),
        SK_INVALID_INPUT, "modelProvider");
    NUL(sk_store_export_to(store, "seed-flat-1", NULL, &out), "options_json");
    CHECK(out == NULL);
    char *all = NULL;
    OK(sk_list_all_sessions(sopts, &all));
    CHECK(all && strstr(all, "seed-flat-1") != NULL);
    sk_string_free(all);
    sk_store_close(&store);
    free(src);
    free(home);
    free(root);
}

/* ---- tests: bad input at settings, memory and import ------------------------
 * Each refusal is checked for its status, its message and that nothing was
 * written: the files under the home (and the project's .sessionkit) are the
 * same, byte for byte, before and after. */

/* Every file and directory under `dir`, a line each, appended to `*out`: its
 * path and size, and with `bytes` also its mode and a checksum of its bytes
 * (equal strings, equal trees). */
static void tree_into(const char *dir, int bytes, char **out, size_t *len, size_t *cap) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char *p = path_join(dir, e->d_name);
        struct stat st;
        char line[4608];
        if (lstat(p, &st) != 0) {
            free(p);
            continue;
        }
        unsigned long sum = 0;
        if (bytes && S_ISREG(st.st_mode)) {
            size_t n = 0;
            char *data = read_file(p, &n);
            for (size_t i = 0; data && i < n; i++) sum = sum * 31 + (unsigned char)data[i];
            free(data);
        }
        if (bytes)
            snprintf(line, sizeof line, "%s %o %lld %lu\n", p, (unsigned)st.st_mode,
                     (long long)st.st_size, sum);
        else
            snprintf(line, sizeof line, "%s %lld\n", p, (long long)st.st_size);
        size_t n = strlen(line);
        if (*len + n + 1 > *cap) {
            *cap = (*len + n + 1) * 2;
            *out = realloc(*out, *cap);
        }
        memcpy(*out + *len, line, n + 1);
        *len += n;
        if (S_ISDIR(st.st_mode)) tree_into(p, bytes, out, len, cap);
        free(p);
    }
    closedir(d);
}

/* `dir`'s tree with every file's mode and bytes (malloc'd). */
static char *tree_sig(const char *dir) {
    size_t len = 0, cap = 256;
    char *out = calloc(1, cap);
    tree_into(dir, 1, &out, &len, &cap);
    return out;
}

#define SAME_TREE(before, dir)                                         \
    do {                                                               \
        char *after_ = tree_sig(dir);                                  \
        if (strcmp((before), after_) != 0)                             \
            FAILF("%s changed:\n--- before\n%s--- after\n%s", (dir),   \
                  (before), after_);                                   \
        free(after_);                                                  \
    } while (0)

/* A JSON string of `n` 'x' (malloc'd, quoted). */
static char *json_x(size_t n) {
    char *s = malloc(n + 3);
    s[0] = '"';
    memset(s + 1, 'x', n);
    s[n + 1] = '"';
    s[n + 2] = 0;
    return s;
}

/* `part` repeated `n` times joined with '.' (malloc'd). */
static char *dotted(const char *part, size_t n) {
    size_t k = strlen(part);
    char *s = malloc(n * (k + 1) + 1);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (i) s[at++] = '.';
        memcpy(s + at, part, k);
        at += k;
    }
    s[at] = 0;
    return s;
}

static void test_bad_settings_sizes_and_keys(void) {
    char *root = fresh_dir("bad-settings-root");
    char *home = fresh_dir("bad-settings-home");
    char opts[1024];
    snprintf(opts, sizeof opts, "{\"home\": \"%s\"}", home);
    sk_store *store = NULL;
    OK(sk_store_open(root, opts, &store));
    char *dot = path_join(root, ".sessionkit");
    mkdir_p(dot);
    char *w = NULL;

    /* A value, a key, a nested key past the 1 MiB a file may hold: refused, no
     * file created, an existing one unchanged. */
    char *big = json_x(2u << 20);
    char *big_key = malloc((2u << 20) + 1);
    memset(big_key, 'k', 2u << 20);
    big_key[2u << 20] = 0;
    char *before = tree_sig(home);
    ERR(sk_store_set_setting(store, "user", "a", big, &w), SK_INVALID_INPUT, "1048576");
    ERR(sk_store_set_setting(store, "user", big_key, "1", &w), SK_INVALID_INPUT, "1048576");
    SAME_TREE(before, home);
    free(before);
    write_text(dot, "settings.json", "{\"schemaVersion\": 3, \"a\": 1}");
    before = tree_sig(dot);
    ERR(sk_store_set_setting(store, "project", "b", big, &w), SK_INVALID_INPUT,
        "nothing was written");
    ERR(sk_store_set_setting(store, "project", big_key, "1", &w), SK_INVALID_INPUT, "1048576");
    SAME_TREE(before, dot);

    /* Keys nested past what a reader parses, up to a million parts: refused,
     * no crash. */
    char *deep = dotted("k", 200);
    char *deepest = dotted("k", 1000000);
    ERR(sk_store_set_setting(store, "project", deep, "1", &w), SK_INVALID_INPUT, "100 levels");
    ERR(sk_store_set_setting(store, "project", deepest, "1", &w), SK_INVALID_INPUT, "100 levels");
    char value[1024] = "";
    for (int i = 0; i < 120; i++) strcat(value, "[");
    for (int i = 0; i < 120; i++) strcat(value, "]");
    ERR(sk_store_set_setting(store, "project", "v", value, &w), SK_INVALID_INPUT, "");
    SAME_TREE(before, dot);
    free(before);
    CHECK(w == NULL);

    /* A local file made too large by hand: a change that leaves it so is
     * refused; unsetting what made it so repairs it. */
    size_t n = (1u << 20) + 64;
    char *huge = malloc(n + 64);
    int k = snprintf(huge, n + 64, "{\"keep\": 1, \"big\": \"");
    memset(huge + k, 'x', n);
    strcpy(huge + k + n, "\"}");
    write_text(dot, "settings.local.json", huge);
    before = tree_sig(dot);
    ERR(sk_store_set_setting(store, "local", "other", "2", &w), SK_INVALID_INPUT, "bytes now");
    ERR(sk_store_migrate_settings(store, "local", &w), SK_INVALID_INPUT, "bytes now");
    SAME_TREE(before, dot);
    free(before);
    OK(sk_store_unset_setting(store, "local", "big", &w));
    CHECK(mj_is_true(mj_get(w, "existed")));
    sk_string_free(w);
    w = NULL;
    char *s = NULL;
    OK(sk_store_settings(store, NULL, &s));
    CHECK(mj_is(mj_get(mj_at(mj_get(s, "sources"), 2), "status"), "\"loaded\""));
    CHECK(mj_is(mj_get(mj_get(s, "values"), "keep"), "1"));
    sk_string_free(s);

    /* Hostile strings: invalid UTF-8 and traversal are refused; control
     * characters and an escaped NUL are only text inside the JSON. */
    before = tree_sig(dot);
    ERR(sk_store_set_setting(store, "project", "a\xff", "1", &w), SK_INVALID_UTF8, "key");
    ERR(sk_store_set_setting(store, "project", "a", "\"\xc3\"", &w), SK_INVALID_UTF8, "value_json");
    ERR(sk_store_set_setting(store, "../../etc", "a", "1", &w), SK_INVALID_INPUT, "source");
    ERR(sk_store_set_setting(store, "project", "../../etc/passwd", "1", &w), SK_INVALID_INPUT,
        "none empty");
    ERR(sk_store_set_setting(store, "project", "schemaVersion", "9", &w), SK_INVALID_INPUT,
        "schemaVersion");
    SAME_TREE(before, dot);
    free(before);
    OK(sk_store_set_setting(store, "project", "ctl\x01\n\x1b[31m", "\"a\\u0000b\"", &w));
    sk_string_free(w);
    w = NULL;
    OK(sk_store_settings(store, "{\"sources\": [\"project\"]}", &s));
    CHECK(mj_is(mj_get(mj_at(mj_get(s, "sources"), 1), "status"), "\"loaded\""));
    sk_string_free(s);

    /* A FIFO and a directory where the settings file should be: refused
     * without blocking, nothing written. */
    char *local = path_join(dot, "settings.local.json");
    unlink(local);
    CHECK(mkfifo(local, 0600) == 0);
    alarm(30); /* a call that blocks kills the test instead of hanging it */
    ERR(sk_store_set_setting(store, "local", "a", "1", &w), SK_INVALID_INPUT, "regular file");
    OK(sk_store_settings(store, NULL, &s));
    alarm(0);
    CHECK(mj_is(mj_get(mj_at(mj_get(s, "sources"), 2), "status"), "\"error\""));
    sk_string_free(s);
    unlink(local);
    mkdir(local, 0700);
    ERR(sk_store_set_setting(store, "local", "a", "1", &w), SK_INVALID_INPUT, "regular file");
    CHECK(w == NULL);
    rmdir(local);

    free(local);
    free(huge);
    free(deep);
    free(deepest);
    free(big_key);
    free(big);
    free(dot);
    sk_store_close(&store);
    free(home);
    free(root);
}

static void test_bad_memory_input(void) {
    char *root = fresh_dir("bad-memory-root");
    char *home = fresh_dir("bad-memory-home");
    char opts[1024];
    snprintf(opts, sizeof opts, "{\"home\": \"%s\"}", home);
    sk_store *store = NULL;
    OK(sk_store_open(root, opts, &store));
    char *m = NULL;

    /* Reading on a fresh home creates nothing. */
    char *before = tree_sig(home);
    OK(sk_store_memory_list(store, "project", &m));
    CHECK_STR(m, "[]");
    sk_string_free(m);
    m = NULL;
    OK(sk_store_memory_list(store, "user", &m));
    sk_string_free(m);
    m = NULL;
    ERR(sk_store_memory_read(store, "user", "absent", &m), SK_NOT_FOUND, "absent");
    SAME_TREE(before, home);

    /* Hostile names, scopes, contents: refused, nothing written. */
    const char *names[] = {"../x", "a/b", "..", ".x", "tab\tname", "nl\nname", "MEMORY",
                           "/etc/passwd", "x\x1b[2J"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        ERR(sk_store_memory_write(store, "project", names[i], "x", false, &m), SK_INVALID_INPUT,
            "memory name");
    ERR(sk_store_memory_write(store, "project", "a\xff", "x", false, &m), SK_INVALID_UTF8, "name");
    ERR(sk_store_memory_write(store, "project", "a", "x\xc3", false, &m), SK_INVALID_UTF8,
        "content");
    ERR(sk_store_memory_write(store, "../user", "a", "x", false, &m), SK_INVALID_INPUT, "scope");
    char *big = malloc((1u << 20) + 2);
    memset(big, 'x', (1u << 20) + 1);
    big[(1u << 20) + 1] = 0;
    ERR(sk_store_memory_write(store, "project", "big", big, false, &m), SK_INVALID_INPUT,
        "1048576");
    CHECK(m == NULL);
    SAME_TREE(before, home);
    free(before);

    /* A FIFO and a directory named as memories: refused or passed over,
     * never blocking. */
    OK(sk_store_memory_write(store, "project", "real", "# Real", false, &m));
    sk_string_free(m);
    m = NULL;
    char *dir_json = NULL;
    OK(sk_store_memory_path(store, "project", &dir_json));
    char *dir = mj_str(dir_json);
    sk_string_free(dir_json);
    char *fifo = path_join(dir, "pipe.md");
    char *sub = path_join(dir, "sub.md");
    CHECK(mkfifo(fifo, 0600) == 0);
    mkdir(sub, 0700);
    alarm(30);
    ERR(sk_store_memory_read(store, "project", "pipe", &m), SK_INVALID_INPUT, "regular file");
    ERR(sk_store_memory_read(store, "project", "sub", &m), SK_INVALID_INPUT, "regular file");
    ERR(sk_store_memory_write(store, "project", "pipe", "x", true, &m), SK_INVALID_INPUT,
        "regular file");
    OK(sk_store_memory_list(store, "project", &m));
    alarm(0);
    CHECK(mj_len(m) == 1);
    sk_string_free(m);
    unlink(fifo);
    rmdir(sub);
    free(fifo);
    free(sub);
    free(dir);
    free(big);
    sk_store_close(&store);
    free(home);
    free(root);
}

/* A one-message Claude Code transcript whose working directory is `cwd`. */
static char *transcript(const char *dir, const char *id, const char *cwd) {
    char name[128], text[1024];
    snprintf(name, sizeof name, "%s.jsonl", id);
    snprintf(text, sizeof text,
             "{\"parentUuid\":null,\"cwd\":\"%s\",\"sessionId\":\"%s\",\"type\":\"user\","
             "\"message\":{\"role\":\"user\",\"content\":\"hi\"},"
             "\"uuid\":\"c0000000-0000-4000-8000-000000000001\","
             "\"timestamp\":\"2025-07-01T09:00:00.000Z\"}\n",
             cwd, id);
    write_text(dir, name, text);
    return path_join(dir, name);
}

static void test_bad_import_input(void) {
    char *root = fresh_dir("bad-import-root");
    char *home = fresh_dir("bad-import-home");
    char *src = fresh_dir("bad-import-src");
    char *file = transcript(src, "4c1d2e3f-0a1b-4c2d-8e3f-000000000001", root);
    char paths[1024], opts[2048];
    snprintf(paths, sizeof paths, "[\"%s\"]", file);
    char *report = NULL;
    char *before = tree_sig(home);
    char *root_before = tree_sig(root);

    /* Options no source could be imported with: the call's error. */
    snprintf(opts, sizeof opts, "{\"project\": \"\", \"store\": {\"home\": \"%s\"}}", home);
    ERR(sk_import(paths, opts, &report), SK_INVALID_INPUT, "project is empty");
    ERR(sk_import(paths, "{\"store\": {\"home\": \"\"}}", &report), SK_INVALID_INPUT,
        "home is empty");
    snprintf(opts, sizeof opts, "{\"project\": \"%s/nope\", \"store\": {\"home\": \"%s\"}}", root,
             home);
    ERR(sk_import(paths, opts, &report), SK_NOT_FOUND, "nope");
    snprintf(opts, sizeof opts, "{\"project\": \"%s\", \"store\": {\"home\": \"%s\"}}", file, home);
    ERR(sk_import(paths, opts, &report), SK_INVALID_INPUT, "not a directory");
    CHECK(report == NULL);
    SAME_TREE(before, home);

    /* Special files: refused by name, without blocking. */
    snprintf(opts, sizeof opts, "{\"project\": \"%s\", \"store\": {\"home\": \"%s\"}}", root, home);
    char *fifo = path_join(src, "pipe.jsonl");
    char *link = path_join(src, "link.jsonl");
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(symlink(fifo, link) == 0);
    char p[1024];
    alarm(30);
    snprintf(p, sizeof p, "[\"%s\"]", fifo);
    ERR(sk_import(p, opts, &report), SK_INVALID_INPUT, "FIFO");
    snprintf(p, sizeof p, "[\"%s\"]", link);
    ERR(sk_import(p, opts, &report), SK_INVALID_INPUT, "link.jsonl");
    ERR(sk_import("[\"/dev/zero\"]", opts, &report), SK_INVALID_INPUT, "/dev/zero");
    ERR(sk_import("[\"/dev/urandom\"]", opts, &report), SK_INVALID_INPUT, "device");
    ERR(sk_import("[\"\"]", opts, &report), SK_INVALID_INPUT, "NUL");
    ERR(sk_import("[\"/tmp/a\\u0000b\"]", opts, &report), SK_INVALID_INPUT, "NUL");
    ERR(sk_import("[\"/tmp/\xff\"]", opts, &report), SK_INVALID_UTF8, "paths_json");
    CHECK(report == NULL);
    SAME_TREE(before, home);
    /* In a directory the FIFO and the link to it are passed over. */
    unlink(file);
    snprintf(p, sizeof p, "[\"%s\"]", src);
    OK(sk_import(p, opts, &report));
    alarm(0);
    CHECK(mj_len(mj_get(report, "sources")) == 0);
    sk_string_free(report);
    report = NULL;
    SAME_TREE(before, home);

    /* A transcript naming a relative working directory lands nowhere: its
     * source fails in the report; the call's other sources go on. */
    free(file);
    file = transcript(src, "4c1d2e3f-0a1b-4c2d-8e3f-000000000002", "../../etc");
    snprintf(p, sizeof p, "[\"%s\"]", file);
    snprintf(opts, sizeof opts, "{\"store\": {\"home\": \"%s\"}}", home);
    OK(sk_import(p, opts, &report));
    CHECK(mj_int(mj_get(report, "failed")) == 1);
    const char *s0 = mj_at(mj_get(report, "sources"), 0);
    CHECK(mj_is(mj_get(s0, "outcome"), "\"failed\""));
    char *why = mj_get_str(s0, "error");
    CHECK(why && strstr(why, "relative path") != NULL);
    free(why);
    sk_string_free(report);
    report = NULL;
    SAME_TREE(before, home);
    SAME_TREE(root_before, root);

    unlink(link);
    unlink(fifo);
    free(link);
    free(fifo);
    free(before);
    free(root_before);
    free(file);
    free(src);
    free(home);
    free(root);
}

/* ---- tests: shared fixtures (tests/fixtures/manifest.json) ---------------- */

static sk_status kind_status(const char *kind) {
    const char *kinds[] = {"", "NotFound", "Busy", "Conflict", "InvalidInput",
                           "Corrupt", "Io", "Unsupported", "Internal"};
    for (int i = 1; i <= 8; i++)
        if (kind && strcmp(kind, kinds[i]) == 0) return (sk_status)i;
    return SK_INTERNAL;
}

/* An expectation that may be {"error": kind}: the status it wants. */
static sk_status expected_status(const char *v) {
    char *kind = mj_get_str(v, "error");
    sk_status st = kind ? kind_status(kind) : SK_OK;
    free(kind);
    return st;
}

static void check_ids(const char *what, const char *name, const char *got_json,
                      const char *want_array) {
    char *got = ids_of(got_json), *want = ids_of(want_array);
    if (strcmp(got, want) != 0)
        FAILF("%s: %s: got [%s], want [%s]", name, what, got, want);
    free(got);
    free(want);
}

/* The manifest's kind of a skipped segment (tests/fixtures/README.md): the
 * library's `kind` when it gives one, else its reason classified by prefix. */
static char *skipped_kind(const char *item) {
    char *kind = mj_get_str(item, "kind");
    if (kind) return kind;
    static const char *kinds[][2] = {
        {"NUL run", "nul"},          {"invalid UTF-8", "utf8"},
        {"invalid JSON", "json"},    {"message has no", "noId"},
        {"patch record needs", "badPatch"}, {"compaction record needs", "badCompaction"},
        {"last line has no newline", "torn"},
    };
    char *reason = mj_get_str(item, "reason");
    const char *found = "other";
    for (size_t i = 0; reason && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strncmp(reason, kinds[i][0], strlen(kinds[i][0])) == 0) found = kinds[i][1];
    free(reason);
    return strdup(found);
}

/* Whether the strings at `key` of two objects are equal (both absent or null
 * counts as equal). */
static int same_str(const char *a, const char *b, const char *key) {
    char *x = mj_get_str(a, key), *y = mj_get_str(b, key);
    int same = (!x && !y) || (x && y && strcmp(x, y) == 0);
    free(x);
    free(y);
    return same;
}

/* A skipped segment of the library's report against the manifest's. */
static int same_skipped(const char *got, const char *want) {
    if (mj_int(mj_get(got, "line")) != mj_int(mj_get(want, "line")) ||
        mj_int(mj_get(got, "offset")) != mj_int(mj_get(want, "offset")) ||
        mj_int(mj_get(got, "length")) != mj_int(mj_get(want, "length")))
        return 0;
    char *gk = skipped_kind(got), *wk = mj_get_str(want, "kind");
    int same = wk && strcmp(gk, wk) == 0;
    free(gk);
    free(wk);
    return same;
}

/* Arrays of objects compared by `same` on each element, or of strings when
 * `same` is NULL. A missing array counts as empty. */
static int same_array(const char *got, const char *want, int (*same)(const char *, const char *)) {
    long n = mj_len(got) < 0 ? 0 : mj_len(got), m = mj_len(want);
    if (n != m) return 0;
    for (long i = 0; i < n; i++) {
        const char *g = mj_at(got, (size_t)i), *w = mj_at(want, (size_t)i);
        if (same) {
            if (!same(g, w)) return 0;
        } else {
            char *x = mj_str(g), *y = mj_str(w);
            int eq = x && y && strcmp(x, y) == 0;
            free(x);
            free(y);
            if (!eq) return 0;
        }
    }
    return 1;
}

static int same_chain(const char *g, const char *w) {
    return same_str(g, w, "messageId") && same_str(g, w, "missingParentId");
}

static int same_missing_blob(const char *g, const char *w) {
    return same_str(g, w, "messageId") && same_str(g, w, "field") && same_str(g, w, "sha256");
}

/* The manifest's `report` against the report of `sk_view_info`, key by key. */
static void check_report(const char *name, const char *got, const char *want) {
    const char *e;
    if ((e = mj_get(want, "skipped")) && !same_array(mj_get(got, "skipped"), e, same_skipped))
        FAILF("%s: report.skipped differs", name);
    if ((e = mj_get(want, "tornTail"))) {
        const char *t = mj_get(got, "tornTail");
        int same = mj_is_null(e) ? (!t || mj_is_null(t)) : (t && !mj_is_null(t) && same_skipped(t, e));
        if (!same) FAILF("%s: report.tornTail differs", name);
    }
    if ((e = mj_get(want, "brokenChains")) && !same_array(mj_get(got, "brokenChains"), e, same_chain))
        FAILF("%s: report.brokenChains differs", name);
    if ((e = mj_get(want, "duplicateIds")) && !same_array(mj_get(got, "duplicateIds"), e, NULL))
        FAILF("%s: report.duplicateIds differs", name);
    if ((e = mj_get(want, "missingBlobs")) &&
        !same_array(mj_get(got, "missingBlobs"), e, same_missing_blob))
        FAILF("%s: report.missingBlobs differs", name);
    if ((e = mj_get(want, "unknownRecords")) && mj_int(e) != mj_int(mj_get(got, "unknownRecords")))
        FAILF("%s: report.unknownRecords: got %lld, want %lld", name,
              mj_int(mj_get(got, "unknownRecords")), mj_int(e));
    if ((e = mj_get(want, "warnings")) && mj_int(e) != mj_len(mj_get(got, "warnings")))
        FAILF("%s: report.warnings: got %ld, want %lld", name, mj_len(mj_get(got, "warnings")),
              mj_int(e));
}

/* Check a READ expectation (tests/fixtures/README.md) against a loaded view. */
/* Each field of `want` ({field: value}) against the object `got`, as JSON
 * values; a field `got` lacks compares as null. */
static void check_fields(const char *name, const char *what, const char *got, const char *want) {
    const char *wv;
    const char *field;
    for (size_t j = 0; (field = mj_key_at(want, j, &wv)) != NULL; j++) {
        char *f = strdup(field);
        const char *gv = mj_get(got, f);
        if (!mj_equal(gv ? gv : "null", wv)) {
            const char *ge = gv ? mj_skip(gv) : NULL, *we = mj_skip(wv);
            FAILF("%s: %s.%s: got %.*s, want %.*s", name, what, f, ge ? (int)(ge - gv) : 4,
                  gv ? gv : "null", we ? (int)(we - wv) : 0, wv);
        }
        free(f);
    }
}

/* The element of the JSON array `list` whose `key` is the string `id`, or NULL. */
static const char *by_key(const char *list, const char *key, const char *id) {
    for (long i = 0; i < mj_len(list); i++) {
        const char *m = mj_at(list, (size_t)i);
        char *mid = mj_get_str(m, key);
        int same = mid && strcmp(mid, id) == 0;
        free(mid);
        if (same) return m;
    }
    return NULL;
}

static void check_read(const char *name, sk_status load_status, sk_view *v, const char *read) {
    sk_status want = expected_status(read);
    if (want != SK_OK || load_status != SK_OK) {
        if (load_status != want)
            FAILF("%s: read: got %s (%s), want %s", name, sk_status_name(load_status),
                  sk_last_error(), sk_status_name(want));
        return;
    }
    char *info = NULL;
    OK(sk_view_info(v, &info));
    if (!info) return;
    const char *e;
    if ((e = mj_get(read, "head"))) {
        char *want_head = mj_str(e), *got_head = mj_get_str(info, "head");
        if (!((want_head == NULL && mj_is_null(mj_get(info, "head"))) ||
              (want_head && got_head && strcmp(want_head, got_head) == 0)))
            FAILF("%s: head: got %s, want %s", name, got_head ? got_head : "null",
                  want_head ? want_head : "null");
        free(want_head);
        free(got_head);
    }
    if ((e = mj_get(read, "messageCount")) && mj_int(e) != mj_int(mj_get(info, "messageCount")))
        FAILF("%s: messageCount: got %lld, want %lld", name, mj_int(mj_get(info, "messageCount")),
              mj_int(e));
    if ((e = mj_get(read, "header")) && mj_is_null(e) && !mj_is_null(mj_get(info, "header")))
        FAILF("%s: header: want null", name);
    if ((e = mj_get(read, "records"))) {
        const char *recs = mj_get(info, "records");
        if (mj_len(recs) != mj_len(e)) FAILF("%s: records: count differs", name);
        for (long i = 0; i < mj_len(e) && i < mj_len(recs); i++) {
            char *want_t = mj_str(mj_at(e, (size_t)i));
            char *got_t = mj_get_str(mj_at(recs, (size_t)i), "type");
            if (!want_t || !got_t || strcmp(want_t, got_t) != 0)
                FAILF("%s: record %ld: got %s, want %s", name, i, got_t, want_t);
            free(want_t);
            free(got_t);
        }
    }
    if ((e = mj_get(read, "report"))) check_report(name, mj_get(info, "report"), e);
    sk_string_free(info);

    char *out = NULL;
    if ((e = mj_get(read, "activePath"))) {
        sk_status st = sk_view_active_path(v, &out);
        sk_status want_st = expected_status(e);
        if (st != want_st)
            FAILF("%s: activePath: got %s (%s), want %s", name, sk_status_name(st),
                  sk_last_error(), sk_status_name(want_st));
        else if (st == SK_OK)
            check_ids("activePath", name, out, e);
        sk_string_free(out);
        out = NULL;
    }
    if ((e = mj_get(read, "modelView"))) {
        sk_status st = sk_view_model(v, NULL, &out);
        sk_status want_st = expected_status(e);
        if (st != want_st)
            FAILF("%s: modelView: got %s, want %s", name, sk_status_name(st),
                  sk_status_name(want_st));
        else if (st == SK_OK)
            check_ids("modelView", name, out, e);
        sk_string_free(out);
        out = NULL;
    }
    const char *with = mj_get(read, "modelViewWith");
    for (long i = 0; with && i < mj_len(with); i++) {
        const char *w = mj_at(with, (size_t)i);
        const char *o = mj_ws(mj_get(w, "options")), *o_end = mj_skip(o);
        char *opts = o && o_end ? strndup(o, (size_t)(o_end - o)) : strdup("");
        sk_status st = sk_view_model(v, opts, &out);
        char what[64];
        snprintf(what, sizeof what, "modelViewWith[%ld]", i);
        if (st != SK_OK)
            FAILF("%s: %s: %s", name, what, sk_last_error());
        else
            check_ids(what, name, out, mj_get(w, "ids"));
        sk_string_free(out);
        out = NULL;
        free(opts);
    }
    if ((e = mj_get(read, "ui"))) {
        if (sk_view_ui(v, &out) != SK_OK) {
            FAILF("%s: ui: %s", name, sk_last_error());
        } else {
            if (mj_len(out) != mj_len(e)) FAILF("%s: ui: length differs", name);
            for (long i = 0; i < mj_len(e) && i < mj_len(out); i++) {
                const char *want_row = mj_at(e, (size_t)i);
                const char *got = mj_at(out, (size_t)i);
                char *wid = mj_str(mj_at(want_row, 0)), *gid = mj_get_str(got, "id");
                if (!wid || !gid || strcmp(wid, gid) != 0 ||
                    mj_is_true(mj_at(want_row, 1)) != mj_is_true(mj_get(got, "visible")) ||
                    mj_is_true(mj_at(want_row, 2)) != mj_is_true(mj_get(got, "compacted")))
                    FAILF("%s: ui row %ld differs (%s)", name, i, wid ? wid : "?");
                free(wid);
                free(gid);
            }
        }
        sk_string_free(out);
        out = NULL;
    }
    if ((e = mj_get(read, "messages"))) {
        const char *mval;
        const char *mid;
        for (size_t i = 0; (mid = mj_key_at(e, i, &mval)) != NULL; i++) {
            char *id = strdup(mid);
            char what[300];
            snprintf(what, sizeof what, "messages.%s", id);
            if (sk_view_message(v, id, &out) != SK_OK)
                FAILF("%s: message %s: %s", name, id, sk_last_error());
            else
                check_fields(name, what, out, mval);
            sk_string_free(out);
            out = NULL;
            free(id);
        }
    }
    if ((e = mj_get(read, "modelViewMessages"))) {
        if (sk_view_model(v, NULL, &out) != SK_OK) {
            FAILF("%s: modelViewMessages: %s", name, sk_last_error());
        } else {
            const char *mval;
            const char *mid;
            for (size_t i = 0; (mid = mj_key_at(e, i, &mval)) != NULL; i++) {
                char *id = strdup(mid);
                char what[300];
                snprintf(what, sizeof what, "modelViewMessages.%s", id);
                const char *m = by_key(out, "id", id);
                if (!m)
                    FAILF("%s: %s: not in the model view", name, what);
                else
                    check_fields(name, what, m, mval);
                free(id);
            }
        }
        sk_string_free(out);
        out = NULL;
    }
}

/* Copy `files` ({dst: src}) of a log entry into the store's project directory. */
static void install_files(const char *dir, const char *files) {
    const char *src;
    const char *dst;
    for (size_t i = 0; (dst = mj_key_at(files, i, &src)) != NULL; i++) {
        char *to = path_join(dir, dst);
        char *s = mj_str(src);
        char *from = path_join(g_fixtures, s);
        size_t len = 0;
        char *data = read_file(from, &len);
        if (!data) {
            FAILF("cannot read fixture %s", from);
        } else {
            char *slash = strrchr(to, '/');
            *slash = 0;
            mkdir_p(to);
            *slash = '/';
            write_file(to, data, len);
        }
        free(data);
        free(from);
        free(s);
        free(to);
    }
}

static char *g_manifest;

/* A log without timestamps: its entry's createdAt and updatedAt are the log
 * file's modification time, in milliseconds, formatted as FORMAT §4 says. */
static void check_times_from_mtime(const char *name, const char *dir, const char *sid,
                                   const char *entry) {
    char file[512];
    snprintf(file, sizeof file, "%s.jsonl", sid);
    char *path = path_join(dir, file);
    struct stat st;
    if (stat(path, &st) != 0) {
        FAILF("%s: stat %s: %s", name, path, strerror(errno));
        free(path);
        return;
    }
    free(path);
    struct tm tm;
    time_t secs = st.st_mtim.tv_sec;
    gmtime_r(&secs, &tm);
    char when[64], want[80];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(want, sizeof want, "%s.%03ldZ", when, st.st_mtim.tv_nsec / 1000000);
    const char *fields[] = {"createdAt", "updatedAt"};
    for (int i = 0; i < 2; i++) {
        char *got = mj_get_str(entry, fields[i]);
        if (!got || strcmp(got, want) != 0)
            FAILF("%s: index.%s: got %s, want %s (the log's mtime)", name, fields[i],
                  got ? got : "null", want);
        free(got);
    }
}

static void test_fixture_logs(void) {
    const char *logs = mj_get(g_manifest, "logs");
    CHECK(mj_len(logs) >= 20);
    for (long i = 0; i < mj_len(logs); i++) {
        const char *entry = mj_at(logs, (size_t)i);
        char *name = mj_get_str(entry, "name");
        char *sid = mj_get_str(entry, "session");
        char *root = fresh_dir("fixture-root");
        sk_store *store = open_store(root);
        char *info = NULL;
        OK(sk_store_info(store, &info));
        char *dir = mj_get_str(info, "dir");
        sk_string_free(info);
        install_files(dir, mj_get(entry, "files"));
        const char *lines = mj_get(entry, "lines");
        if (lines) {
            /* The log's exact text: each line's UTF-8 bytes and a newline. */
            size_t cap = 1, len = 0;
            char *text = calloc(1, cap);
            for (long j = 0; j < mj_len(lines); j++) {
                char *l = mj_str(mj_at(lines, (size_t)j));
                size_t n = l ? strlen(l) : 0;
                text = realloc(text, cap = len + n + 2);
                memcpy(text + len, l ? l : "", n);
                len += n;
                text[len++] = '\n';
                free(l);
            }
            char file[512];
            snprintf(file, sizeof file, "%s.jsonl", sid);
            char *to = path_join(dir, file);
            write_file(to, text, len);
            free(to);
            free(text);
        }

        sk_view *v = NULL;
        sk_status st = sk_store_read_session(store, sid, &v);
        check_read(name, st, v, mj_get(entry, "read"));
        sk_view_close(&v);

        const char *e;
        if ((e = mj_get(entry, "listSessions"))) {
            char *list = NULL;
            sk_status want = expected_status(e);
            sk_status got = sk_store_list_sessions(store, &list);
            if (got != want)
                FAILF("%s: listSessions: got %s, want %s", name, sk_status_name(got),
                      sk_status_name(want));
            sk_string_free(list);
        }
        if ((e = mj_get(entry, "index"))) {
            char *report = NULL, *rebuilt = NULL;
            OK(sk_store_rebuild_index(store, &report));
            sk_string_free(report);
            if (sk_store_session_entry(store, sid, &rebuilt) != SK_OK) {
                FAILF("%s: index: %s", name, sk_last_error());
            } else {
                check_fields(name, "index", rebuilt, e);
                if (mj_is_true(mj_get(entry, "timesFromFileMtime")))
                    check_times_from_mtime(name, dir, sid, rebuilt);
            }
            sk_string_free(rebuilt);
        }
        if ((e = mj_get(entry, "open"))) {
            sk_session *s = NULL;
            sk_status want = expected_status(e);
            sk_status got = sk_session_open(store, sid, &s);
            if (got != want) {
                FAILF("%s: open: got %s (%s), want %s", name, sk_status_name(got),
                      sk_last_error(), sk_status_name(want));
            } else if (got == SK_OK && (e = mj_get(e, "appendParentId"))) {
                char *out = NULL;
                OK(sk_session_append(s, "{\"role\": \"user\", \"content\": \"next\"}", &out));
                char *want_parent = mj_str(e), *parent = out ? mj_get_str(out, "parentId") : NULL;
                int same = want_parent ? (parent && strcmp(want_parent, parent) == 0)
                                       : (out && mj_is_null(mj_get(out, "parentId")));
                if (!same)
                    FAILF("%s: appended after %s, want after %s", name, parent, want_parent);
                free(want_parent);
                free(parent);
                sk_string_free(out);
            }
            OK(sk_session_close(&s));
        }
        sk_store_close(&store);
        free(dir);
        free(root);
        free(sid);
        free(name);
    }
}

static void test_fixture_golden_store(void) {
    const char *stores = mj_get(g_manifest, "stores");
    CHECK(mj_len(stores) >= 1);
    for (long i = 0; i < mj_len(stores); i++) {
        const char *entry = mj_at(stores, (size_t)i);
        char *name = mj_get_str(entry, "name");
        char *home_rel = mj_get_str(entry, "home");
        char *root = mj_get_str(entry, "projectRoot");
        char *code = mj_get_str(entry, "projectCode");
        char *home = fresh_dir("golden-home");
        char *src = path_join(g_fixtures, home_rel);
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "cp -R '%s/.' '%s'", src, home);
        CHECK(system(cmd) == 0);
        char opts[1024];
        snprintf(opts, sizeof opts, "{\"home\": \"%s\"}", home);
        sk_store *store = NULL;
        OK(sk_store_open(root, opts, &store));
        if (!store) continue;
        char *info = NULL;
        OK(sk_store_info(store, &info));
        char *got_code = mj_get_str(info, "projectCode");
        CHECK_STR(got_code, code);
        free(got_code);
        sk_string_free(info);

        char *list = NULL;
        OK(sk_store_list_sessions(store, &list));
        check_ids("indexOrder", name, list, mj_get(entry, "indexOrder"));
        char *cont = NULL;
        OK(sk_store_continue_session(store, &cont));
        char *cid = mj_get_str(cont, "id"), *want_cid = mj_get_str(entry, "continueSession");
        CHECK_STR(cid, want_cid);
        free(cid);
        free(want_cid);
        sk_string_free(cont);
        char *report = NULL;
        OK(sk_store_rebuild_index(store, &report));
        sk_string_free(report);

        const char *sessions = mj_get(entry, "sessions");
        for (long j = 0; j < mj_len(sessions); j++) {
            const char *se = mj_at(sessions, (size_t)j);
            char *sid = mj_get_str(se, "session");
            char label[256];
            snprintf(label, sizeof label, "%s/%s", name, sid);
            sk_view *v = NULL;
            sk_status st = sk_store_read_session(store, sid, &v);
            check_read(label, st, v, mj_get(se, "read"));
            sk_view_close(&v);
            /* The shipped index as listed, and the index rebuilt from the logs. */
            const char *want_entry = mj_get(se, "index");
            if (want_entry) {
                const char *stored = by_key(list, "id", sid);
                if (!stored)
                    FAILF("%s: storedIndex: not listed", label);
                else
                    check_fields(label, "storedIndex", stored, want_entry);
                char *rebuilt = NULL;
                OK(sk_store_session_entry(store, sid, &rebuilt));
                if (rebuilt) check_fields(label, "index", rebuilt, want_entry);
                sk_string_free(rebuilt);
            }
            /* The resume path (read from the log's end) gives the same model view. */
            const char *mvw = mj_get(mj_get(se, "read"), "modelView");
            if (mvw && expected_status(mvw) == SK_OK) {
                char *mv = NULL;
                OK(sk_store_model_view(store, sid, NULL, &mv));
                check_ids("modelView (resume)", label, mv, mvw);
                sk_string_free(mv);
            }
            const char *subs = mj_get(se, "subagents");
            if (subs) {
                char *sl = NULL;
                OK(sk_store_list_subagents(store, sid, &sl));
                CHECK(mj_len(sl) == mj_len(subs));
                for (long k = 0; k < mj_len(subs); k++) {
                    char *aid = mj_get_str(mj_at(subs, (size_t)k), "agentId");
                    char alabel[320];
                    snprintf(alabel, sizeof alabel, "%s/%s", label, aid);
                    const char *want_meta = mj_get(mj_at(subs, (size_t)k), "meta");
                    const char *meta = by_key(sl, "agentId", aid);
                    if (want_meta && !(meta && mj_equal(meta, want_meta)))
                        FAILF("%s: subagent meta differs", alabel);
                    st = sk_store_read_subagent(store, sid, aid, &v);
                    check_read(alabel, st, v, mj_get(mj_at(subs, (size_t)k), "read"));
                    sk_view_close(&v);
                    free(aid);
                }
                sk_string_free(sl);
            }
            const char *open = mj_get(se, "open");
            if (open) {
                sk_session *s = NULL;
                OK(sk_session_open(store, sid, &s));
                char *second_kind = mj_get_str(open, "secondOpen");
                if (second_kind) {
                    sk_session *s2 = NULL;
                    ST(sk_session_open(store, sid, &s2), kind_status(second_kind));
                    OK(sk_session_close(&s2));
                    free(second_kind);
                }
                OK(sk_session_close(&s));
            }
            free(sid);
        }
        sk_string_free(list);
        sk_store_close(&store);
        free(src);
        free(home);
        free(code);
        free(root);
        free(home_rel);
        free(name);
    }
}

/* ---- tests: what the header promises about defaults, limits and processes --- */

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

/* A message whose JSON nests `levels` arrays and objects (the object counts). */
static char *nested_message(int levels) {
    size_t n = 64 + 2 * (size_t)levels;
    char *s = malloc(n);
    int at = snprintf(s, n, "{\"role\": \"user\", \"content\": ");
    for (int i = 1; i < levels; i++) s[at++] = '[';
    s[at++] = '1';
    for (int i = 1; i < levels; i++) s[at++] = ']';
    s[at++] = '}';
    s[at] = 0;
    return s;
}

static void test_defaults_and_limits(void) {
    char *root = fresh_dir("root");
    /* An empty home would mean the current directory: refused. */
    sk_store *none = NULL;
    ERR(sk_store_open(root, "{\"home\": \"\"}", &none), SK_INVALID_INPUT, "home is empty");
    CHECK(none == NULL);

    /* Default options keep every session: the 51st prunes nothing. */
    sk_store *store = open_store(root);
    for (int i = 0; i < 51; i++) {
        sk_session *s = NULL;
        OK(sk_session_create(store, NULL, &s));
        char *info = NULL;
        OK(sk_session_info(s, &info));
        CHECK(mj_len(mj_get(info, "pruned")) == 0);
        sk_string_free(info);
        OK(sk_session_close(&s));
    }
    char *list = NULL;
    OK(sk_store_list_sessions(store, &list));
    CHECK(mj_len(list) == 51);
    sk_string_free(list);
    OK(sk_store_list_trash(store, &list));
    CHECK(mj_len(list) == 0);
    sk_string_free(list);

    /* maxSessions opts in: the oldest moves to the trash, says so in the new
     * session's sk_session_info, is listed by sk_store_list_trash and comes
     * back with sk_store_restore_session. */
    char *root2 = fresh_dir("root-retention");
    sk_store *kept = open_store_with(root2, "\"maxSessions\": 1, \"durability\": \"never\"");
    sk_session *old = NULL, *young = NULL;
    OK(sk_session_create(kept, "{\"id\": \"old\", \"title\": \"the old one\"}", &old));
    char *appended = NULL;
    OK(sk_session_append(old, "{\"role\": \"user\", \"content\": \"keep me\"}", &appended));
    sk_string_free(appended);
    OK(sk_session_close(&old));
    OK(sk_session_create(kept, "{\"id\": \"young\"}", &young));
    char *info = NULL;
    OK(sk_session_info(young, &info));
    char *gone = mj_str(mj_at(mj_get(info, "pruned"), 0));
    CHECK_STR(gone, "old");
    free(gone);
    sk_string_free(info);
    OK(sk_session_close(&young));
    char *entry = NULL;
    ST(sk_store_session_entry(kept, "old", &entry), SK_NOT_FOUND);
    char *trash = NULL;
    OK(sk_store_list_trash(kept, &trash));
    CHECK(mj_len(trash) == 1);
    char *tid = mj_get_str(mj_at(trash, 0), "id");
    char *reason = mj_get_str(mj_at(trash, 0), "reason");
    CHECK_STR(tid, "old");
    CHECK_STR(reason, "pruned");
    free(tid);
    free(reason);
    sk_string_free(trash);
    ERR(sk_store_restore_session(kept, "nope", &entry), SK_NOT_FOUND, "nope");
    ERR(sk_store_restore_session(kept, "../old", &entry), SK_INVALID_INPUT, "../old");
    CHECK(entry == NULL);
    OK(sk_store_restore_session(kept, "old", &entry));
    char *title = mj_get_str(entry, "title");
    CHECK_STR(title, "the old one");
    free(title);
    sk_string_free(entry);
    entry = NULL;
    ERR(sk_store_restore_session(kept, "old", &entry), SK_NOT_FOUND, "old");
    OK(sk_store_list_trash(kept, &trash));
    CHECK(mj_len(trash) == 0);
    sk_string_free(trash);
    OK(sk_store_list_sessions(kept, &list));
    CHECK(mj_len(list) == 2);
    sk_string_free(list);
    sk_store_close(&kept);
    free(root2);

    /* A second writer gets SK_BUSY after about 63 ms of tries. */
    sk_session *held = NULL, *second = NULL;
    OK(sk_session_create(store, "{\"id\": \"held\"}", &held));
    double t0 = now_ms();
    ERR(sk_session_open(store, "held", &second), SK_BUSY, "held");
    double waited = now_ms() - t0;
    if (waited < 60.0) FAILF("SK_BUSY after %.1f ms, want about 63", waited);
    CHECK(second == NULL);

    /* Nesting: 100 levels are stored and read back, 101 refused. */
    char *deep = nested_message(100), *deeper = nested_message(101);
    char *out = NULL;
    ERR(sk_session_append(held, deeper, &out), SK_INVALID_INPUT, "100 levels");
    CHECK(out == NULL);
    OK(sk_session_append(held, deep, &out));
    sk_string_free(out);
    OK(sk_session_close(&held));
    sk_view *v = NULL;
    OK(sk_store_read_session(store, "held", &v));
    char *vi = NULL;
    OK(sk_view_info(v, &vi));
    CHECK(mj_int(mj_get(vi, "messageCount")) == 1);
    CHECK(mj_len(mj_get(mj_get(vi, "report"), "skipped")) == 0);
    sk_string_free(vi);
    sk_view_close(&v);
    free(deep);
    free(deeper);
    sk_store_close(&store);
    free(root);
}

/* Run in a forked child: every write through the inherited handles is refused
 * with SK_INVALID_INPUT naming the handle and both pids; reads answer; closing
 * frees the child's copy. Returns a bit per failed check. */
static int forked_child_checks(sk_session *s, sk_subagent *a, const char *sid, pid_t parent) {
    int bad = 0;
    char want_parent[64], want_child[64];
    snprintf(want_parent, sizeof want_parent, "process %d", (int)parent);
    snprintf(want_child, sizeof want_child, "process %d", (int)getpid());
    const char *msg = "{\"role\": \"user\", \"content\": \"from the child\"}";
    char *out = NULL;
    sk_status st = sk_session_append(s, msg, &out);
    const char *err = sk_last_error();
    if (st != SK_INVALID_INPUT || !strstr(err, sid) || !strstr(err, want_parent) ||
        !strstr(err, want_child)) {
        fprintf(stderr, "    child: append: %s: %s\n", sk_status_name(st), err);
        bad |= 1;
    }
    st = sk_session_update_state(s, "{\"status\": \"failed\"}", &out);
    if (st != SK_INVALID_INPUT) bad |= 2;
    st = sk_session_track_read(s, "[\"a.txt\"]");
    if (st != SK_INVALID_INPUT) bad |= 4;
    st = sk_subagent_append(a, msg, &out);
    err = sk_last_error();
    if (st != SK_INVALID_INPUT || !strstr(err, "subagent helper") || !strstr(err, want_child)) {
        fprintf(stderr, "    child: subagent append: %s: %s\n", sk_status_name(st), err);
        bad |= 8;
    }
    if (out != NULL) bad |= 16;
    char *path = NULL;
    if (sk_session_active_path(s, &path) != SK_OK || mj_len(path) != 1) bad |= 32;
    sk_string_free(path);
    sk_subagent_close(&a);
    if (sk_session_close(&s) != SK_OK || s != NULL) bad |= 64;
    return bad;
}

static void test_forked_child(void) {
    char *root = fresh_dir("root");
    write_text(root, "a.txt", "one");
    sk_store *store = open_store(root);
    sk_session *s = NULL;
    OK(sk_session_create(store, "{\"id\": \"parent-session\"}", &s));
    free(append(s, "{\"role\": \"user\", \"content\": \"from the parent\"}"));
    sk_subagent *a = NULL;
    OK(sk_session_spawn_subagent(s, "helper", NULL, &a));
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) _exit(forked_child_checks(s, a, "parent-session", parent));
    CHECK(pid > 0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        FAILF("the child's checks failed: status %#x", (unsigned)status);

    /* The child wrote nothing; the parent still holds the lock and writes on. */
    sk_session *other = NULL;
    ST(sk_session_open(store, "parent-session", &other), SK_BUSY);
    free(append(s, "{\"role\": \"assistant\", \"content\": \"still the parent\"}"));
    char *path = NULL;
    OK(sk_session_active_path(s, &path));
    CHECK(mj_len(path) == 2);
    sk_string_free(path);
    char *out = NULL;
    OK(sk_subagent_append(a, "{\"role\": \"user\", \"content\": \"task\"}", &out));
    sk_string_free(out);
    sk_view *v = NULL;
    OK(sk_subagent_read(a, &v));
    char *vi = NULL;
    OK(sk_view_info(v, &vi));
    CHECK(mj_int(mj_get(vi, "messageCount")) == 1);
    sk_string_free(vi);
    sk_view_close(&v);
    sk_subagent_close(&a);
    OK(sk_session_close(&s));
    sk_store_close(&store);
    free(root);
}

/* ---- tests: sessions shared through PostgreSQL ------------------------------ */

/* NULL for every pointer argument of the remote calls, and closing twice: no
 * server needed, as every call checks its arguments before connecting. */
static void test_remote_null_arguments(void) {
    char *root = fresh_dir("root");
    sk_store *st = open_store(root);
    sk_remote *r = NULL;
    sk_follower *f = NULL;
    char *o = SENTINEL;
    int64_t v = 7;
    uint64_t at = 7;
    const char *L = "{\"sessionId\": \"s\", \"holder\": \"h\", \"token\": 1, \"expiresMs\": 0}";

    NUL(sk_remote_open(NULL, NULL, &r), "store");
    NUL(sk_remote_open(st, NULL, NULL), "out_remote");
    CHECK(r == NULL);
    NUL(sk_remote_project(NULL, &o), "remote");
    NUL(sk_remote_holder(NULL, &o), "remote");
    NUL(sk_remote_schema_version(NULL, &v), "remote");
    NUL(sk_remote_list(NULL, &o), "remote");
    NUL(sk_remote_acquire(NULL, "s", &o), "remote");
    NUL(sk_remote_renew(NULL, L, &o), "remote");
    NUL(sk_remote_release(NULL, L), "remote");
    NUL(sk_remote_push(NULL, "s", NULL, &o), "remote");
    NUL(sk_remote_pull(NULL, "s", &o), "remote");
    NUL(sk_remote_follow(NULL, "s", 0, &f), "remote");
    NUL(sk_follower_offset(NULL, &at), "follower");
    NUL(sk_follower_next(NULL, 0, &o), "follower");
    sk_background_push *bp = NULL;
    NUL(sk_remote_push_in_background(NULL, "s", 50, &bp), "remote");
    NUL(sk_background_push_flush(NULL, &o), "push");
    NUL(sk_background_push_pushed(NULL, &at), "push");
    NUL(sk_background_push_stop(&bp, &o), "push");
    NUL(sk_background_push_stop(NULL, &o), "push");
    sk_background_push_close(&bp);
    sk_background_push_close(NULL);
    CHECK(o == SENTINEL && v == 7 && at == 7 && f == NULL && bp == NULL);
    /* A bad options object is refused before any connection is tried. */
    ERR(sk_remote_open(st, "{\"nope\": 1}", &r), SK_INVALID_INPUT, "nope");
    ERR(sk_remote_open(st, "{\"url\": \"host=/x\", \"leaseTtlMs\": 0}", &r), SK_INVALID_INPUT,
        "lease");
    CHECK(r == NULL);
    sk_remote_close(&r);
    sk_remote_close(NULL);
    sk_follower_close(&f);
    sk_follower_close(NULL);
    sk_store_close(&st);
    free(root);
}

static const char *g_pg; /* SESSIONKIT_TEST_PG, a libpq connection string */

/* A remote for `store` on the test server, shared under `project` as `holder`. */
static sk_remote *open_remote(sk_store *store, const char *project, const char *holder) {
    char opts[1024];
    snprintf(opts, sizeof opts, "{\"url\": \"%s\", \"project\": \"%s\", \"holder\": \"%s\"}", g_pg,
             project, holder);
    sk_remote *r = NULL;
    OK(sk_remote_open(store, opts, &r));
    return r;
}

/* The bytes of a session's log in `store` (malloc'd; its length in *len). */
static char *log_bytes(sk_store *store, const char *id, size_t *len) {
    char *info = NULL;
    OK(sk_store_info(store, &info));
    char *dir = info ? mj_get_str(info, "dir") : NULL;
    sk_string_free(info);
    char name[256];
    snprintf(name, sizeof name, "%s.jsonl", id);
    char *path = path_join(dir ? dir : "/nonexistent", name);
    char *bytes = read_file(path, len);
    if (!bytes) {
        FAILF("cannot read %s", path);
        *len = 0;
        bytes = strdup("");
    }
    free(path);
    free(dir);
    return bytes;
}

/* `dir`'s tree: every path under it with its size (malloc'd). */
static char *listing(const char *dir) {
    size_t len = 0, cap = 256;
    char *out = calloc(1, cap);
    tree_into(dir, 0, &out, &len, &cap);
    return out;
}

/* Two homes stand for two machines sharing one project on the test server. */
static void test_remote_two_machines(void) {
    char project[64];
    snprintf(project, sizeof project, "c-%ld-%ld", (long)getpid(), (long)time(NULL));
    char *root_a = fresh_dir("root-a"), *root_b = fresh_dir("root-b");
    sk_store *a = open_store_with(root_a, "\"durability\": \"never\"");
    sk_store *b = open_store_with(root_b, "\"durability\": \"never\"");
    sk_remote *ra = open_remote(a, project, "laptop");
    sk_remote *rb = open_remote(b, project, "ci");
    if (!ra || !rb) goto done;
    char *s = NULL;
    OK(sk_remote_project(ra, &s));
    CHECK_STR(s, project);
    sk_string_free(s);
    s = NULL;
    OK(sk_remote_holder(rb, &s));
    CHECK_STR(s, "ci");
    sk_string_free(s);
    int64_t version = 0;
    OK(sk_remote_schema_version(ra, &version));
    CHECK(version >= 1);

    /* Push from A (a blob travels with its line), pull into B: byte-identical. */
    sk_session *w = NULL;
    OK(sk_session_create(a, "{\"id\": \"shared-1\"}", &w));
    free(append(w, "{\"role\": \"user\", \"content\": \"Summarise the build log\"}"));
    size_t big_n = 300 * 1024;
    char *big = malloc(big_n + 64);
    int k = snprintf(big, 64, "{\"role\": \"tool\", \"content\": \"");
    memset(big + k, 'x', big_n);
    /* Blobs are shared by digest across projects: this one is new to the server. */
    memcpy(big + k, project, strlen(project));
    strcpy(big + k + big_n, "\"}");
    free(append(w, big));
    free(big);
    size_t total = 0;
    free(log_bytes(a, "shared-1", &total));
    char *report = NULL;
    OK(sk_remote_push(ra, "shared-1", NULL, &report));
    CHECK(report && mj_int(mj_get(report, "from")) == 0 &&
          mj_int(mj_get(report, "to")) == (long long)total &&
          mj_int(mj_get(report, "blobs")) == 1);
    sk_string_free(report);

    char *list = NULL;
    OK(sk_remote_list(rb, &list));
    CHECK(list && mj_len(list) == 1);
    const char *first = list ? mj_at(list, 0) : NULL;
    char *first_id = first ? mj_get_str(first, "id") : NULL;
    CHECK_STR(first_id, "shared-1");
    free(first_id);
    CHECK(first && mj_int(mj_get(first, "pushedBytes")) == (long long)total);
    char *title = first ? mj_get_str(mj_get(first, "entry"), "title") : NULL;
    CHECK_STR(title, "Summarise the build log");
    free(title);
    sk_string_free(list);

    report = NULL;
    OK(sk_remote_pull(rb, "shared-1", &report));
    CHECK(report && mj_int(mj_get(report, "to")) == (long long)total);
    sk_string_free(report);
    size_t na = 0, nb = 0;
    char *la = log_bytes(a, "shared-1", &na), *lb = log_bytes(b, "shared-1", &nb);
    CHECK(na == total && nb == na && memcmp(la, lb, na) == 0);
    free(la);
    free(lb);
    char *path = NULL;
    OK(sk_store_model_view(b, "shared-1", NULL, &path));
    CHECK(path && strstr(path, "xxxxxxxxxxxxxxxx") != NULL);
    sk_string_free(path);

    /* One writer across machines: A's lease makes B busy, naming A. */
    char *lease = NULL;
    OK(sk_remote_acquire(ra, "shared-1", &lease));
    char *holder = lease ? mj_get_str(lease, "holder") : NULL;
    CHECK_STR(holder, "laptop");
    free(holder);
    long long token = lease ? mj_int(mj_get(lease, "token")) : -1;
    CHECK(token >= 1);
    char *other = SENTINEL;
    ERR(sk_remote_acquire(rb, "shared-1", &other), SK_BUSY, "laptop");
    ERR(sk_remote_push(rb, "shared-1", NULL, &other), SK_BUSY, "laptop");
    CHECK(other == SENTINEL);
    char *renewed = NULL;
    OK(sk_remote_renew(ra, lease ? lease : "", &renewed));
    CHECK(renewed && mj_int(mj_get(renewed, "token")) == token);
    /* A lease for another session is refused; the right one pushes. */
    ERR(sk_remote_push(ra, "other-1", renewed ? renewed : "", &other), SK_INVALID_INPUT,
        "shared-1");
    report = NULL;
    OK(sk_remote_push(ra, "shared-1", renewed ? renewed : "", &report));
    CHECK(report && mj_int(mj_get(report, "batches")) == 0);
    sk_string_free(report);
    OK(sk_remote_release(ra, renewed ? renewed : ""));
    sk_string_free(renewed);
    sk_string_free(lease);
    lease = NULL;
    OK(sk_remote_acquire(rb, "shared-1", &lease));
    CHECK(lease && mj_int(mj_get(lease, "token")) > token);
    OK(sk_remote_release(rb, lease ? lease : ""));
    sk_string_free(lease);

    /* Follow: exactly the lines pushed after the follower started. */
    sk_follower *f = NULL;
    OK(sk_remote_follow(rb, "shared-1", -1, &f));
    uint64_t at = 0;
    OK(sk_follower_offset(f, &at));
    CHECK(at == total);
    char *lines = NULL;
    OK(sk_follower_next(f, 0, &lines));
    CHECK_STR(lines, "[]");
    sk_string_free(lines);
    for (int i = 0; i < 3; i++) {
        char msg[128];
        snprintf(msg, sizeof msg, "{\"role\": \"assistant\", \"content\": \"line %d\"}", i);
        free(append(w, msg));
    }
    report = NULL;
    OK(sk_remote_push(ra, "shared-1", NULL, &report));
    sk_string_free(report);
    size_t now = 0;
    char *after = log_bytes(a, "shared-1", &now);
    size_t got_n = 0, want_n = now - total;
    char *got = calloc(1, want_n + 1);
    int count = 0, tries = 0;
    while (got_n < want_n && tries++ < 20) {
        lines = NULL;
        OK(sk_follower_next(f, 10000, &lines));
        if (!lines || mj_len(lines) == 0) {
            FAILF("no lines within 10 s of a push");
            sk_string_free(lines);
            break;
        }
        for (long i = 0; i < mj_len(lines); i++, count++) {
            char *line = mj_str(mj_at(lines, (size_t)i));
            size_t n = line ? strlen(line) : 0;
            CHECK(n > 0 && line[n - 1] == '\n');
            if (got_n + n <= want_n) memcpy(got + got_n, line, n);
            got_n += n;
            free(line);
        }
        sk_string_free(lines);
    }
    CHECK(count == 3 && got_n == want_n && memcmp(got, after + total, want_n) == 0);
    OK(sk_follower_offset(f, &at));
    CHECK(at == now);
    free(got);
    free(after);
    sk_follower_close(&f);
    CHECK(f == NULL);
    sk_follower_close(&f);
    ERR(sk_remote_follow(rb, "shared-1", (int64_t)now + 1, &f), SK_INVALID_INPUT, "byte");
    ERR(sk_remote_follow(rb, "never-pushed", 0, &f), SK_NOT_FOUND, "never-pushed");
    ERR(sk_remote_pull(rb, "never-pushed", &other), SK_NOT_FOUND, "never-pushed");
    CHECK(f == NULL && other == SENTINEL);

    /* Hostile ids are refused before any path or query: B's home is untouched. */
    char *info = NULL;
    OK(sk_store_info(b, &info));
    char *dir = info ? mj_get_str(info, "dir") : NULL;
    sk_string_free(info);
    char *home_b = dir ? strdup(dir) : strdup("/nonexistent");
    char *cut = strstr(home_b, "/projects/");
    if (cut) *cut = 0;
    char *before = listing(home_b);
    const char *bad[] = {"../x", "", "a/b", "/etc/passwd", ".hidden", "blobs"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ST(sk_remote_pull(rb, bad[i], &other), SK_INVALID_INPUT);
        ST(sk_remote_push(rb, bad[i], NULL, &other), SK_INVALID_INPUT);
        ST(sk_remote_acquire(rb, bad[i], &other), SK_INVALID_INPUT);
        ST(sk_remote_follow(rb, bad[i], 0, &f), SK_INVALID_INPUT);
    }
    ERR(sk_remote_renew(rb, "{\"sessionId\": 1}", &other), SK_INVALID_INPUT, "lease");
    ERR(sk_remote_release(rb, "not json"), SK_INVALID_INPUT, "lease");
    CHECK(f == NULL && other == SENTINEL);
    char *after_list = listing(home_b);
    CHECK_STR(after_list, before);
    free(before);
    free(after_list);
    free(home_b);
    free(dir);

    /* A background push: appends go out on the interval, a flush waits for
     * them, the other machine is BUSY meanwhile, stop pushes the rest and
     * frees the lease. */
    sk_background_push *bp = NULL;
    ERR(sk_remote_push_in_background(ra, "shared-1", 1, &bp), SK_INVALID_INPUT, "interval");
    ST(sk_remote_push_in_background(ra, "../x", 50, &bp), SK_INVALID_INPUT);
    CHECK(bp == NULL);
    OK(sk_remote_push_in_background(ra, "shared-1", 20, &bp));
    for (int i = 0; i < 20; i++) {
        free(append(w, "{\"role\": \"assistant\", \"content\": \"in the background\"}"));
    }
    char *flushed = NULL;
    OK(sk_background_push_flush(bp, &flushed));
    free(log_bytes(a, "shared-1", &total));
    CHECK(flushed && mj_int(mj_get(flushed, "to")) == (long long)total);
    sk_string_free(flushed);
    uint64_t pushed = 0;
    OK(sk_background_push_pushed(bp, &pushed));
    CHECK(pushed == total);
    char *busy = NULL;
    ERR(sk_remote_acquire(rb, "shared-1", &busy), SK_BUSY, "laptop");
    free(append(w, "{\"role\": \"assistant\", \"content\": \"the last line\"}"));
    char *stopped = NULL;
    OK(sk_background_push_stop(&bp, &stopped));
    CHECK(bp == NULL);
    free(log_bytes(a, "shared-1", &total));
    CHECK(stopped && mj_int(mj_get(stopped, "to")) == (long long)total);
    sk_string_free(stopped);
    char *pulled = NULL;
    OK(sk_remote_pull(rb, "shared-1", &pulled));
    sk_string_free(pulled);
    size_t bga = 0, bgb = 0;
    char *bg_a = log_bytes(a, "shared-1", &bga), *bg_b = log_bytes(b, "shared-1", &bgb);
    CHECK(bg_a && bg_b && bga == bgb && memcmp(bg_a, bg_b, bga) == 0);
    free(bg_a);
    free(bg_b);
    char *freed = NULL;
    OK(sk_remote_acquire(rb, "shared-1", &freed));
    OK(sk_remote_release(rb, freed));
    sk_string_free(freed);

    OK(sk_session_close(&w));
done:
    sk_remote_close(&ra);
    sk_remote_close(&rb);
    CHECK(ra == NULL && rb == NULL);
    sk_remote_close(&ra);
    sk_store_close(&a);
    sk_store_close(&b);
    free(root_a);
    free(root_b);
}

/* ---- tests: hostile input at instructions, search, compaction, remote ----- */

/* The home and the project of a store, listed (every path with its size). */
static char *store_listing(sk_store *store, const char *root) {
    char *info = NULL;
    OK(sk_store_info(store, &info));
    char *dir = info ? mj_get_str(info, "dir") : NULL;
    sk_string_free(info);
    char *a = listing(dir ? dir : "/nonexistent"), *b = listing(root);
    size_t n = strlen(a) + strlen(b) + 2;
    char *out = malloc(n);
    snprintf(out, n, "%s\n%s", a, b);
    free(a);
    free(b);
    free(dir);
    return out;
}

/* Check that the store's home and project are as `before` (a store_listing),
   naming this line if not; frees `before`. */
#define CHECK_UNCHANGED(store, root, before)                          \
    do {                                                              \
        char *after_ = store_listing((store), (root));                \
        CHECK_STR(after_, (before));                                  \
        free(after_);                                                 \
        free(before);                                                 \
    } while (0)

static void test_hostile_instructions(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    write_text(root, "AGENTS.md", "rules @../../../../etc/passwd @/dev/zero");
    write_text(root, "a-file", "x");
    char *fifo = path_join(root, "fifo"), *loop_a = path_join(root, "loop-a"),
         *loop_b = path_join(root, "loop-b"), *file = path_join(root, "a-file"),
         *below = path_join(root, "a-file/below"), *zero_md = path_join(root, "ZERO.md");
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(symlink(loop_b, loop_a) == 0 && symlink(loop_a, loop_b) == 0);
    CHECK(symlink("/dev/zero", zero_md) == 0);
    char *before = store_listing(store, root);
    char *o = NULL;

    /* Not a directory: NOT_FOUND, as the header says, naming the path. */
    ERR(sk_store_instructions(store, file, NULL, &o), SK_NOT_FOUND, "a-file");
    ERR(sk_store_instructions(store, below, NULL, &o), SK_NOT_FOUND, "a-file");
    ERR(sk_store_instructions(store, fifo, NULL, &o), SK_NOT_FOUND, "fifo");
    ERR(sk_store_instructions(store, loop_a, NULL, &o), SK_NOT_FOUND, "loop-a");
    ERR(sk_store_instructions(store, "/dev/zero", NULL, &o), SK_NOT_FOUND, "/dev/zero");
    /* A NUL or another control character inside a name (only JSON can carry
     * a NUL through a C string): INVALID_INPUT. */
    ERR(sk_store_instructions(store, root, "{\"names\": [\"AGENTS.md\\u0000x\"]}", &o),
        SK_INVALID_INPUT, "plain file name");
    ERR(sk_store_instructions(store, root, "{\"names\": [\"\\u001b[2J.md\"]}", &o),
        SK_INVALID_INPUT, "plain file name");
    ERR(sk_store_instructions(store, root, "{\"names\": [\"../AGENTS.md\"]}", &o),
        SK_INVALID_INPUT, "plain file name");
    ERR(sk_store_instructions(store, root, "{\"maxIncludeDepth\": 1000000000000}", &o),
        SK_INVALID_INPUT, "at most 64");
    ERR(sk_store_instructions(store, root, "[\"AGENTS.md\"]", &o), SK_INVALID_INPUT,
        "expected a JSON object");
    ERR(sk_store_instructions(store, "caf\xc3\x28", NULL, &o), SK_INVALID_UTF8, "dir");
    CHECK(o == NULL);
    /* What escapes or is no regular file is reported, not read. */
    OK(sk_store_instructions(store, root, "{\"names\": [\"AGENTS.md\", \"ZERO.md\", \"fifo\"]}", &o));
    CHECK(o && mj_len(mj_get(o, "files")) == 1);
    CHECK(o && mj_len(mj_get(o, "problems")) == 4);
    sk_string_free(o);
    CHECK_UNCHANGED(store, root, before);
    free(fifo);
    free(loop_a);
    free(loop_b);
    free(file);
    free(below);
    free(zero_md);
    sk_store_close(&store);
    free(root);
}

static void test_hostile_search(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    sk_session *s = NULL;
    OK(sk_session_create(store, "{\"id\": \"s-hostile\"}", &s));
    free(append(s, "{\"role\": \"user\", \"content\": \"parse_config fails\"}"));
    char *o = NULL;
    OK(sk_store_search(store, "{\"text\": \"parse_config\"}", &o));
    CHECK(o && mj_len(mj_get(o, "hits")) == 1);
    sk_string_free(o);
    o = NULL;
    char *before = store_listing(store, root);

    /* A NUL is an input error, not an error of the cache file. */
    ERR(sk_store_search(store, "{\"text\": \"parse\\u0000config\"}", &o), SK_INVALID_INPUT, "NUL");
    ERR(sk_store_search(store, "{\"text\": \"x\", \"role\": \"user\\u0000\"}", &o),
        SK_INVALID_INPUT, "role");
    ERR(sk_store_search(store, "{\"text\": \"x\", \"session\": \"s\\u0000\"}", &o),
        SK_INVALID_INPUT, "session");
    ERR(sk_store_search(store, "{\"text\": \"caf\xc3\x28\"}", &o), SK_INVALID_UTF8, "query_json");
    /* Past the limits: refused naming them. */
    size_t n = 20000;
    char *q = malloc(n + 32);
    int k = snprintf(q, 32, "{\"text\": \"");
    memset(q + k, 'x', n);
    strcpy(q + k + n, "\"}");
    ERR(sk_store_search(store, q, &o), SK_INVALID_INPUT, "16384");
    k = snprintf(q, 32, "{\"text\": \"");
    for (int i = 0; i < 300; i++) k += snprintf(q + k, n + 32 - (size_t)k, "w%d ", i);
    strcpy(q + k, "\"}");
    ERR(sk_store_search(store, q, &o), SK_INVALID_INPUT, "256");
    free(q);
    ERR(sk_store_search(store, "{\"text\": \"x\", \"limit\": -1}", &o), SK_INVALID_INPUT, "search query");
    CHECK(o == NULL);
    CHECK_UNCHANGED(store, root, before);
    OK(sk_session_close(&s));
    sk_store_close(&store);
    free(root);
}

static void test_hostile_compaction_policy(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    sk_session *s = NULL;
    OK(sk_session_create(store, NULL, &s));
    free(append(s, "{\"role\": \"user\", \"content\": \"hi\"}"));
    char *before = store_listing(store, root);
    char *plan = NULL;
    ERR(sk_session_select_compaction(s, "[10, 0, 0]", &plan), SK_INVALID_INPUT, "an array");
    ERR(sk_session_select_compaction(s, "10", &plan), SK_INVALID_INPUT, "compaction policy");
    ERR(sk_session_select_compaction(s, "\"x\"", &plan), SK_INVALID_INPUT, "compaction policy");
    ERR(sk_session_select_compaction(s, "{\"tokenBudget\": -1}", &plan), SK_INVALID_INPUT,
        "compaction policy");
    CHECK(plan == NULL);
    CHECK_UNCHANGED(store, root, before);
    OK(sk_session_close(&s));
    sk_store_close(&store);
    free(root);
}

/* Names other machines see, checked before any connection is tried. */
static void test_hostile_remote_options(void) {
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    char *before = store_listing(store, root);
    sk_remote *r = NULL;
    const char *url = "\"url\": \"host=/nonexistent/sk-socket-dir port=1 dbname=x\"";
    char opts[512];
    snprintf(opts, sizeof opts, "{%s, \"holder\": \"ci\\u0000\"}", url);
    ERR(sk_remote_open(store, opts, &r), SK_INVALID_INPUT, "lease holder name");
    snprintf(opts, sizeof opts, "{%s, \"holder\": \"ci\\n(forged)\"}", url);
    ERR(sk_remote_open(store, opts, &r), SK_INVALID_INPUT, "lease holder name");
    snprintf(opts, sizeof opts, "{%s, \"project\": \"p\\u001b[2J\"}", url);
    ERR(sk_remote_open(store, opts, &r), SK_INVALID_INPUT, "remote project name");
    snprintf(opts, sizeof opts, "{%s, \"holder\": \"\"}", url);
    ERR(sk_remote_open(store, opts, &r), SK_INVALID_INPUT, "lease holder name");
    CHECK(r == NULL);
    CHECK_UNCHANGED(store, root, before);
    sk_store_close(&store);
    free(root);
}

/* A lease taken on an id never pushed, then a pull: no local log, no session. */
static void test_remote_never_pushed(void) {
    char project[64];
    snprintf(project, sizeof project, "c-np-%ld-%ld", (long)getpid(), (long)time(NULL));
    char *root = fresh_dir("root");
    sk_store *store = open_store(root);
    sk_remote *r = open_remote(store, project, "laptop");
    if (!r) goto done;
    char *before = store_listing(store, root);
    char *lease = NULL, *o = NULL;
    OK(sk_remote_acquire(r, "never-pushed-1", &lease));
    ERR(sk_remote_pull(r, "never-pushed-1", &o), SK_NOT_FOUND, "never pushed");
    CHECK(o == NULL);
    /* Hostile ids reach neither the disk nor the server. */
    ERR(sk_remote_pull(r, "../x", &o), SK_INVALID_INPUT, "../x");
    ERR(sk_remote_acquire(r, "a\nb", &o), SK_INVALID_INPUT, "not a valid id");
    ERR(sk_remote_pull(r, "caf\xc3\x28", &o), SK_INVALID_UTF8, "session_id");
    CHECK(o == NULL);
    /* The refused pulls wrote nothing (listing the store, below, may write
       its index). */
    CHECK_UNCHANGED(store, root, before);
    OK(sk_store_list_sessions(store, &o));
    CHECK_STR(o, "[]");
    sk_string_free(o);
    o = NULL;
    OK(sk_remote_list(r, &o));
    CHECK(o && mj_len(o) == 1 && mj_int(mj_get(mj_at(o, 0), "pushedBytes")) == 0);
    sk_string_free(o);
    o = NULL;
    OK(sk_remote_release(r, lease));
    sk_string_free(lease);
    OK(sk_remote_list(r, &o));
    CHECK_STR(o, "[]");
    sk_string_free(o);
    o = NULL;
done:
    sk_remote_close(&r);
    sk_store_close(&store);
    free(root);
}

/* ---- main ------------------------------------------------------------------- */

/* A graph checkpointer's thread (LangGraph's saver, FORMAT.md §24) through
 * the C ABI: what Python and Node store, a C host reads, and the other way. */
static void test_checkpoints(void) {
    char *root = fresh_dir("root-checkpoints");
    sk_store *store = open_store(root);
    /* "WyJoaSJd" is ["hi"], "WyJoaSIsInlvIl0=" is ["hi","yo"]. */
    OK(sk_checkpoint_put(store, "thread/1",
                         "{\"checkpoint\": {\"id\": \"1\", \"v\": 4, \"channel_versions\": {\"m\": 1}},"
                         " \"metadata\": {\"step\": -1, \"run_id\": \"r1\"},"
                         " \"values\": [{\"channel\": \"m\", \"version\": 1,"
                         " \"value\": {\"type\": \"json\", \"bytes\": \"WyJoaSJd\"}}]}"));
    OK(sk_checkpoint_put(store, "thread/1",
                         "{\"checkpoint\": {\"id\": \"2\", \"v\": 4, \"channel_versions\": {\"m\": 2}},"
                         " \"metadata\": {\"step\": 0, \"run_id\": \"r2\"}, \"parentId\": \"1\","
                         " \"values\": [{\"channel\": \"m\", \"version\": 2,"
                         " \"value\": {\"type\": \"json\", \"bytes\": \"WyJoaSIsInlvIl0=\"}}]}"));
    OK(sk_checkpoint_put_writes(store, "thread/1",
                                "{\"checkpointId\": \"2\", \"taskId\": \"t\", \"writes\":"
                                " [{\"channel\": \"__interrupt__\", \"value\": {\"type\": \"json\", \"bytes\": \"MQ==\"}}]}"));
    char *got = NULL;
    OK(sk_checkpoint_get(store, "thread/1", "", NULL, &got));
    char *id = mj_str(mj_get(got, "id"));
    CHECK_STR(id, "2");
    free(id);
    char *parent = mj_str(mj_get(got, "parentId"));
    CHECK_STR(parent, "1");
    free(parent);
    char *bytes = mj_str(mj_get(mj_get(mj_get(got, "values"), "m"), "bytes"));
    CHECK_STR(bytes, "WyJoaSIsInlvIl0=");
    free(bytes);
    char *idx = mj_str(mj_get(mj_at(mj_get(got, "writes"), 0), "idx"));
    CHECK(mj_len(mj_get(got, "writes")) == 1);
    free(idx);
    sk_string_free(got);
    OK(sk_checkpoint_get(store, "thread/1", "", "9", &got));
    CHECK(mj_is_null(got));
    sk_string_free(got);

    char *list = NULL;
    OK(sk_checkpoint_list(store, "{\"threadId\": \"thread/1\", \"filter\": {\"step\": -1}}", &list));
    CHECK(mj_len(list) == 1);
    sk_string_free(list);
    OK(sk_checkpoint_copy_thread(store, "thread/1", "thread/2"));
    OK(sk_checkpoint_delete_for_runs(store, "[\"r1\"]"));
    OK(sk_checkpoint_list(store, "{\"threadId\": \"thread/2\"}", &list));
    CHECK(mj_len(list) == 1);
    sk_string_free(list);
    char *hist = NULL;
    OK(sk_checkpoint_delta_history(store, "thread/1", "", NULL, "[\"m\"]", &hist));
    CHECK(mj_len(hist) == 1);
    sk_string_free(hist);
    char *v = NULL;
    OK(sk_next_channel_version("3", &v));
    CHECK(strncmp(v, "00000000000000000000000000000004.", 33) == 0);
    sk_string_free(v);

    /* Bad input names what was wrong and creates nothing. */
    ERR(sk_checkpoint_put(store, "thread/3", "{\"checkpoint\": {}}"), SK_INVALID_INPUT, "\"id\"");
    ERR(sk_checkpoint_put(store, "thread/3", "{\"checkpoint\": {\"id\": \"1\"}, \"values\": "
                                             "[{\"channel\": \"m\", \"version\": 1, \"value\": {\"type\": \"json\", \"bytes\": \"!\"}}]}"),
        SK_INVALID_INPUT, "base64");
    ERR(sk_checkpoint_prune(store, "[\"thread/1\"]", "some"), SK_INVALID_INPUT, "keep_latest");
    ERR(sk_checkpoint_put(NULL, "t", "{}"), SK_NULL_ARGUMENT, "store");
    ERR(sk_checkpoint_get(store, "t", "", NULL, NULL), SK_NULL_ARGUMENT, "out_json");
    OK(sk_checkpoint_list(store, "{\"threadId\": \"thread/3\"}", &list));
    CHECK(mj_len(list) == 0);
    sk_string_free(list);

    /* Deleting a thread moves it to the trash, from which it comes back. */
    OK(sk_checkpoint_prune(store, "[\"thread/2\"]", "delete"));
    OK(sk_checkpoint_list(store, "{\"threadId\": \"thread/2\"}", &list));
    CHECK(mj_len(list) == 0);
    sk_string_free(list);
    char *sid = NULL, *entry = NULL;
    OK(sk_conversation_session_id("thread/2", &sid));
    OK(sk_store_restore_session(store, sid, &entry));
    sk_string_free(entry);
    sk_string_free(sid);
    OK(sk_checkpoint_list(store, "{\"threadId\": \"thread/2\"}", &list));
    CHECK(mj_len(list) == 1);
    sk_string_free(list);
    OK(sk_checkpoint_delete_thread(store, "thread/2"));
    sk_store_close(&store);
    free(root);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <tests/fixtures directory>\n", argv[0]);
        return 2;
    }
    g_fixtures = argv[1];
    char *manifest_path = path_join(g_fixtures, "manifest.json");
    g_manifest = read_file(manifest_path, NULL);
    free(manifest_path);
    if (!g_manifest) {
        fprintf(stderr, "cannot read %s/manifest.json\n", g_fixtures);
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(g_base, sizeof g_base, "%s/sk-ctest-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_base)) {
        perror("mkdtemp");
        return 2;
    }

    run("version and status names", test_version);
    run("store open, info, close", test_store);
    run("session lifecycle and views", test_session_lifecycle);
    run("settings, instruction files, memory", test_settings_instructions_memory);
    run("shared writers and conversation ids", test_shared_writers);
    run("append groups, a result per group", test_append_groups);
    run("responses items, undo turns, erase, file-history upkeep", test_more_operations);
    run("fork", test_fork);
    run("full-text search", test_search);
    run("subagents", test_subagents);
    run("compaction select and apply", test_compaction);
    run("file tracking, undo, rewind, gc", test_file_history);
    run("look-up by id prefix, doctor", test_lookup_and_doctor);
    run("NULL for every pointer argument", test_null_arguments);
    run("bad input leaves the store unchanged", test_bad_input);
    run("a missing thing is SK_NOT_FOUND", test_missing_is_not_found);
    run("the system's error number survives", test_last_errno);
    run("two threads share a store and a session", test_threads);
    run("defaults and limits the header states", test_defaults_and_limits);
    run("a forked child may read, not write", test_forked_child);
    run("import transcripts, export a session", test_import_export);
    run("graph checkpoints (LangGraph's saver)", test_checkpoints);
    run("bad input: settings sizes, depths and hostile keys", test_bad_settings_sizes_and_keys);
    run("bad input: memory names, contents and special files", test_bad_memory_input);
    run("bad input: import options, special files, relative projects", test_bad_import_input);
    run("fixtures: logs replayed", test_fixture_logs);
    run("fixtures: golden store replayed", test_fixture_golden_store);
    run("remote: NULL for every pointer argument", test_remote_null_arguments);
    run("hostile input: instruction files", test_hostile_instructions);
    run("hostile input: search queries", test_hostile_search);
    run("hostile input: compaction policies", test_hostile_compaction_policy);
    run("hostile input: remote project and holder names", test_hostile_remote_options);
    g_pg = getenv("SESSIONKIT_TEST_PG");
    const char *require_pg = getenv("SESSIONKIT_REQUIRE_PG");
    if (g_pg && *g_pg) {
        run("remote: two machines push, pull, lease, follow", test_remote_two_machines);
        run("remote: a lease on a session never pushed makes no local session",
            test_remote_never_pushed);
    } else if (require_pg && *require_pg && strcmp(require_pg, "0") != 0) {
        /* The test command (SESSIONKIT_REQUIRE_PG=1) fails what it cannot run;
           a value other than 1 or 0 fails too, as in the Rust, Python and Node
           suites. */
        if (strcmp(require_pg, "1") == 0)
            printf("FAILED remote: two machines (SESSIONKIT_REQUIRE_PG=1, and SESSIONKIT_TEST_PG "
                   "is not set; tests/pg/server.sh starts a server)\n");
        else
            printf("FAILED remote: SESSIONKIT_REQUIRE_PG must be 1 or 0, not \"%s\"\n",
                   require_pg);
        n_failed++;
    } else {
        printf("skip   remote: two machines (SESSIONKIT_TEST_PG is not set; "
               "tests/pg/server.sh starts a server)\n");
    }

    free(g_manifest);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_base);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_base);
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed == 0 ? 0 : 1;
}
