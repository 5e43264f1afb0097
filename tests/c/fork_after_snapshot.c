/* fork() right after a file-history snapshot, again and again: the child makes
 * read-only calls through the inherited handles (one of them reads the file
 * history through libgit2) and exits. A snapshot may have just started the
 * background pack merge, so the fork often lands while that thread is inside
 * libgit2. A child that does not finish within 10 seconds counts as hung (its
 * stack is printed with gdb when it is installed). At the end: the pack merge
 * must have run, and a gc, so that a run under valgrind or LeakSanitizer
 * checks both pack writers for leaks.
 *
 * Under valgrind, this process checks its own leaks at the end (a client
 * request), and tests/c/run.sh turns valgrind's leak errors off: a forked
 * child's leak check is meaningless. The child has only the forking thread, so
 * whatever the parent's other threads hold (the library's kept background
 * thread: its start-up closure, its thread-local state, libgit2's per-thread
 * error) is reachable from no stack valgrind knows in the child, and is
 * reported "definitely lost" there, which makes the child exit with valgrind's
 * error code: exit status 1, the same as a failed first call. That was the
 * child "failing its first read" about once in 40 forks while the merge ran on
 * a thread of its own, and in every fork once the thread was kept.
 *   fork_after_snapshot <iterations>      (tests/c/run.sh runs a short form;
 *   SESSIONKIT_FORK_ITERATIONS=20000 bash tests/c/run.sh a long one) */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <valgrind/memcheck.h>

#include "sessionkit.h"

static int child_reads(sk_store *store, sk_session *s) {
    char *out = NULL;
    if (sk_session_info(s, &out) != SK_OK) return 1;
    sk_string_free(out);
    if (sk_session_active_path(s, &out) != SK_OK) return 2;
    sk_string_free(out);
    if (sk_store_list_sessions(store, &out) != SK_OK) return 3;
    sk_string_free(out);
    if (sk_store_file_history_sizes(store, &out) != SK_OK) return 4;
    sk_string_free(out);
    if (sk_session_close(&s) != SK_OK) return 5;
    return 0;
}

/* Wait for `pid` up to `seconds`; 1 if it finished, 0 if it hung. */
static int wait_for(pid_t pid, int seconds, int *status) {
    for (int i = 0; i < seconds * 1000; i++) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid) return 1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}

int main(int argc, char **argv) {
    long iterations = argc > 1 ? strtol(argv[1], NULL, 10) : 200;
    char base[] = "/tmp/sk-fork-XXXXXX";
    if (!mkdtemp(base)) return perror("mkdtemp"), 2;
    char root[64], home[64], file[96], options[160];
    snprintf(root, sizeof root, "%s/project", base);
    snprintf(home, sizeof home, "%s/home", base);
    snprintf(file, sizeof file, "%s/a.txt", root);
    mkdir(root, 0700);
    snprintf(options, sizeof options, "{\"home\": \"%s\"}", home);
    sk_store *store = NULL;
    sk_session *s = NULL;
    if (sk_store_open(root, options, &store) != SK_OK || sk_session_create(store, NULL, &s) != SK_OK) {
        fprintf(stderr, "setup: %s\n", sk_last_error());
        return 2;
    }
    long hung = 0, failed = 0;
    for (long i = 0; i < iterations; i++) {
        FILE *f = fopen(file, "w");
        if (!f) return perror(file), 2;
        fprintf(f, "version %ld\n", i);
        fclose(f);
        char *snap = NULL;
        if (sk_session_after_edit(s, "[\"a.txt\"]", &snap) != SK_OK) {
            fprintf(stderr, "snapshot %ld: %s\n", i, sk_last_error());
            return 2;
        }
        sk_string_free(snap);
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
            int rc = child_reads(store, s);
            if (rc) fprintf(stderr, "child call %d: %s\n", rc, sk_last_error());
            _exit(rc);
        }
        if (pid < 0) return perror("fork"), 2;
        int status = 0;
        if (!wait_for(pid, 10, &status)) {
            hung++;
            fprintf(stderr, "iteration %ld: child %d hung\n", i, (int)pid);
            char cmd[256];
            snprintf(cmd, sizeof cmd,
                     "command -v gdb >/dev/null && gdb -p %d -batch -ex 'thread apply all bt' 2>&1 | grep '^#\\|^Thread' >&2",
                     (int)pid);
            if (system(cmd) < 0) perror("gdb");
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            failed++;
            fprintf(stderr, "iteration %ld: child status %#x\n", i, (unsigned)status);
        }
    }
    /* The merge runs on its own thread: give it time. */
    char pattern[128];
    snprintf(pattern, sizeof pattern, "%s/projects/*/file-history/.git/objects/pack/*.idx", home);
    size_t packs = 0;
    for (int tries = 0; tries < 200; tries++) {
        glob_t g;
        packs = glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
        globfree(&g);
        if (packs > 0 && packs < 16) break;
        struct timespec ms = {0, 50000000};
        nanosleep(&ms, NULL);
    }
    if (iterations >= 20 && (packs == 0 || packs >= 16)) {
        fprintf(stderr, "no pack merge ran: %zu packs\n", packs);
        failed++;
    }
    char *report = NULL;
    if (sk_store_gc(store, &report) != SK_OK) {
        fprintf(stderr, "gc: %s\n", sk_last_error());
        failed++;
    }
    sk_string_free(report);
    sk_session_close(&s);
    sk_store_close(&store);
    if (RUNNING_ON_VALGRIND) {
        unsigned long leaked = 0, dubious = 0, reachable = 0, suppressed = 0;
        VALGRIND_DO_LEAK_CHECK;
        VALGRIND_COUNT_LEAKS(leaked, dubious, reachable, suppressed);
        (void)reachable;
        (void)suppressed;
        if (leaked || dubious) {
            fprintf(stderr, "leaks: %lu bytes definitely lost, %lu possibly\n", leaked, dubious);
            failed++;
        }
    }
    char rm[96];
    snprintf(rm, sizeof rm, "rm -rf '%s'", base);
    if (system(rm) != 0) fprintf(stderr, "could not remove %s\n", base);
    printf("fork after snapshot: %ld forks, %ld hung, %ld failed\n", iterations, hung, failed);
    return hung || failed ? 1 : 0;
}
