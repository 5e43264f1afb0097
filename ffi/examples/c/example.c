/* A host in C: open the store of a project, write a session, read it back.
 *   cc example.c $(pkg-config --cflags --libs sessionkit) && ./a.out /path/to/project
 * Every handle and string starts NULL and is released once, at `done`: closing
 * a handle sets it to NULL, and a freed string is set to NULL by the caller, so
 * a failure at any step releases exactly what is still held. */
#include <stdio.h>

#include "sessionkit.h"

#define TRY(call)                                                                  \
    do {                                                                           \
        sk_status st_ = (call);                                                    \
        if (st_ != SK_OK) {                                                        \
            fprintf(stderr, "%s: %s\n", sk_status_name(st_), sk_last_error());     \
            goto done;                                                             \
        }                                                                          \
    } while (0)

/* Free a library string and forget it, so that `done` does not free it again. */
#define FREE_STRING(s)                                                             \
    do {                                                                           \
        sk_string_free(s);                                                         \
        (s) = NULL;                                                                \
    } while (0)

int main(int argc, char **argv) {
    int rc = 1;
    sk_store *store = NULL;
    sk_session *session = NULL;
    sk_view *view = NULL;
    char *msg = NULL, *id = NULL, *path = NULL;
    /* NULL options: the home is $SESSIONKIT_HOME, else ~/.sessionkit. */
    TRY(sk_store_open(argc > 1 ? argv[1] : ".", NULL, &store));
    TRY(sk_session_create(store, "{\"title\": \"Fix the test\"}", &session));
    TRY(sk_session_append(session, "{\"role\": \"user\", \"content\": \"Fix the failing test\"}", &msg));
    FREE_STRING(msg);
    TRY(sk_session_append(session, "{\"role\": \"assistant\", \"content\": \"Looking at it.\"}", &msg));
    FREE_STRING(msg);
    TRY(sk_session_id(session, &id));
    TRY(sk_session_close(&session)); /* session is NULL now */
    TRY(sk_store_read_session(store, id, &view));
    TRY(sk_view_active_path(view, &path));
    printf("%s\n", path);
    rc = 0;
done:
    sk_string_free(msg);
    sk_string_free(id);
    sk_string_free(path);
    sk_view_close(&view);
    sk_session_close(&session);
    sk_store_close(&store);
    return rc;
}
