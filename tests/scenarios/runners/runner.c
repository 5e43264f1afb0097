/* The C runner of the scenario protocol (docs/FORMAT.md §21), through the C ABI
 * of include/sessionkit.h only. Each request line is read with the tests' tiny
 * JSON reader (tests/c/minijson.h): the op, and the raw text of each argument,
 * which the C ABI takes as JSON as it is. Built by tests/scenarios/run.sh:
 *
 *   gcc -std=c11 -Iinclude -Itests/c tests/scenarios/runners/runner.c -lsessionkit
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "minijson.h"
#include "sessionkit.h"

#define MAX_HANDLES 256

static sk_store *store;
static struct {
    char *id;
    sk_session *h;
} sessions[MAX_HANDLES];
static size_t n_sessions;
static struct {
    char *session_id;
    char *agent_id;
    sk_subagent *h;
} subagents[MAX_HANDLES];
static size_t n_subagents;

/* -- answers --------------------------------------------------------------- */

static void put_json_string(const char *s) {
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p == '\n') fputs("\\n", stdout);
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

static void answer_ok(const char *json) { printf("{\"ok\":%s}\n", json ? json : "null"); }

static void answer_ok_string(const char *s) {
    fputs("{\"ok\":", stdout);
    put_json_string(s);
    fputs("}\n", stdout);
}

static void answer_error(const char *code, const char *message) {
    printf("{\"error\":{\"code\":\"%s\",\"message\":", code);
    put_json_string(message ? message : "");
    fputs("}}\n", stdout);
}

/* Answer a call's status: the JSON it put in *out (freed), or its error. A
 * pointer, since the call that fills it is in the same argument list. */
static void answer_json(sk_status st, char **out) {
    if (st == SK_OK) answer_ok(*out);
    else answer_error(sk_status_name(st), sk_last_error());
    sk_string_free(*out);
    *out = NULL;
}

static void answer_null(sk_status st) {
    char *none = NULL;
    answer_json(st, &none);
}

/* -- arguments --------------------------------------------------------------- */

/* The raw JSON text of argument `key` (malloc'd), or NULL when absent. */
static char *arg_json(const char *args, const char *key) {
    const char *v = mj_get(args, key);
    const char *end = v ? mj_skip(v) : NULL;
    if (!end) return NULL;
    size_t n = (size_t)(end - v);
    char *out = malloc(n + 1);
    memcpy(out, v, n);
    out[n] = 0;
    return out;
}

/* The decoded string argument `key` (malloc'd), or NULL when absent or not a string. */
static char *arg_str(const char *args, const char *key) { return mj_get_str(args, key); }

static sk_session *find_session(const char *id) {
    for (size_t i = 0; id && i < n_sessions; i++)
        if (strcmp(sessions[i].id, id) == 0) return sessions[i].h;
    return NULL;
}

static sk_subagent *find_subagent(const char *sid, const char *aid) {
    for (size_t i = 0; sid && aid && i < n_subagents; i++)
        if (strcmp(subagents[i].session_id, sid) == 0 && strcmp(subagents[i].agent_id, aid) == 0)
            return subagents[i].h;
    return NULL;
}

/* Keep a newly opened session and answer {"id"}. */
static void keep_session(sk_status st, sk_session *s) {
    if (st != SK_OK) {
        answer_error(sk_status_name(st), sk_last_error());
        return;
    }
    char *id = NULL;
    sk_session_id(s, &id);
    if (n_sessions == MAX_HANDLES) {
        sk_session_close(&s);
        answer_error("INVALID_INPUT", "too many open sessions in the C runner");
        sk_string_free(id);
        return;
    }
    sessions[n_sessions].id = strdup(id);
    sessions[n_sessions].h = s;
    n_sessions++;
    printf("{\"ok\":{\"id\":");
    put_json_string(id);
    printf("}}\n");
    sk_string_free(id);
}

static void close_subagents_of(const char *sid) {
    size_t kept = 0;
    for (size_t i = 0; i < n_subagents; i++) {
        if (sid && strcmp(subagents[i].session_id, sid) != 0) {
            subagents[kept++] = subagents[i];
            continue;
        }
        sk_subagent_close(&subagents[i].h);
        free(subagents[i].session_id);
        free(subagents[i].agent_id);
    }
    n_subagents = kept;
}

/* A view op: load the session (or subagent) without a lock and answer `which` of it. */
static void view_op(const char *sid, const char *aid, const char *which) {
    sk_view *v = NULL;
    sk_status st = aid ? sk_store_read_subagent(store, sid, aid, &v) : sk_store_read_session(store, sid, &v);
    if (st != SK_OK) {
        answer_null(st);
        return;
    }
    char *out = NULL;
    if (strcmp(which, "ui") == 0) {
        answer_json(sk_view_ui(v, &out), &out);
    } else if (strcmp(which, "report") == 0) {
        st = sk_view_info(v, &out);
        if (st == SK_OK) {
            char *report = arg_json(out, "report");
            answer_ok(report);
            free(report);
            sk_string_free(out);
        } else {
            answer_null(st);
        }
    } else {
        answer_json(sk_view_active_path(v, &out), &out);
    }
    sk_view_close(&v);
}

/* A graph checkpoint op (FORMAT.md §24): its arguments are the JSON the C ABI takes. */
static void checkpoint_op(const char *op, const char *args) {
    char *thread = arg_str(args, "thread");
    char *out = NULL;
    if (strcmp(op, "checkpoint_put") == 0) {
        char *put = arg_json(args, "put");
        answer_null(sk_checkpoint_put(store, thread, put));
        free(put);
    } else if (strcmp(op, "checkpoint_put_writes") == 0) {
        char *writes = arg_json(args, "writes");
        answer_null(sk_checkpoint_put_writes(store, thread, writes));
        free(writes);
    } else if (strcmp(op, "checkpoint_get") == 0) {
        char *ns = arg_str(args, "ns");
        char *id = arg_str(args, "checkpointId"); /* NULL: the newest */
        answer_json(sk_checkpoint_get(store, thread, ns ? ns : "", id, &out), &out);
        free(ns);
        free(id);
    } else if (strcmp(op, "checkpoint_list") == 0) {
        char *query = arg_json(args, "query"); /* NULL: every checkpoint */
        answer_json(sk_checkpoint_list(store, query, &out), &out);
        free(query);
    } else if (strcmp(op, "checkpoint_copy_thread") == 0) {
        char *source = arg_str(args, "source");
        char *target = arg_str(args, "target");
        answer_null(sk_checkpoint_copy_thread(store, source, target));
        free(source);
        free(target);
    } else if (strcmp(op, "checkpoint_prune") == 0) {
        char *threads = arg_json(args, "threads");
        char *strategy = arg_str(args, "strategy");
        answer_null(sk_checkpoint_prune(store, threads, strategy));
        free(threads);
        free(strategy);
    } else if (strcmp(op, "checkpoint_delete_for_runs") == 0) {
        char *runs = arg_json(args, "runs");
        answer_null(sk_checkpoint_delete_for_runs(store, runs));
        free(runs);
    } else if (strcmp(op, "checkpoint_delete_thread") == 0) {
        answer_null(sk_checkpoint_delete_thread(store, thread));
    } else {
        answer_error("UNSUPPORTED_OP", op);
    }
    free(thread);
}

/* -- the ops ----------------------------------------------------------------- */

static void run(const char *op, const char *args) {
    char *sid = arg_str(args, "session");
    char *aid = arg_str(args, "agent");
    char *msg_id = arg_str(args, "message");
    char *options = arg_json(args, "options");
    char *out = NULL;
    sk_session *s = NULL;

    if (strcmp(op, "open_store") == 0) {
        char *project = arg_str(args, "project");
        sk_status st = sk_store_open(project, options, &store);
        if (st == SK_OK) {
            sk_store_info(store, &out);
            char *code = arg_str(out, "projectCode");
            printf("{\"ok\":{\"projectCode\":");
            put_json_string(code ? code : "");
            printf("}}\n");
            free(code);
            sk_string_free(out);
        } else {
            answer_null(st);
        }
        free(project);
    } else if (!store) {
        answer_error("INVALID_INPUT", "no store: send open_store first");
    } else if (strcmp(op, "create_session") == 0) {
        sk_status st = sk_session_create(store, options, &s);
        keep_session(st, s);
    } else if (strcmp(op, "open_session") == 0) {
        sk_status st = sk_session_open(store, sid, &s);
        keep_session(st, s);
    } else if (strcmp(op, "fork_session") == 0) {
        sk_status st = sk_session_fork(store, sid, options, &s);
        keep_session(st, s);
    } else if (strcmp(op, "rename_session") == 0) {
        char *title = arg_str(args, "title");
        answer_json(sk_store_rename_session(store, sid, title, &out), &out);
        free(title);
    } else if (strcmp(op, "delete_session") == 0) {
        answer_null(sk_store_delete_session(store, sid));
    } else if (strcmp(op, "list_trash") == 0) {
        answer_json(sk_store_list_trash(store, &out), &out);
    } else if (strcmp(op, "restore_session") == 0) {
        answer_json(sk_store_restore_session(store, sid, &out), &out);
    } else if (strcmp(op, "gc") == 0) {
        answer_json(sk_store_gc(store, &out), &out);
    } else if (strcmp(op, "doctor") == 0) {
        answer_json(sk_store_doctor(store, options, &out), &out);
    } else if (strcmp(op, "list_sessions") == 0) {
        answer_json(sk_store_list_sessions(store, &out), &out);
    } else if (strcmp(op, "session_entry") == 0) {
        answer_json(sk_store_session_entry(store, sid, &out), &out);
    } else if (strcmp(op, "list_subagents") == 0) {
        answer_json(sk_store_list_subagents(store, sid, &out), &out);
    } else if (strcmp(op, "model_view") == 0) {
        answer_json(sk_store_model_view(store, sid, options, &out), &out);
    } else if (strcmp(op, "active_path") == 0) {
        view_op(sid, NULL, "active");
    } else if (strcmp(op, "ui_view") == 0) {
        view_op(sid, NULL, "ui");
    } else if (strcmp(op, "read_report") == 0) {
        view_op(sid, NULL, "report");
    } else if (strcmp(op, "subagent_active_path") == 0) {
        view_op(sid, aid, "active");
    } else if (strncmp(op, "checkpoint_", 11) == 0) {
        checkpoint_op(op, args);
    } else if (strncmp(op, "subagent_", 9) == 0) {
        sk_subagent *sub = find_subagent(sid, aid);
        if (!sub) {
            answer_error("INVALID_INPUT", "subagent not open in this runner");
        } else if (strcmp(op, "subagent_append") == 0) {
            char *m = arg_json(args, "message");
            answer_json(sk_subagent_append(sub, m, &out), &out);
            free(m);
        } else if (strcmp(op, "subagent_finish") == 0) {
            char *result = arg_json(args, "result");
            answer_null(sk_subagent_finish(sub, result, mj_is_true(mj_get(args, "failed"))));
            free(result);
        } else {
            answer_error("UNSUPPORTED_OP", op);
        }
    } else if ((s = find_session(sid)) == NULL) {
        if (strcmp(op, "close_session") == 0 || strcmp(op, "append") == 0 || strcmp(op, "append_batch") == 0 ||
            strcmp(op, "user_input") == 0 || strcmp(op, "update_state") == 0 || strcmp(op, "before_edit") == 0 ||
            strcmp(op, "after_edit") == 0 || strcmp(op, "select_compaction") == 0 ||
            strcmp(op, "apply_compaction") == 0 || strcmp(op, "resume_at") == 0 || strcmp(op, "rewind_plan") == 0 ||
            strcmp(op, "rewind") == 0 || strcmp(op, "spawn_subagent") == 0)
            answer_error("INVALID_INPUT", "session not open in this runner");
        else
            answer_error("UNSUPPORTED_OP", op);
    } else if (strcmp(op, "close_session") == 0) {
        close_subagents_of(sid);
        size_t i = 0;
        while (sessions[i].h != s) i++;
        free(sessions[i].id);
        memmove(&sessions[i], &sessions[i + 1], (n_sessions - i - 1) * sizeof sessions[0]);
        n_sessions--;
        answer_null(sk_session_close(&s));
    } else if (strcmp(op, "append") == 0 || strcmp(op, "user_input") == 0) {
        char *m = arg_json(args, "message");
        sk_status st = op[0] == 'a' ? sk_session_append(s, m, &out) : sk_session_user_input(s, m, &out);
        answer_json(st, &out);
        free(m);
    } else if (strcmp(op, "append_batch") == 0) {
        char *m = arg_json(args, "messages");
        answer_json(sk_session_append_batch(s, m, &out), &out);
        free(m);
    } else if (strcmp(op, "update_state") == 0) {
        char *set = arg_json(args, "set");
        answer_json(sk_session_update_state(s, set, &out), &out);
        free(set);
    } else if (strcmp(op, "before_edit") == 0 || strcmp(op, "after_edit") == 0) {
        char *paths = arg_json(args, "paths");
        sk_status st = op[0] == 'b' ? sk_session_before_edit(s, paths, &out) : sk_session_after_edit(s, paths, &out);
        if (st == SK_OK) answer_ok_string(out);
        else answer_null(st);
        sk_string_free(out);
        free(paths);
    } else if (strcmp(op, "select_compaction") == 0) {
        char *policy = arg_json(args, "policy");
        answer_json(sk_session_select_compaction(s, policy, &out), &out);
        free(policy);
    } else if (strcmp(op, "apply_compaction") == 0) {
        char *replaces = arg_json(args, "replaces");
        char *summary = arg_json(args, "summary");
        answer_json(sk_session_apply_compaction(s, replaces, summary, &out), &out);
        free(replaces);
        free(summary);
    } else if (strcmp(op, "resume_at") == 0) {
        answer_null(sk_session_resume_at(s, msg_id));
    } else if (strcmp(op, "rewind_plan") == 0) {
        answer_json(sk_session_rewind_plan(s, msg_id, &out), &out);
    } else if (strcmp(op, "rewind") == 0) {
        char *mode = arg_str(args, "mode");
        answer_json(sk_session_rewind(s, msg_id, mode, mj_is_true(mj_get(args, "force")), &out), &out);
        free(mode);
    } else if (strcmp(op, "spawn_subagent") == 0) {
        char *meta = arg_json(args, "meta");
        sk_subagent *sub = NULL;
        sk_status st = sk_session_spawn_subagent(s, aid, meta, &sub);
        if (st == SK_OK && n_subagents < MAX_HANDLES) {
            char *id = NULL;
            sk_subagent_id(sub, &id);
            subagents[n_subagents].session_id = strdup(sid);
            subagents[n_subagents].agent_id = strdup(id);
            subagents[n_subagents].h = sub;
            n_subagents++;
            printf("{\"ok\":{\"id\":");
            put_json_string(id);
            printf("}}\n");
            sk_string_free(id);
        } else if (st == SK_OK) {
            sk_subagent_close(&sub);
            answer_error("INVALID_INPUT", "too many open subagents in the C runner");
        } else {
            answer_null(st);
        }
        free(meta);
    } else {
        answer_error("UNSUPPORTED_OP", op);
    }
    free(sid);
    free(aid);
    free(msg_id);
    free(options);
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        if (line[0] == '\n') continue;
        char *op = mj_get_str(line, "op");
        const char *args = mj_get(line, "args");
        if (!op) answer_error("INVALID_INPUT", "request has no op");
        else run(op, args ? args : "{}");
        free(op);
        fflush(stdout);
    }
    free(line);
    /* End of input: subagents first, then sessions in the order opened. */
    close_subagents_of(NULL);
    int rc = 0;
    for (size_t i = 0; i < n_sessions; i++) {
        if (sk_session_close(&sessions[i].h) != SK_OK) {
            fprintf(stderr, "runner.c: closing %s: %s\n", sessions[i].id, sk_last_error());
            rc = 1;
        }
        free(sessions[i].id);
    }
    sk_store_close(&store);
    return rc;
}
