/*
 * sessionkit: the C ABI of the session store for coding agents.
 *
 * The header include/sessionkit.h is generated from the sessionkit-ffi crate
 * (ffi/) by cbindgen: this text is the crate's documentation, and each
 * function's comment is the function's.
 *
 * Requirements
 * ------------
 * The header needs C99 or C++11, or later (it includes <stdbool.h> and
 * <stdint.h> and uses // comments). `pkg-config --cflags --libs sessionkit`
 * gives the flags; add `--static` for libsessionkit.a, which also needs the
 * system libraries it lists.
 *
 * Conventions
 * -----------
 * Handles: sk_store, sk_session, sk_subagent, sk_view, sk_remote and
 *   sk_follower are opaque. Each is released by its *_close(&handle), which
 *   sets the caller's pointer to NULL; *_close(NULL) and
 *   *_close(&null_handle) do nothing. A closed handle used
 *   again is therefore NULL and gives SK_NULL_ARGUMENT. Using a stale copy of
 *   a closed pointer is undefined behaviour.
 * Status: every function that can fail returns an sk_status (0 = SK_OK; the
 *   numbers are fixed, see below). Out-parameters are written only on SK_OK.
 * Strings: arguments are NUL-terminated UTF-8 (SK_INVALID_UTF8 otherwise);
 *   messages, options and results are JSON text. Strings returned through a
 *   `char **` out-parameter belong to the caller and are freed with
 *   sk_string_free, and with nothing else.
 * Nullability: every pointer argument is required unless its documentation
 *   says it may be NULL (options, some ids): NULL gives SK_NULL_ARGUMENT. This
 *   includes every out-parameter: NULL is an error, never a way to ignore a
 *   result; pass a variable and free what it receives.
 * Errors: sk_last_error() returns a message for the last failed call on the
 *   calling thread, "<function>: <what was wrong>", borrowed and valid until
 *   the next status-returning call on that thread; every status-returning call
 *   clears it at its start. sk_last_errno() returns the operating system's
 *   error number behind it (ENOSPC, EACCES, ...), 0 if none. sk_version,
 *   sk_abi_version, sk_status_name, sk_last_error, sk_last_errno,
 *   sk_string_free and the *_close functions returning void do not touch it.
 * Panics: a panic inside the library never unwinds into C: the call returns
 *   SK_INTERNAL and the last error holds the panic's message and source
 *   location. Nothing is printed: at its first call the library installs a
 *   panic hook in its own copy of the Rust runtime, which keeps panics inside
 *   calls quiet and passes any other (one on a background thread) to Rust's
 *   default hook, which prints it to stderr. A Rust program that loads the
 *   library keeps its own runtime and hook, which the library does not touch.
 *
 * Store and defaults
 * ------------------
 * Home: sk_store_open keeps every project's sessions under one home directory:
 *   the `home` option, else $SESSIONKIT_HOME (if set and not empty), else
 *   $HOME/.sessionkit. A relative home is resolved against the current
 *   directory once, when the store is opened (a later chdir() does not move
 *   the store); an empty `home` option is SK_INVALID_INPUT. The sessions of a
 *   project are in <home>/projects/<code>/ (sk_store_info names it), created
 *   with mode 0700, files 0600.
 * Defaults: NULL or "" options are {"durability": "onSync", "maxSessions": 0,
 *   "trashGraceSecs": 604800, "busyTimeoutMs": 5000, "blobThreshold": 262144,
 *   "maxRecordBytes": 4194304}: appends are fsynced by sk_session_sync, and every session is
 *   kept. A host that sets maxSessions opts in to retention: creating or
 *   forking a session then moves the least recently updated sessions of the
 *   project beyond maxSessions to the trash (their logs and subagents; their
 *   file-history branches are kept), except sessions open for writing. The ids
 *   moved are returned once, in the "pruned" array of sk_session_info on the
 *   new session's handle; sk_store_list_trash lists them,
 *   sk_store_restore_session brings one back, and sk_store_gc purges those
 *   trashed more than trashGraceSecs ago.
 * Busy: a session (or subagent) open for writing holds an exclusive lock on
 *   its log. sk_session_open, sk_session_open_subagent, sk_store_rename_session
 *   and sk_store_delete_session try to take it for about 63 ms (tries 0.1 ms
 *   apart, doubling up to 4 ms) before they return SK_BUSY, so that a writer
 *   that is just closing does not make them fail; pruning tries each old
 *   session the same way and skips it if it stays busy. A shared writer
 *   (sk_session_open_shared, sk_session_open_conversation) holds the lock
 *   only for the moment of each write, waiting up to busyTimeoutMs for it,
 *   so any number of them, in any threads and processes, write one session. Index updates wait, without a
 *   time limit, for the project's lock file, which another process holds only
 *   while it writes the index.
 *
 * Limits
 * ------
 * Ids: session and subagent ids are 1 to 128 characters of A-Z a-z 0-9 . _ -,
 *   not starting with '.'; message ids 1 to 128 characters without control
 *   characters. Others are SK_INVALID_INPUT.
 * Sizes: a message's `content` or `contentParams` whose JSON is over
 *   blobThreshold bytes is stored once beside the log, so its size is bounded
 *   only by memory; the rest of a message's log line must fit in
 *   maxRecordBytes (SK_INVALID_INPUT otherwise).
 * Nesting: a log line holds at most 100 levels of JSON arrays and objects. A
 *   message object counts as one level; a patch, a state update, subagent
 *   metadata and a subagent result sit one level inside their record, so they
 *   may nest 99. Deeper values are SK_INVALID_INPUT and nothing is written.
 * Titles: an index title keeps the first 100 characters.
 * Errors: a last-error message over 16 KiB keeps its start and its end.
 *
 * Threads, fork() and unloading
 * -----------------------------
 * Threads: sk_store, sk_session, sk_subagent, sk_view, sk_remote and
 *   sk_follower may each be shared by any number of threads at once (the
 *   calls on one sk_remote or sk_follower take turns on its connection);
 *   only closing must not race other uses of the same handle. The last error
 *   is per thread.
 * Background threads: after a call that writes file-history snapshots
 *   (sk_session_user_input, sk_session_before_edit, sk_session_after_edit,
 *   sk_session_rewind, sk_session_restore_snapshot), the library may merge
 *   the snapshot pack files on its own thread, "sessionkit-background",
 *   started at the first merge and kept for the life of the process (it
 *   sleeps between merges, at most one merge per project at a time). No
 *   call waits for it. Reading a large log may also use a second thread for
 *   the length of the call.
 * fork(): a child inherits the parent's handles but may not write through
 *   them. A call through an inherited sk_session or sk_subagent that writes
 *   (appending, patching, state, head and title changes, sync, subagents) or
 *   uses the file history (snapshots, tracked files, changes, rewinds and
 *   their plans: loading it writes) fails with SK_INVALID_INPUT, naming the
 *   session and both process ids, and writes nothing. SK_INVALID_INPUT, not
 *   SK_BUSY: the handle is unusable in the child for good, and waiting would
 *   not help. Reads work (sk_session_id, _info, _read, _active_path,
 *   _model_view, _select_compaction; sk_store_* and sk_view_*), and *_close
 *   frees the child's copy without writing. While the child keeps its copy
 *   open, the session's lock stays held (the lock belongs to the open file
 *   both processes share; exec() closes it): a parent that closes and reopens
 *   the session then gets SK_BUSY. To write in the child, close the inherited
 *   handle, then open the session (once the parent has closed it) or fork it
 *   with sk_session_fork. A fork() waits for a running background pack
 *   merge to end (the library's own thread), and no merge starts while a fork
 *   is made; a child that merges starts its own thread. As with any library that uses threads and locks, fork() while
 *   another thread of the host is inside a sessionkit call may leave a lock
 *   held in the child for good: a child that will call sessionkit should be
 *   forked while no other host thread is in it.
 *   An inherited sk_remote or sk_follower shares its database connection
 *   with the parent: the child must neither use nor close it (closing it
 *   would end the parent's connection too); it opens its own instead.
 * Unloading: do not dlclose() the library. Its background thread runs its
 *   code until the process ends, and there is no call to stop it; load the
 *   library once for the life of the process.
 */

#ifndef SESSIONKIT_H
#define SESSIONKIT_H

/* Generated by cbindgen from the sessionkit-ffi crate (ffi/). Do not edit:
 * regenerate with `SK_UPDATE_HEADER=1 cargo test -p sessionkit-ffi --test header`. */

#include <stdbool.h>
#include <stdint.h>
/* The version of the library this header belongs to (from Cargo.toml). */
#define SK_VERSION "0.1.0"
#define SK_VERSION_MAJOR 0
#define SK_VERSION_MINOR 1
#define SK_VERSION_PATCH 0

// The version of the C ABI. It changes only when a function's signature or
// meaning changes incompatibly; adding functions or statuses keeps it.
#define SK_ABI_VERSION 1

// The result of every call that can fail. The numbers are fixed: 1 to 8 are the
// error kinds of the Rust core (`sessionkit::ErrorKind`), 9 and 10 are the C
// ABI's own. New numbers may be added; treat an unknown one as an error.
enum sk_status
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : int32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // Success; the out-parameters were written.
  SK_OK = 0,
  // A session, message, agent, snapshot or file that was asked for does not
  // exist; also any file or directory of the store that the operating system
  // reports missing (the message names the id or the path).
  SK_NOT_FOUND = 1,
  // Another writer (in this or another process) holds the session's lock.
  SK_BUSY = 2,
  // The operation clashes with the state on disk (an existing id, files changed
  // outside the agent in a rewind).
  SK_CONFLICT = 3,
  // An argument is invalid: bad JSON, JSON of the wrong shape, a bad id, a
  // value over a limit.
  SK_INVALID_INPUT = 4,
  // Stored data cannot be understood and cannot be repaired automatically.
  SK_CORRUPT = 5,
  // The operating system reported an I/O error (other than a missing file,
  // which is `SK_NOT_FOUND`); `sk_last_errno` gives its error number.
  SK_IO = 6,
  // The store was written by a newer, incompatible format version.
  SK_UNSUPPORTED = 7,
  // A bug in sessionkit: a panic caught at the boundary, a broken invariant.
  SK_INTERNAL = 8,
  // A pointer argument that must not be NULL was NULL (this includes a handle
  // that was closed, since closing sets it to NULL).
  SK_NULL_ARGUMENT = 9,
  // A string argument is not valid UTF-8.
  SK_INVALID_UTF8 = 10,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum sk_status sk_status;
#else
typedef int32_t sk_status;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// A session pushed in the background while this process writes it, on a
// thread and a connection of its own (the core's `BackgroundPush`).
//
// Thread safety: any number of threads may flush and read it at once; only
// `sk_background_push_stop` and `_close` must not race other uses. A child
// forked from the process that started it must neither use nor stop it: the
// thread is the parent's (its calls fail with `SK_INVALID_INPUT` there).
typedef struct sk_background_push sk_background_push;

// A session followed as other machines push it, on a connection of its own.
//
// Thread safety: like `sk_remote` (calls take turns); it stays valid after
// its remote is closed.
typedef struct sk_follower sk_follower;

// A connection to the shared PostgreSQL database for the project of the store
// it was opened from; it pushes from and pulls into that store.
//
// Thread safety: an `sk_remote` may be used from any number of threads at
// once (the calls take turns on its one connection); only `sk_remote_close`
// must not run concurrently with other uses of the handle. It stays valid
// after its store is closed.
typedef struct sk_remote sk_remote;

// A session open for writing. Holds the session's exclusive writer lock until
// it is closed: a second `sk_session_open` of the same id, in this or another
// process, gets `SK_BUSY`.
//
// Thread safety: an `sk_session` may be used from any number of threads at
// once (appends are serialised); only `sk_session_close` must not run
// concurrently with other uses of the handle.
//
// Processes: only the process that opened it writes through it. In a child
// forked after that, writes and file-history calls fail with
// `SK_INVALID_INPUT`; reads and `sk_session_close` work (see "fork()" above).
typedef struct sk_session sk_session;

// The sessions of one project: an index and one log per session.
//
// Thread safety: an `sk_store` may be used from any number of threads at once;
// only `sk_store_close` must not run concurrently with other uses of the handle.
// Sessions opened from a store stay valid after the store is closed.
typedef struct sk_store sk_store;

// A subagent's sidechain log, open for writing (its lock is exclusive, like a
// session's). Closing its session does not close it.
//
// Thread safety: an `sk_subagent` may be used from any number of threads at
// once; only `sk_subagent_close` must not run concurrently with other uses.
//
// Processes: as an `sk_session`, only the process that opened it writes
// through it (`SK_INVALID_INPUT` in a forked child; see "fork()" above).
typedef struct sk_subagent sk_subagent;

// A session (or a subagent's sidechain) as it was on disk when it was loaded.
// Holds no lock and never changes.
//
// Thread safety: an `sk_view` may be read from any number of threads at once;
// only `sk_view_close` must not run concurrently with other uses.
typedef struct sk_view sk_view;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// The library's version, e.g. "0.1.0" (the same as `SK_VERSION` in the header
// the program was compiled with, unless it runs against another build).
//
// Returns a static string: never NULL, never freed. Does not touch the last error.
const char *sk_version(void);

// The table of enum values and defaults every interface shares, as JSON:
// `{"enums": {"durability": [...], "status": [...], "rewindMode": [...],
// "exportFormat", "importFormat", "memoryScope", "settingSource",
// "writableSettingSource", "errorKind"}, "defaults": {"project": ".",
// "storeOptions": {...}, "memoryScope": "project", "exportFormat": "jsonl",
// "rewindMode": "both", "rewindTurns": 1, "rewindTurnsMode": "conversation",
// "keepLastTurns": 2, "summaryTokens": 1000, "pushIntervalMs": 200,
// "searchLimit": 20, "leaseTtlMs": 60000}}`. What an argument passed as NULL
// (or an option left out) means.
//
// Returns a static string: never NULL, never freed. Does not touch the last error.
const char *sk_defaults(void);

// The ABI version of the library (`SK_ABI_VERSION` of the header it was built
// with). A program compares it with its own `SK_ABI_VERSION` to detect a library
// that is not compatible. Does not touch the last error.
uint32_t sk_abi_version(void);

// A static name for a status number ("OK", "NOT_FOUND", ...; "UNKNOWN" for a
// number this library does not define). Never NULL, never freed. Does not
// touch the last error.
const char *sk_status_name(int32_t status);

// The message of the last error on this thread, e.g. `"sk_session_open: not
// found: session 0190..."`: the function's name, then what was wrong.
//
// Returns a borrowed string, owned by the library and valid until the next call
// of a status-returning function on this thread (each such call clears it at its
// start). Returns "" (never NULL) when the last call succeeded. Do not free it.
// Messages longer than 16 KiB keep their start and end, with the cut marked. Does not itself clear the last error.
const char *sk_last_error(void);

// The operating system's error number (`errno`) behind the last error on this
// thread, e.g. `ENOSPC` (disk full) or `EACCES` (permission denied), also when
// it came through the file history's git library; 0 when the last call
// succeeded or its error did not come from the operating system. Set and
// cleared with the message of `sk_last_error`. Does not itself clear the last
// error.
int sk_last_errno(void);

// Free a string that this library returned through a `char **` out-parameter.
// `sk_string_free(NULL)` does nothing. Does not touch the last error.
//
// # Safety
//
// `s` is NULL or a string returned by this library that was not freed yet; it
// must not be used afterwards. Strings from `sk_version`, `sk_status_name` and
// `sk_last_error` are not to be freed.
void sk_string_free(char *s);

// Store a checkpoint of thread `thread_id` (any string, mapped to a session
// like a conversation id), with the values of its new channel versions, in
// one write. `put_json`: `{"ns", "checkpoint" (the checkpoint without
// channel_values; "id" required), "metadata", "parentId", "values": [{"channel",
// "version", "value": {"type", "bytes" (base64)} | null}]}`. A value the thread
// holds already is not stored again; a checkpoint id stored before is replaced.
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
sk_status sk_checkpoint_put(const struct sk_store *store,
                            const char *thread_id,
                            const char *put_json);

// Store the writes a task made, pending on a checkpoint. `writes_json`:
// `{"ns", "checkpointId", "taskId", "taskPath", "writes": [{"channel", "value":
// {"type", "bytes" (base64)}}]}`. A write at an index the task wrote before is
// kept as first written, except to `__error__`, `__scheduled__`,
// `__interrupt__` and `__resume__`, which are replaced.
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
sk_status sk_checkpoint_put_writes(const struct sk_store *store,
                                   const char *thread_id,
                                   const char *writes_json);

// Checkpoint `checkpoint_id` (NULL: the newest) of namespace `ns` of a
// thread: `out_json` receives `{"threadId", "ns", "id", "parentId",
// "checkpoint", "metadata", "values": {channel: {"type", "bytes"}}, "writes":
// [{"taskId", "channel", "value", "taskPath", "idx"}], "pendingSends"}`, or
// `null` when there is none.
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated
// (`checkpoint_id` may be NULL); `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_checkpoint_get(const struct sk_store *store,
                            const char *thread_id,
                            const char *ns,
                            const char *checkpoint_id,
                            char **out_json);

// The checkpoints `query_json` selects (`{"threadId", "ns", "checkpointId",
// "filter", "before", "limit"}`, each optional; NULL or empty selects all),
// newest first within each thread and namespace, as a JSON array of what
// `sk_checkpoint_get` returns.
//
// # Safety
//
// `store` is NULL or a live handle; `query_json` is NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_checkpoint_list(const struct sk_store *store, const char *query_json, char **out_json);

// Move a thread's session to the trash (restorable with
// `sk_store_restore_session`). A thread that does not exist is not an error.
//
// # Safety
//
// `store` is NULL or a live handle; `thread_id` is NULL or NUL-terminated.
sk_status sk_checkpoint_delete_thread(const struct sk_store *store, const char *thread_id);

// Copy every checkpoint, write and value of thread `source` into thread
// `target` (created if needed). Nothing happens when `source` does not exist.
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
sk_status sk_checkpoint_copy_thread(const struct sk_store *store,
                                    const char *source,
                                    const char *target);

// Prune the threads of `thread_ids_json` (a JSON array of strings):
// `strategy` `"keep_latest"` keeps the newest checkpoint of each namespace,
// `"delete"` moves the threads to the trash.
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
sk_status sk_checkpoint_prune(const struct sk_store *store,
                              const char *thread_ids_json,
                              const char *strategy);

// Remove, in every thread, the checkpoints whose `metadata.run_id` is in
// `run_ids_json` (a JSON array of strings), with their writes.
//
// # Safety
//
// `store` is NULL or a live handle; `run_ids_json` is NULL or NUL-terminated.
sk_status sk_checkpoint_delete_for_runs(const struct sk_store *store, const char *run_ids_json);

// For each channel of `channels_json` (a JSON array of strings), the writes
// on the path to checkpoint `checkpoint_id` (NULL: the newest of `ns`) back
// to the nearest ancestor holding a value for it: `out_json` receives
// `[{"channel", "writes", "seed"}]` (`seed` `null` when no ancestor holds one).
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated
// (`checkpoint_id` may be NULL); `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_checkpoint_delta_history(const struct sk_store *store,
                                      const char *thread_id,
                                      const char *ns,
                                      const char *checkpoint_id,
                                      const char *channels_json,
                                      char **out_json);

// The channel version after `current_json` (JSON: `null`, a number or a
// version this made; NULL means `null`), as a string in `out_version`.
//
// # Safety
//
// `current_json` is NULL or NUL-terminated; `out_version` is NULL or
// writable. Free the result with `sk_string_free`.
sk_status sk_next_channel_version(const char *current_json, char **out_version);

// The checkpoints session `session_id` holds (a checkpointer's thread),
// without their values, oldest first in each namespace, as a JSON array:
// what `sessionkit show` lists. Empty for a session of messages only.
//
// # Safety
//
// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_checkpoint_summaries(const struct sk_store *store,
                                  const char *session_id,
                                  char **out_json);

// The effective settings of the store's user and project.
//
// - `options_json`: NULL, "" or `{"sources": ["user", "project", "local",
//   "host"], "overrides": {...}}` (default: every source; `overrides` are the
//   `host` source, nearest of all).
// - `out_settings_json` receives `{"values": {...}, "origins": {"dotted.key":
//   source}, "sources": [{"source", "path", "status": "loaded" | "missing" |
//   "skipped" | "error", "version", "migrations", "readOnly", "error",
//   "warning"}]}`. A malformed file is reported in its source's `error`
//   (file, line, column); the other sources still load.
//
// Errors: `SK_INVALID_INPUT` (bad options).
//
// # Safety
//
// `store` is NULL or a live handle; `options_json` is NULL or NUL-terminated;
// `out_settings_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_settings(const struct sk_store *store,
                            const char *options_json,
                            char **out_settings_json);

// Set the dotted `key` (`"instructions.names"`) to `value_json` in the
// settings file of `source` (`"user"`, `"project"` or `"local"`); a JSON
// `null` is written and removes the key from the sources below. Atomic and
// locked; an older file is backed up once (`<file>.v<N>.bak`) and rewritten in
// the current shape.
//
// - `out_write_json` receives `{"path", "existed", "backup", "migrations"}`.
//
// Errors: `SK_INVALID_INPUT` (unknown source, `host`, bad key or JSON, a
// non-object on the key's path, a file that would be larger than 1 MiB or
// nest more than 100 levels, a file that is not a regular file or resolves
// outside the project; nothing is written);
// `SK_CORRUPT` (the file is malformed: file, line, column); `SK_UNSUPPORTED`
// (the file is of a newer version, never rewritten).
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated;
// `out_write_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_set_setting(const struct sk_store *store,
                               const char *source,
                               const char *key,
                               const char *value_json,
                               char **out_write_json);

// Remove the dotted `key` from the settings file of `source`, so the sources
// below show through; `existed` in `out_write_json` says whether it was there.
// A file made larger than 1 MiB by hand (which readers report in error) is
// repaired by unsetting what made it so: the write is accepted when the file
// it leaves is within the limit.
//
// Errors: as `sk_store_set_setting`.
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated;
// `out_write_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_unset_setting(const struct sk_store *store,
                                 const char *source,
                                 const char *key,
                                 char **out_write_json);

// Rewrite the settings file of `source` in the current shape, applying its
// pending migrations and keeping the older file as `<file>.v<N>.bak` first;
// nothing else changes. `out_write_json` receives `{"path", "existed",
// "backup", "migrations"}` (`backup` null and `migrations` empty when the file
// was current already).
//
// Errors: as `sk_store_set_setting` (a file of a newer version is
// `SK_UNSUPPORTED`, never downgraded).
//
// # Safety
//
// `store` is NULL or a live handle; `source` is NULL or NUL-terminated;
// `out_write_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_migrate_settings(const struct sk_store *store,
                                    const char *source,
                                    char **out_write_json);

// The instruction files that apply to the directory `dir`, in order: the
// user's, then from the repository root down to `dir`, each followed by its
// `@path` includes.
//
// - `options_json`: NULL, "" or `{"names": ["AGENTS.md", ...],
//   "maxIncludeDepth": n}` (default: the settings', else AGENTS.md, CLAUDE.md, 5).
// - `out_json` receives `{"dir", "root", "names", "maxIncludeDepth", "files":
//   [{"path", "level": "user" | "project" | "include", "includedFrom",
//   "depth", "content"}], "problems": [{"kind": "cycle" | "depthLimit" |
//   "outsideRoots" | "notFound" | "tooLarge" | "unreadable", "path",
//   "includedFrom", "message"}]}`.
//
// Errors: `SK_NOT_FOUND` (no such directory, or `dir` is not a directory);
// `SK_INVALID_INPUT` (bad options, a name that is not a plain file name or
// holds a NUL or another control character).
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_instructions(const struct sk_store *store,
                                const char *dir,
                                const char *options_json,
                                char **out_json);

// Add (`replace` false) or update (`replace` true) the memory `name` of
// `scope` (`"project"` or `"user"`) with the text `content`.
//
// - `out_entry_json` receives `{"name", "path", "bytes", "summary"}`.
//
// Errors: `SK_CONFLICT` (adding a name taken); `SK_NOT_FOUND` (updating an
// unknown name); `SK_INVALID_INPUT` (a name that could leave the directory,
// an unknown scope, text over 1 MiB, a symlinked directory or file).
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated;
// `out_entry_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_memory_write(const struct sk_store *store,
                                const char *scope,
                                const char *name,
                                const char *content,
                                bool replace,
                                char **out_entry_json);

// Delete the memory `name` of `scope`.
//
// Errors: `SK_NOT_FOUND` (unknown name); `SK_INVALID_INPUT` (as
// `sk_store_memory_write`).
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
sk_status sk_store_memory_delete(const struct sk_store *store, const char *scope, const char *name);

// The memories of `scope`, by name: `out_list_json` receives `[{"name",
// "path", "bytes", "summary"}]`.
//
// Errors: `SK_INVALID_INPUT` (unknown scope, a symlinked directory).
//
// # Safety
//
// `store` is NULL or a live handle; `scope` is NULL or NUL-terminated;
// `out_list_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_memory_list(const struct sk_store *store,
                               const char *scope,
                               char **out_list_json);

// The text of the memory `name` of `scope`, into `out_content` (not JSON).
//
// Errors: `SK_NOT_FOUND` (unknown name); `SK_INVALID_INPUT` (as
// `sk_store_memory_write`).
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated;
// `out_content` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_memory_read(const struct sk_store *store,
                               const char *scope,
                               const char *name,
                               char **out_content);

// The directory holding the memories of `scope` ("project" or "user"), as a
// JSON string (whether or not it exists yet).
//
// # Safety
//
// `store` is NULL or a live handle; `scope` is NULL or NUL-terminated;
// `out_path_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_memory_path(const struct sk_store *store,
                               const char *scope,
                               char **out_path_json);

// Import other agents' transcripts: Claude Code, Codex CLI, pi, Gemini CLI,
// Copilot CLI, opencode databases, seed-style logs (FORMAT.md §22).
//
// - `paths_json`: a JSON array of paths, each a transcript file or a
//   directory searched for `*.jsonl` files and opencode databases (required).
// - `options_json`: NULL, "" or a JSON object: `from` ("claude-code" |
//   "codex" | "deepcode" | "pi" | "gemini-cli" |
//   "copilot-cli" | "opencode"; detected per file when
//   absent), `project` (the project to import into; by default the one each
//   source names, whether or not its directory exists here), `mapPaths` (`[{"from", "to"}]`: prefixes
//   of the named working directory to remap, absolute paths), `store`
//   (store options as for `sk_store_open`).
// - `out_report_json`: receives `{"sources": [{"path", "format", "outcome":
//   "imported" | "upToDate" | "changed" | "failed", "error", "project",
//   "notice", "sessionId", "agentId", "created", "lines", "messagesAdded",
//   "recordsAdded", "skipped": [{"line", "reason"}], "unmapped": [...]}],
//   "messagesAdded", "failed"}`. A source that could not be imported is in the
//   report, not the status.
//
// Only regular files are read (a link to one is followed); a source larger
// than 1 GiB, or naming a relative working directory, fails in the report.
//
// Errors, before anything is read or written: `SK_NULL_ARGUMENT`,
// `SK_INVALID_UTF8`, `SK_INVALID_INPUT` (bad JSON or options, an empty
// `project` or one that is not a directory, a path mapping that is not two
// absolute paths, an empty `store.home`, an empty
// path, a path that is a FIFO, a device or a socket), `SK_NOT_FOUND` (a path
// or the `project` that does not exist), `SK_IO`.
//
// # Safety
//
// String arguments are NULL or NUL-terminated; `out_report_json` is NULL or
// writable. Free the result with `sk_string_free`.
sk_status sk_import(const char *paths_json,
                    const char *options_json,
                    char **out_report_json);

// The sessions of every project in a home: a JSON array of `{"projectCode",
// "projectRoot", "sessions": [index entry], "error"}` by project code.
//
// - `options_json`: NULL, "" or store options as for `sk_store_open` (only
//   `home` matters here).
//
// Errors: `SK_INVALID_INPUT` (bad options, no home), `SK_IO`.
//
// # Safety
//
// `options_json` is NULL or NUL-terminated; `out_json` is NULL or writable.
// Free the result with `sk_string_free`.
sk_status sk_list_all_sessions(const char *options_json, char **out_json);

// A session's active path as text: `format` "jsonl" (seed-style, one message
// per line), "markdown" (a transcript, tool calls folded) or "json" (one
// array of the UI view's messages). Blobs are inlined.
//
// Errors: `SK_NOT_FOUND` (unknown session), `SK_INVALID_INPUT` (an unknown
// format or an invalid id).
//
// # Safety
//
// `store` is NULL or a live handle; string arguments are NULL or
// NUL-terminated; `out_text` is NULL or writable. Free the result with
// `sk_string_free`.
sk_status sk_store_export_session(const struct sk_store *store,
                                  const char *session_id,
                                  const char *format,
                                  char **out_text);

// Write session `session_id`'s active path into another agent's own store,
// where that agent lists and resumes it (FORMAT.md §22.9, §22.10).
//
// - `options_json`: `{"to": "claude-code" | "codex", "home": "/abs/dir",
//   "modelProvider": "openai"}`; `to` is required. `home` is the agent's
//   home (default `$CLAUDE_CONFIG_DIR`, else `~/.claude`; `$CODEX_HOME`,
//   else `~/.codex`); `modelProvider` is for `codex` only.
// - `out_json` receives `{"to", "path", "nativeId", "idSource": "session" |
//   "derived", "items", "dropped", "written", "resumeCommand", "notice"}`.
//
// Errors, nothing written: `SK_NOT_FOUND` (unknown session),
// `SK_INVALID_INPUT` (bad options JSON, an unknown target, a relative home,
// `modelProvider` for `claude-code`), `SK_CONFLICT` (the file exists with
// other contents: left as it is), `SK_IO`.
//
// # Safety
//
// `store` is NULL or a live handle; string arguments are NULL or
// NUL-terminated; `out_json` is NULL or writable. Free the result with
// `sk_string_free`.
sk_status sk_store_export_to(const struct sk_store *store,
                             const char *session_id,
                             const char *options_json,
                             char **out_json);

// Connect to the shared database for the project of `store`, creating or
// migrating its schema (docs/DISTRIBUTED.md).
//
// - `options_json`: NULL, "" or a JSON object: `url` (a libpq connection
//   string, `host=... dbname=...` or `postgresql://...`; default: the
//   environment variable SESSIONKIT_REMOTE, else the setting `remote.url`),
//   `project` (the name the project's sessions share on the remote; default:
//   the store's project code), `holder` (who takes leases, shown to others
//   who get SK_BUSY; default "<host name>:<process id>"), `leaseTtlMs` (how
//   long a lease lasts unless renewed; default 60000, at most a day),
//   `mapPaths` (`[{"from", "to"}]`, absolute paths: with no `project`, the
//   name is the project code of this store's root with the longest `to`
//   prefix replaced by its `from`, where the project sat on the machines
//   that pushed).
// - `out_remote`: receives the handle, to be closed with `sk_remote_close`.
//
// Blocks until the server answers or the connection fails (the string's
// `connect_timeout` bounds it). TLS is set as in libpq, by `sslmode` and
// `sslrootcert` in the string (docs/DISTRIBUTED.md).
//
// Errors: `SK_INVALID_INPUT` (bad options or connection string, a project
// or holder name empty, over 200 bytes or holding a control character, no
// remote configured), `SK_IO` (the server cannot be reached or failed; the
// message names it without credentials), `SK_UNSUPPORTED` (the database's schema is
// newer than this library).
//
// # Safety
//
// `store` is NULL or a live handle; `options_json` is NULL or NUL-terminated;
// `out_remote` is NULL or writable.
sk_status sk_remote_open(const struct sk_store *store,
                         const char *options_json,
                         struct sk_remote **out_remote);

// Close the connection, free the handle and set `*remote` to NULL.
// `sk_remote_close(NULL)` and a pointer to a NULL handle do nothing. Leases
// taken through it are not released (they expire); followers opened from it
// stay valid.
//
// # Safety
//
// `remote` is NULL or points to a handle pointer from `sk_remote_open` (or
// NULL); no other thread uses the handle during or after the call.
void sk_remote_close(struct sk_remote **remote);

// The project name the sessions are shared under, as a plain string.
//
// # Safety
//
// `remote` is NULL or a live handle; `out_project` is NULL or writable. Free
// the result with `sk_string_free`.
sk_status sk_remote_project(const struct sk_remote *remote, char **out_project);

// Who this handle takes leases as, as a plain string.
//
// # Safety
//
// `remote` is NULL or a live handle; `out_holder` is NULL or writable. Free
// the result with `sk_string_free`.
sk_status sk_remote_holder(const struct sk_remote *remote, char **out_holder);

// The schema version of the database (after the migration at open: this
// library's).
//
// Errors: `SK_IO` (the server failed or the connection was lost).
//
// # Safety
//
// `remote` is NULL or a live handle; `out_version` is NULL or writable.
sk_status sk_remote_schema_version(const struct sk_remote *remote, int64_t *out_version);

// The project's sessions on the remote, by id: a JSON array of `{"id",
// "pushedBytes", "entry", "leaseHolder"}`: the bytes of the log the database
// holds, the index entry as last pushed (null before the first push) and the
// holder of an unexpired lease (null if none).
//
// Errors: `SK_IO`.
//
// # Safety
//
// `remote` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_remote_list(const struct sk_remote *remote, char **out_json);

// Take the lease of session `session_id`: while it is held, no other holder
// can push lines to the session. `out_lease_json` receives the lease,
// `{"sessionId", "holder", "token", "expiresMs"}`: `token` is the fencing
// token (larger at every acquire), `expiresMs` the expiry in milliseconds
// since the Unix epoch by the database's clock. Renew it before then with
// `sk_remote_renew`; give it back with `sk_remote_release`.
//
// Errors: `SK_BUSY` while another holder's lease has not expired (the last
// error names the holder and the expiry), `SK_INVALID_INPUT` (an invalid id,
// e.g. "../x" or ""), `SK_IO`.
//
// # Safety
//
// `remote` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_lease_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_remote_acquire(const struct sk_remote *remote,
                            const char *session_id,
                            char **out_lease_json);

// Extend a lease (`lease_json` as `sk_remote_acquire` returned it) by the
// handle's time to live; `out_lease_json` receives it with its new expiry.
//
// Errors: `SK_BUSY` when another holder took the lease since (this holder may
// no longer push), `SK_INVALID_INPUT` (not a lease), `SK_IO`.
//
// # Safety
//
// `remote` is NULL or a live handle; `lease_json` is NULL or NUL-terminated;
// `out_lease_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_remote_renew(const struct sk_remote *remote,
                          const char *lease_json,
                          char **out_lease_json);

// Give a lease back (`lease_json` as `sk_remote_acquire` or `sk_remote_renew`
// returned it). A lease already taken over is left to its new holder.
//
// Errors: `SK_INVALID_INPUT` (not a lease), `SK_IO`.
//
// # Safety
//
// `remote` is NULL or a live handle; `lease_json` is NULL or NUL-terminated.
sk_status sk_remote_release(const struct sk_remote *remote, const char *lease_json);

// Push the whole lines of local session `session_id` that the remote lacks,
// with the blobs they name, in batches (an interrupted push resumes where the
// remote stands; nothing is sent twice).
//
// - `lease_json`: NULL to take the session's lease for the push and give it
//   back after, or a lease the caller holds (from `sk_remote_acquire`).
// - `out_report_json`: receives `{"sessionId", "from", "to", "batches",
//   "blobs"}`: the bytes the remote held before and holds now, the
//   transactions that sent lines and the blobs uploaded.
//
// Errors: `SK_BUSY` (another holder's lease, or the given lease was taken
// over: its lines are refused), `SK_CONFLICT` (the local log does not
// continue the remote one: fork), `SK_NOT_FOUND` (no such local session),
// `SK_INVALID_INPUT` (an invalid id, a lease for another session, a line over
// 64 MiB: the lines before it are pushed), `SK_IO`.
//
// # Safety
//
// `remote` is NULL or a live handle; string arguments are NULL or
// NUL-terminated; `out_report_json` is NULL or writable. Free the result with
// `sk_string_free`.
sk_status sk_remote_push(const struct sk_remote *remote,
                         const char *session_id,
                         const char *lease_json,
                         char **out_report_json);

// Bring the local copy of session `session_id` up to the remote's: the
// missing lines are appended (a new log is created), the blobs they name
// fetched, the index entry refolded. Pulling again fetches only new lines;
// the pulled log is the pushed one byte for byte. `out_report_json` receives
// `{"sessionId", "from", "to", "blobs"}` (bytes of the local log before and
// after, blobs fetched).
//
// Errors: `SK_NOT_FOUND` (the remote lacks the session, or holds no line of
// it: leased but never pushed; no local log is made), `SK_BUSY` (the
// session is open for writing here), `SK_CONFLICT` (the local log is not a
// prefix of the remote one: fork), `SK_INVALID_INPUT` (an invalid id),
// `SK_IO`.
//
// # Safety
//
// `remote` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_report_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_remote_pull(const struct sk_remote *remote,
                         const char *session_id,
                         char **out_report_json);

// Follow session `session_id` as others push it, from byte `from_offset` of
// its log: a line boundary (0, or the length of a local copy), or a negative
// number for where the remote stands now. The follower listens on a
// connection of its own for each push's notification and reads anyway every
// second when none comes. Close it with `sk_follower_close`.
//
// Errors: `SK_NOT_FOUND` (the remote lacks the session), `SK_INVALID_INPUT`
// (an invalid id, an offset past the remote's end), `SK_IO`.
//
// # Safety
//
// `remote` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_follower` is NULL or writable.
sk_status sk_remote_follow(const struct sk_remote *remote,
                           const char *session_id,
                           int64_t from_offset,
                           struct sk_follower **out_follower);

// Close a follower's connection, free the handle and set `*follower` to NULL.
// `sk_follower_close(NULL)` and a pointer to a NULL handle do nothing.
//
// # Safety
//
// `follower` is NULL or points to a handle pointer from `sk_remote_follow`
// (or NULL); no other thread uses the handle during or after the call.
void sk_follower_close(struct sk_follower **follower);

// The byte offset of the log where the next lines start.
//
// # Safety
//
// `follower` is NULL or a live handle; `out_offset` is NULL or writable.
sk_status sk_follower_offset(const struct sk_follower *follower, uint64_t *out_offset);

// The lines pushed past the follower's offset, in order, each once, waiting
// up to `timeout_ms` milliseconds when there are none yet (0: do not wait).
// `out_lines_json` receives a JSON array of strings, each one whole log line
// with its "\n", so that their concatenation is the log's bytes from the old
// offset to the new one; `[]` when none came in time. A line that is not
// UTF-8 (a foreign writer's bytes) has its bad bytes replaced by U+FFFD here;
// the offset still counts the bytes stored.
//
// Errors: `SK_IO` (the connection was lost; the offset is unchanged, so a new
// follower from `sk_follower_offset` goes on where this one stopped).
//
// # Safety
//
// `follower` is NULL or a live handle; `out_lines_json` is NULL or writable.
// Free the result with `sk_string_free`.
sk_status sk_follower_next(const struct sk_follower *follower,
                           uint32_t timeout_ms,
                           char **out_lines_json);

// Push session `session_id` in the background while this process writes it:
// take its lease on a connection of its own, then push what its log gained
// every `interval_ms` milliseconds (10 to a third of the lease time) and renew
// the lease on time, so that no append waits for the network. End it with
// `sk_background_push_stop` (which pushes the rest and gives the lease back).
//
// Errors: `SK_BUSY` (another holder has the lease), `SK_INVALID_INPUT` (an
// invalid id or interval), `SK_NOT_FOUND`, `SK_IO`.
//
// # Safety
//
// `remote` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_push` is NULL or writable.
sk_status sk_remote_push_in_background(const struct sk_remote *remote,
                                       const char *session_id,
                                       uint32_t interval_ms,
                                       struct sk_background_push **out_push);

// Push what the log holds now and wait for it. `out_report_json` receives
// `{"sessionId", "from", "to", "batches", "blobs"}`.
//
// Errors: `SK_BUSY` once the lease was taken over by another holder (nothing
// more is pushed), `SK_IO` (the push failed; the next interval retries).
//
// # Safety
//
// `push` is NULL or a live handle; `out_report_json` is NULL or writable.
// Free the result with `sk_string_free`.
sk_status sk_background_push_flush(const struct sk_background_push *push, char **out_report_json);

// Bytes of the session's log the remote holds, as of the last push.
//
// # Safety
//
// `push` is NULL or a live handle; `out_bytes` is NULL or writable.
sk_status sk_background_push_pushed(const struct sk_background_push *push, uint64_t *out_bytes);

// Push the rest, give the lease back, end the thread, free the handle and set
// `*push` to NULL (whatever the result, once `out_report_json` was given).
// `out_report_json` receives the last push's report.
//
// Errors: as `sk_background_push_flush`; `SK_NULL_ARGUMENT` for a NULL
// handle or out-parameter (then nothing is stopped).
//
// # Safety
//
// `push` is NULL or points to a handle pointer from
// `sk_remote_push_in_background` (or NULL); no other thread uses the handle
// during or after the call. `out_report_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_background_push_stop(struct sk_background_push **push, char **out_report_json);

// Stop a background push without its report (the rest is pushed and the
// lease given back, as `sk_background_push_stop` does; errors are dropped),
// free the handle and set `*push` to NULL. NULL and a pointer to a NULL
// handle do nothing.
//
// # Safety
//
// As `sk_background_push_stop`'s `push`.
void sk_background_push_close(struct sk_background_push **push);

// Start a new session. `options_json`: NULL, "" or `{"title": "...", "id":
// "..."}` (a fresh UUIDv7 id when absent). Close the session with
// `sk_session_close`.
//
// Pruning: when the store's `maxSessions` is set (it is 0, keep all, by
// default) and the project then has more sessions, the least recently
// updated ones not open for writing are moved to the trash
// (`sk_store_list_trash`, `sk_store_restore_session`). Their ids are the
// `pruned` array of `sk_session_info` on the new handle.
//
// Errors: `SK_CONFLICT` for an existing id, `SK_INVALID_INPUT` for bad options.
//
// # Safety
//
// `store` is NULL or a live handle; `options_json` is NULL or NUL-terminated;
// `out_session` is NULL or writable.
sk_status sk_session_create(const struct sk_store *store,
                            const char *options_json,
                            struct sk_session **out_session);

// Open an existing session for writing (repairing a torn tail and quarantining
// unreadable lines; see `openReport` in `sk_session_info`).
//
// Errors: `SK_NOT_FOUND`, `SK_BUSY` (another writer, in this process or
// another, still holds it after about 63 ms of tries), `SK_INVALID_INPUT` (a
// bad id such as "../x"), `SK_CORRUPT`, `SK_UNSUPPORTED`.
//
// # Safety
//
// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_session` is NULL or writable.
sk_status sk_session_open(const struct sk_store *store,
                          const char *session_id,
                          struct sk_session **out_session);

// Open an existing session as a *shared writer*: the handle takes the
// session's writer lock only for the moment of each write (append, batch,
// patch, state, head, pop, compaction), waiting up to the store's
// `busyTimeoutMs` (5000 unless the store options say otherwise) for another
// holder; under the lock it first reads what other writers appended, so each
// write continues from the head at that moment. Any number of shared handles,
// in any threads and processes, write one session. Close with
// `sk_session_close`.
//
// Errors: `SK_NOT_FOUND`, `SK_BUSY` (the lock stayed held past the timeout;
// the message names the holder's process when the system says),
// `SK_INVALID_INPUT` (a bad id such as "../x"), `SK_CORRUPT`, `SK_UNSUPPORTED`.
//
// # Safety
//
// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_session` is NULL or writable.
sk_status sk_session_open_shared(const struct sk_store *store,
                                 const char *session_id,
                                 struct sk_session **out_session);

// The conversation named `conversation_id` (any non-empty UTF-8 string of at
// most 1,024 bytes: "user@example.com", "tenant/123") as a shared writer
// (see `sk_session_open_shared`), created on first use. Its session id is
// `sk_conversation_session_id`; the original id is kept in the header and the
// index entry (`conversationId`) when the two differ.
//
// Errors: `SK_INVALID_INPUT` (empty, too long, not UTF-8), `SK_BUSY`.
//
// # Safety
//
// `store` is NULL or a live handle; `conversation_id` is NULL or
// NUL-terminated; `out_session` is NULL or writable.
sk_status sk_session_open_conversation(const struct sk_store *store,
                                       const char *conversation_id,
                                       struct sk_session **out_session);

// The session id that holds the conversation `conversation_id` (FORMAT.md
// §3.3), as a plain string: the id itself when it is a valid session id,
// else `c-`, a readable prefix and a hash. The same rule in every interface.
//
// # Safety
//
// `conversation_id` is NULL or NUL-terminated; `out_id` is NULL or writable.
// Free the result with `sk_string_free`.
sk_status sk_conversation_session_id(const char *conversation_id, char **out_id);

// Fork session `source_id` into a new session, open for writing.
// `options_json`: NULL, "" or `{"at": messageId, "title": "..."}` (the source's
// head and title when absent). The source is read without a lock. Like
// `sk_session_create`, prunes the project to `maxSessions` (see `pruned` in
// `sk_session_info`).
//
// # Safety
//
// `store` is NULL or a live handle; strings are NULL or NUL-terminated;
// `out_session` is NULL or writable.
sk_status sk_session_fork(const struct sk_store *store,
                          const char *source_id,
                          const char *options_json,
                          struct sk_session **out_session);

// Flush the session's index entry, release its lock, free the handle and set
// `*session` to NULL. The handle is freed and the lock released even when the
// flush fails (the status says so). `sk_session_close(NULL)` and a pointer to a
// NULL handle return `SK_OK` and do nothing. Subagents opened from the session
// stay valid. In a child forked after the session was opened, frees the
// child's copy only, without the flush (the parent keeps its lock).
//
// # Safety
//
// `session` is NULL or points to a session pointer from this library (or
// NULL); no other thread uses the handle during or after the call.
sk_status sk_session_close(struct sk_session **session);

// The session's id, as a plain string (not JSON).
//
// # Safety
//
// `session` is NULL or a live handle; `out_id` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_session_id(const struct sk_session *session, char **out_id);

// The session as this writer knows it, as a JSON object: `{"id", "path",
// "head": id|null, "entry": indexEntry, "openReport": readReport, "pruned":
// [ids]}`. `pruned` lists the sessions deleted when this session was created
// or forked (see `sk_session_create`); it is empty for `sk_session_open`.
//
// # Safety
//
// `session` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_session_info(const struct sk_session *session, char **out_json);

// Append one message (a JSON object: `role`, `content`, optionally `id`,
// `parentId`, `meta`, ...). `out_message_json` receives it as stored (id,
// parent and timestamp filled in).
//
// Errors: `SK_INVALID_INPUT` for text that is not JSON or not an object, a bad
// or duplicate id, a line over `maxRecordBytes` once large `content` went to
// a blob, more than 100 levels of nesting (see "Limits" above), or a call in
// a forked child.
//
// # Safety
//
// `session` is NULL or a live handle; `message_json` is NULL or NUL-terminated;
// `out_message_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_append(const struct sk_session *session,
                            const char *message_json,
                            char **out_message_json);

// Append several groups of messages in one write, with a result per group.
// `groups_json` is a JSON array of arrays of messages. Each group is checked
// as if appended alone (as by `sk_session_append_batch`), after the groups
// accepted before it; a refused group is not written. `out_results_json`
// receives one entry per group: `{"ok": [messages as stored]}` or
// `{"error": {"code": "INVALID_INPUT", "message": "...", "errno": null}}`.
// The status is an error only when the write itself failed (nothing of the
// accepted groups is acknowledged then) or an argument is bad.
//
// # Safety
//
// `session` is NULL or a live handle; `groups_json` is NULL or
// NUL-terminated; `out_results_json` is NULL or writable. Free the result with
// `sk_string_free`.
sk_status sk_session_append_groups(const struct sk_session *session,
                                   const char *groups_json,
                                   char **out_results_json);

// Append a JSON array of messages in one write: all are stored, or none.
// `out_messages_json` receives them as stored (a JSON array). Each message is
// checked as by `sk_session_append`; an error names the first bad one
// ("batch message <i>").
//
// # Safety
//
// `session` is NULL or a live handle; `messages_json` is NULL or
// NUL-terminated; `out_messages_json` is NULL or writable. Free the result with
// `sk_string_free`.
sk_status sk_session_append_batch(const struct sk_session *session,
                                  const char *messages_json,
                                  char **out_messages_json);

// Update host-reported state (a JSON object: `status`, `thinking`,
// `refusalReason`, `failureReason`, `lastToolCall`, `activeTokens`,
// `childProcesses`, `title`). Logged and written to the index;
// `out_entry_json` receives the updated index entry. The object may nest 99
// levels (see "Limits" above).
//
// # Safety
//
// `session` is NULL or a live handle; `state_json` is NULL or NUL-terminated;
// `out_entry_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_update_state(const struct sk_session *session,
                                  const char *state_json,
                                  char **out_entry_json);

// Change fields of a stored message with an RFC 7396 merge patch (a JSON
// object), e.g. usage that arrives after the text. `SK_NOT_FOUND` for an
// unknown message id; `SK_INVALID_INPUT` for a patch of `id`, `parentId`,
// `role` and the like, or one nested more than 99 levels.
//
// # Safety
//
// `session` is NULL or a live handle; strings are NULL or NUL-terminated.
sk_status sk_session_patch(const struct sk_session *session,
                           const char *message_id,
                           const char *patch_json);

// Move the head to a message; later appends branch from there and the old
// branch stays in the log. `message_id` may be NULL: the head moves to before
// the first message. `SK_NOT_FOUND` for an unknown message id.
//
// # Safety
//
// `session` is NULL or a live handle; `message_id` is NULL or NUL-terminated.
sk_status sk_session_set_head(const struct sk_session *session, const char *message_id);

// Resume the conversation from a message (the head moves there). Unlike
// `sk_session_set_head`, `message_id` is required.
//
// # Safety
//
// `session` is NULL or a live handle; `message_id` is NULL or NUL-terminated.
sk_status sk_session_resume_at(const struct sk_session *session, const char *message_id);

// Rename the session (its index title); `out_entry_json` receives the entry.
//
// # Safety
//
// `session` is NULL or a live handle; `title` is NULL or NUL-terminated;
// `out_entry_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_rename(const struct sk_session *session,
                            const char *title,
                            char **out_entry_json);

// Make every append so far durable (fsync the log, write the index).
//
// # Safety
//
// `session` is NULL or a live handle.
sk_status sk_session_sync(const struct sk_session *session);

// Read this session's log back as a view (what every reader gets). Close it
// with `sk_view_close`.
//
// # Safety
//
// `session` is NULL or a live handle; `out_view` is NULL or writable.
sk_status sk_session_read(const struct sk_session *session, struct sk_view **out_view);

// The active path (root to head), as a JSON array of messages.
//
// # Safety
//
// `session` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_session_active_path(const struct sk_session *session, char **out_json);

// What goes to the model, as a JSON array of messages. `options_json`: NULL, ""
// or `{"lastN": n, "tokenBudget": n}`.
//
// # Safety
//
// `session` is NULL or a live handle; `options_json` is NULL or
// NUL-terminated; `out_json` is NULL or writable. Free the result with
// `sk_string_free`.
sk_status sk_session_model_view(const struct sk_session *session,
                                const char *options_json,
                                char **out_json);

// Ask a compaction policy what to compact; changes nothing. `policy_json`:
// `{"tokenBudget": n, "keepLastTurns": n, "summaryTokens": n}` (`tokenBudget`
// required). `out_plan_json` receives `{"replaces": [ids], "messages": [...],
// "tokensBefore": n, "tokensAfter": n}`, or the JSON text `null` when the model
// view already fits or nothing can go.
//
// Errors: `SK_INVALID_INPUT` (a policy that is not a JSON object, or has an
// unknown field or a value of the wrong type).
//
// # Safety
//
// `session` is NULL or a live handle; `policy_json` is NULL or NUL-terminated;
// `out_plan_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_select_compaction(const struct sk_session *session,
                                       const char *policy_json,
                                       char **out_plan_json);

// Replace `replaces_json` (a JSON array of message ids: a contiguous run of the
// model view, e.g. a plan's `replaces`) by a summary in the model's view.
// `summary_json` is the summary's content as JSON: a string (e.g.
// `"\"The user asked...\""`) or an array of content blocks. It is stored as an
// invisible system message; `out_message_json` receives it as stored.
//
// # Safety
//
// `session` is NULL or a live handle; strings are NULL or NUL-terminated;
// `out_message_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_apply_compaction(const struct sk_session *session,
                                      const char *replaces_json,
                                      const char *summary_json,
                                      char **out_message_json);

// Start a subagent: a sidechain log and a metadata file under the session; the
// main log records the spawn. `agent_id` may be NULL (a fresh id);
// `meta_json` may be NULL (`{}`) or a JSON object (e.g. task, model) nested at
// most 99 levels. Close the subagent with `sk_subagent_close`.
//
// # Safety
//
// `session` is NULL or a live handle; strings are NULL or NUL-terminated;
// `out_subagent` is NULL or writable.
sk_status sk_session_spawn_subagent(const struct sk_session *session,
                                    const char *agent_id,
                                    const char *meta_json,
                                    struct sk_subagent **out_subagent);

// Reopen a subagent of this session for writing (`SK_BUSY` while another
// writer holds it, after trying for about 63 ms). Close it with
// `sk_subagent_close`.
//
// # Safety
//
// `session` is NULL or a live handle; `agent_id` is NULL or NUL-terminated;
// `out_subagent` is NULL or writable.
sk_status sk_session_open_subagent(const struct sk_session *session,
                                   const char *agent_id,
                                   struct sk_subagent **out_subagent);

// Append a user message, taking a snapshot of the tracked files first (stored
// as the message's `checkpointHash`). `message_json` is a message object whose
// `role`, if present, must be "user". `out_message_json` receives it as stored.
// Snapshots may start the background pack merge (see "Background threads").
//
// # Safety
//
// `session` is NULL or a live handle; `message_json` is NULL or NUL-terminated;
// `out_message_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_user_input(const struct sk_session *session,
                                const char *message_json,
                                char **out_message_json);

// Record that the agent's tools read these files (`paths_json`: a JSON array of
// paths relative to the project root, or absolute inside it).
//
// # Safety
//
// `session` is NULL or a live handle; `paths_json` is NULL or NUL-terminated.
sk_status sk_session_track_read(const struct sk_session *session, const char *paths_json);

// Track these files and snapshot every tracked file, before a tool edits them.
// `out_snapshot` receives the snapshot id (a plain string, not JSON). May
// start the background pack merge (see "Background threads").
//
// # Safety
//
// `session` is NULL or a live handle; `paths_json` is NULL or NUL-terminated;
// `out_snapshot` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_before_edit(const struct sk_session *session,
                                 const char *paths_json,
                                 char **out_snapshot);

// Snapshot every tracked file after a tool edited `paths_json` (tracked from
// now on). `out_snapshot` receives the snapshot id (a plain string). May start
// the background pack merge (see "Background threads").
//
// # Safety
//
// `session` is NULL or a live handle; `paths_json` is NULL or NUL-terminated;
// `out_snapshot` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_after_edit(const struct sk_session *session,
                                const char *paths_json,
                                char **out_snapshot);

// The files this session tracks: a JSON array of paths relative to the project
// root.
//
// # Safety
//
// `session` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_session_tracked_files(const struct sk_session *session, char **out_json);

// For each path of `paths_json`: whether the file changed on disk since the
// agent last read or edited it. A JSON array of `{"path", "status"}`.
//
// # Safety
//
// `session` is NULL or a live handle; `paths_json` is NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_external_changes(const struct sk_session *session,
                                      const char *paths_json,
                                      char **out_json);

// `SK_OK` if none of `paths_json` changed on disk since the agent read it;
// `SK_CONFLICT`, naming the files in the last error, otherwise. Files never
// read pass.
//
// # Safety
//
// `session` is NULL or a live handle; `paths_json` is NULL or NUL-terminated.
sk_status sk_session_ensure_unchanged(const struct sk_session *session, const char *paths_json);

// The user messages a rewind can go back to (visible, uncompacted, on the
// active path, oldest first), each with whether its files can be restored and
// the changes since: a JSON array.
//
// # Safety
//
// `session` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_session_undo_candidates(const struct sk_session *session, char **out_json);

// The dry run of rewinding the files to before a user message: for each file,
// restore, recreate or delete, and any conflict. Changes nothing. A JSON object.
//
// # Safety
//
// `session` is NULL or a live handle; `message_id` is NULL or NUL-terminated;
// `out_plan_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_rewind_plan(const struct sk_session *session,
                                 const char *message_id,
                                 char **out_plan_json);

// What rewinding to before a user message in `mode` ("files",
// "conversation" or "both") would do, changing nothing: `out_json` receives
// `{"messageId", "mode", "plan": rewindPlan|null, "head": {"from": id|null,
// "to": id|null}}`. `plan` (as from `sk_session_rewind_plan`) is null for
// "conversation"; `head.to` is where the head goes (null: before the first
// message), the same as `head.from` for "files".
//
// Errors: `SK_NOT_FOUND` for an unknown message (or, unless the mode is
// "conversation", one without a snapshot); `SK_INVALID_INPUT` for a message
// that is not a user message or an unknown mode.
//
// # Safety
//
// `session` is NULL or a live handle; strings are NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_rewind_preview(const struct sk_session *session,
                                    const char *message_id,
                                    const char *mode,
                                    char **out_json);

// Rewind to before a user message. `mode` is "files", "conversation" or
// "both". Files are restored to the message's snapshot unless one changed
// outside the agent since the last snapshot (`SK_CONFLICT`, naming the files),
// which `force` overrides; the conversation head moves to the message's parent.
// `out_result_json` receives what was done and how to undo it (`undoSnapshot`).
// Restoring files may start the background pack merge.
//
// # Safety
//
// `session` is NULL or a live handle; strings are NULL or NUL-terminated;
// `out_result_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_rewind(const struct sk_session *session,
                            const char *message_id,
                            const char *mode,
                            bool force,
                            char **out_result_json);

// The dry run of restoring the tracked files to a snapshot of this session
// (e.g. a rewind's `undoSnapshot`). A JSON object like `sk_session_rewind_plan`.
//
// # Safety
//
// `session` is NULL or a live handle; `snapshot` is NULL or NUL-terminated;
// `out_plan_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_snapshot_plan(const struct sk_session *session,
                                   const char *snapshot,
                                   char **out_plan_json);

// Restore the tracked files to a snapshot of this session, with the same checks
// as a rewind (`force` overrides a conflict). Restoring a rewind's
// `undoSnapshot` undoes it. `out_result_json` receives what was done. May
// start the background pack merge.
//
// # Safety
//
// `session` is NULL or a live handle; `snapshot` is NULL or NUL-terminated;
// `out_result_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_restore_snapshot(const struct sk_session *session,
                                      const char *snapshot,
                                      bool force,
                                      char **out_result_json);

// The newest file snapshot of the session (a commit id, as a JSON string), or
// `null` before the first.
//
// # Safety
//
// `session` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_session_last_snapshot(const struct sk_session *session, char **out_json);

// Rewind to before the `turns`-th latest user input (1: the latest turn; the
// candidates are `sk_session_undo_candidates`), as `sk_session_rewind` does,
// in `mode` ("files", "conversation" or "both"; `sk_defaults` names the
// default a binding uses, "conversation"). `SK_INVALID_INPUT` when `turns`
// is 0 or more than there are.
//
// # Safety
//
// `session` is NULL or a live handle; `mode` is NULL or NUL-terminated;
// `out_result_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_rewind_turns(const struct sk_session *session,
                                  uint32_t turns,
                                  const char *mode,
                                  bool force,
                                  char **out_result_json);

// Write the session's index entry now (it is written at close, and by every
// state update, otherwise).
//
// # Safety
//
// `session` is NULL or a live handle.
sk_status sk_session_flush_index(const struct sk_session *session);

// Delete the session for good and start it again, empty, under its id:
// `*session` is closed and set to NULL whatever the outcome, and
// `out_session` receives the new handle on success.
//
// # Safety
//
// `session` is NULL or points to a session pointer from this library (or
// NULL) that no other thread uses; `out_session` is NULL or writable.
sk_status sk_session_erase(struct sk_session **session, struct sk_session **out_session);

// The session's OpenAI Responses input items (what the OpenAI Agents SDK
// keeps), oldest first, as a JSON array. `options_json`: NULL, "" or
// `{"limit": n, "modelView": bool}`: the last `limit` of the active path (all
// when absent), or with `modelView` the model view (compaction applied).
//
// # Safety
//
// `session` is NULL or a live handle; `options_json` is NULL or
// NUL-terminated; `out_json` is NULL or writable. Free the result with
// `sk_string_free`.
sk_status sk_session_responses_items(const struct sk_session *session,
                                     const char *options_json,
                                     char **out_json);

// Append OpenAI Responses input items (a JSON array of objects) as messages,
// in one write; nothing is written if one is refused. `out_messages_json`
// receives the stored messages.
//
// # Safety
//
// `session` is NULL or a live handle; `items_json` is NULL or NUL-terminated;
// `out_messages_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_append_responses_items(const struct sk_session *session,
                                            const char *items_json,
                                            char **out_messages_json);

// Make `items_json` (a Responses `compaction` item, then the items kept after
// it) the session's history as the model sees it, keeping the originals: the
// OpenAI Agents SDK's `replaceHistoryWithCompaction`, in one write.
// `out_messages_json` receives the stored messages.
//
// # Safety
//
// `session` is NULL or a live handle; `items_json` is NULL or NUL-terminated;
// `out_messages_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_session_replace_responses_items_with_compaction(const struct sk_session *session,
                                                             const char *items_json,
                                                             char **out_messages_json);

// Move the head back over the latest message: `out_item_json` receives its
// Responses item, or `null` when the session has no head. The message stays
// in the log, on a branch.
//
// # Safety
//
// `session` is NULL or a live handle; `out_item_json` is NULL or writable.
// Free the result with `sk_string_free`.
sk_status sk_session_pop_responses_item(const struct sk_session *session, char **out_item_json);

// Open session `session_id` for writing, creating it with that id if it does
// not exist yet (as an adapter given a fresh id by its host must). Two
// processes racing to create it both end up opening the one session (one of
// them then gets `SK_BUSY`, as for `sk_session_open`).
//
// # Safety
//
// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_session` is NULL or writable. Close the session with `sk_session_close`.
sk_status sk_session_open_or_create(const struct sk_store *store,
                                    const char *session_id,
                                    struct sk_session **out_session);

// How many times this handle fsynced its log (group commit shares one fsync
// between concurrent appends), into `out_count`.
//
// # Safety
//
// `session` is NULL or a live handle; `out_count` is NULL or writable.
sk_status sk_session_fsync_count(const struct sk_session *session, uint64_t *out_count);

// Open (creating if needed) the store of the project rooted at `project_root`.
//
// - `project_root`: an existing directory (required).
// - `options_json`: NULL, "" or a JSON object of store options with camelCase
//   keys: `home` (a directory; relative to the current directory now),
//   `durability` ("never" | "onSync" | "always"), `maxSessions` (0, the
//   default, keeps all), `trashGraceSecs`, `busyTimeoutMs` (how long a shared
//   writer waits for a session's lock; 5000), `blobThreshold`, `maxRecordBytes`
//   (at least 1024), `deterministic`. Unknown keys are an error. Absent keys
//   take the defaults above ("Store and defaults"): the home is
//   $SESSIONKIT_HOME, else ~/.sessionkit, and no session is pruned.
// - `out_store`: receives the new handle, to be closed with `sk_store_close`.
//
// Creates the project's directory under the home if needed.
//
// A project root that does not exist here opens its store when that store
// exists (sessions imported from another machine or a moved project).
//
// Errors: `SK_NULL_ARGUMENT`, `SK_INVALID_UTF8`, `SK_INVALID_INPUT` (bad
// options, an empty `home`, no home at all, a project root that is not a
// directory), `SK_NOT_FOUND` (no project root, nor a store for that path),
// `SK_IO`, `SK_UNSUPPORTED`.
//
// # Safety
//
// String arguments are NULL or NUL-terminated; `out_store` is NULL or writable.
sk_status sk_store_open(const char *project_root,
                        const char *options_json,
                        struct sk_store **out_store);

// Close a store handle and set `*store` to NULL. `sk_store_close(NULL)` and a
// pointer to a NULL handle do nothing. Sessions, subagents and views opened
// from the store remain valid and must be closed on their own.
//
// # Safety
//
// `store` is NULL or points to a handle pointer from `sk_store_open` (or NULL);
// no other thread uses the handle during or after the call.
void sk_store_close(struct sk_store **store);

// The store's place on disk, as a JSON object:
// `{"projectRoot": "...", "dir": "...", "projectCode": "...", "indexPath": "..."}`.
// `dir` is the directory holding the session logs.
//
// # Safety
//
// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_store_info(const struct sk_store *store, char **out_json);

// The project's sessions, newest first: a JSON array of index entries (`id`,
// `title`, `status`, `createdAt`, `updatedAt`, `messageCount`, `headId`, ...).
//
// # Safety
//
// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_store_list_sessions(const struct sk_store *store, char **out_json);

// A page of the project's sessions: `{"sessions": [...], "total": n}`, the
// entries of `sk_store_list_sessions` from `offset`, at most `limit` of them,
// and how many sessions there are.
//
// `options_json`: NULL, "" or `{"offset": n, "limit": n}` (both optional:
// offset 0, no limit). Unknown keys are `SK_INVALID_INPUT`.
//
// # Safety
//
// `store` is NULL or a live handle; `options_json` is NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_list_page(const struct sk_store *store,
                             const char *options_json,
                             char **out_json);

// One session's index entry, as a JSON object.
//
// Errors: `SK_NOT_FOUND` for an unknown id, `SK_INVALID_INPUT` for an id that is
// not a valid session id (e.g. "../x").
//
// # Safety
//
// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_session_entry(const struct sk_store *store,
                                 const char *session_id,
                                 char **out_json);

// The full id of the session named by `prefix`: the session whose id is
// `prefix`, else the only one whose id starts with it. `out_id` receives the
// id (free it with `sk_string_free`).
//
// Errors: `SK_NOT_FOUND` when no session id starts with `prefix`;
// `SK_INVALID_INPUT` when several do (the last error names them) or `prefix`
// is empty.
//
// # Safety
//
// `store` is NULL or a live handle; `prefix` is NULL or NUL-terminated;
// `out_id` is NULL or writable.
sk_status sk_store_resolve_session(const struct sk_store *store, const char *prefix, char **out_id);

// The session a `/continue` would pick (the most recently updated one with
// messages): its index entry as a JSON object, or the JSON text `null` when
// there is none.
//
// # Safety
//
// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_store_continue_session(const struct sk_store *store, char **out_json);

// Rename a session that no writer holds (`SK_BUSY` otherwise, after trying
// for about 63 ms; a host holding the session renames with
// `sk_session_rename`). `out_entry_json` receives the updated index entry.
//
// # Safety
//
// `store` is NULL or a live handle; strings are NULL or NUL-terminated;
// `out_entry_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_rename_session(const struct sk_store *store,
                                  const char *session_id,
                                  const char *title,
                                  char **out_entry_json);

// Delete a session: its index entry, log, sidecars and quarantine file.
// `SK_BUSY` while a writer holds it (after trying for about 63 ms);
// `SK_NOT_FOUND` for an unknown id.
//
// # Safety
//
// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated.
sk_status sk_store_delete_session(const struct sk_store *store, const char *session_id);

// The sessions in the project's trash (pruned beyond `maxSessions`, not yet
// purged by `sk_store_gc`), most recently trashed first, as a JSON array of
// `{"id", "trashedAt", "reason", "title", "updatedAt", "messageCount",
// "purgeAfter"}`. Finishes any move into or out of the trash a crash cut short.
//
// # Safety
//
// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_store_list_trash(const struct sk_store *store, char **out_json);

// Move a trashed session back into the project, with its subagents,
// quarantine file and file history; `out_entry_json` receives its index
// entry. `SK_NOT_FOUND` if it is not in the trash, `SK_CONFLICT` if a live
// session has that id, `SK_INVALID_INPUT` for an invalid id.
//
// # Safety
//
// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_entry_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_restore_session(const struct sk_store *store,
                                   const char *session_id,
                                   char **out_entry_json);

// Load a session for reading, without a lock (it never blocks a writer). The
// view reflects the log as it was when loaded; close it with `sk_view_close`.
//
// # Safety
//
// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_view` is NULL or writable.
sk_status sk_store_read_session(const struct sk_store *store,
                                const char *session_id,
                                struct sk_view **out_view);

// What goes to the model on resume of a session (read from the end of its log
// back to the latest compaction), as a JSON array of messages.
//
// `options_json`: NULL, "" or `{"lastN": n, "tokenBudget": n}`.
//
// # Safety
//
// `store` is NULL or a live handle; strings are NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_model_view(const struct sk_store *store,
                              const char *session_id,
                              const char *options_json,
                              char **out_json);

// The subagents of a session: a JSON array of their metadata objects (`agentId`,
// `status`, `meta`, `result`, ...), oldest first.
//
// # Safety
//
// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_list_subagents(const struct sk_store *store,
                                  const char *session_id,
                                  char **out_json);

// Load a subagent's sidechain for reading, without a lock. Close the view with
// `sk_view_close`.
//
// # Safety
//
// `store` is NULL or a live handle; strings are NULL or NUL-terminated;
// `out_view` is NULL or writable.
sk_status sk_store_read_subagent(const struct sk_store *store,
                                 const char *session_id,
                                 const char *agent_id,
                                 struct sk_view **out_view);

// Rebuild the index from the session logs. `out_report_json` receives
// `{"sessions": n, "problems": [[id, readReport], ...]}`.
//
// # Safety
//
// `store` is NULL or a live handle; `out_report_json` is NULL or writable.
// Free the result with `sk_string_free`.
sk_status sk_store_rebuild_index(const struct sk_store *store, char **out_report_json);

// Collect the project's garbage, as `sessionkit gc` does: file-history objects
// that no session's branch reaches, blobs that no log refers to and `.tmp-*`
// files a crash left (those two once older than 15 minutes).
// `out_report_json` receives the report: the file history's counts
// (`branches`, `objectsBefore`, `objectsAfter`, `bytesBefore`, `bytesAfter`,
// `bytesFreed`), with `blobs` and `tempFiles` objects beside them, and
// `trashPurged`: the ids of the trashed sessions purged, their
// `trashGraceSecs` over (they go first, so their objects and blobs are freed).
//
// # Safety
//
// `store` is NULL or a live handle; `out_report_json` is NULL or writable.
// Free the result with `sk_string_free`.
sk_status sk_store_gc(const struct sk_store *store, char **out_report_json);

// The size of each session's file history, as a JSON report.
//
// # Safety
//
// `store` is NULL or a live handle; `out_report_json` is NULL or writable.
// Free the result with `sk_string_free`.
sk_status sk_store_file_history_sizes(const struct sk_store *store, char **out_report_json);

// Verify the store, as `sessionkit doctor` does: the index against the logs,
// every session and subagent log (unreadable lines, torn tails, broken chains,
// blobs) and the file history against the logs.
//
// - `options_json`: NULL, "" or `{"repair": bool}`. Without `repair` nothing
//   is written and no lock is taken; with it, what can be fixed without loss
//   is fixed (torn tails terminated, unreadable lines quarantined, the index
//   rebuilt, file-history refs of deleted sessions deleted).
// - `out_report_json` receives the report: `{"store", "ok", "repair",
//   "index": {"state", "needsRebuild", ...}, "logs": [{"id", "path", "ok",
//   "problems", "notices", "repaired", ...}], "fileHistory": {...},
//   "repaired": [...]}`. Problems found are in the report, not the status:
//   `ok` is false when any remain.
//
// Errors: `SK_INVALID_INPUT` (bad options); `SK_IO` when the store directory
// cannot be read. A log that a writer holds cannot be repaired: that is said
// in its `repaired` list, not by the status.
//
// # Safety
//
// `store` is NULL or a live handle; `options_json` is NULL or NUL-terminated;
// `out_report_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_doctor(const struct sk_store *store,
                          const char *options_json,
                          char **out_report_json);

// Full-text search over the project's sessions (or every project's in the
// home), best match first; the search cache is brought up to date from the
// logs first (FORMAT.md §23).
//
// - `query_json`: `{"text": "...", "all": bool, "role", "session", "since",
//   "until", "tool", "limit"}`; only `text` is required. `text` holds words
//   (all must match), `"phrases"`, `prefix*` and `OR`.
// - `out_json` receives `{"hits": [{"project", "sessionId", "messageId",
//   "role", "timestamp", "tools", "snippet", "score"}], "indexedBytes",
//   "setAside", "stale"}`; in a snippet the matches are between `«` and `»`.
//
// Errors: `SK_INVALID_INPUT` (bad query JSON, no word to look for, a text
// over 16 KiB or of more than 256 terms, a NUL in the text, a control
// character in another string, a time that is not RFC 3339 or a date),
// refused before any cache file is opened; `SK_IO` when a log or the cache
// cannot be read or written.
//
// # Safety
//
// `store` is NULL or a live handle; `query_json` is NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_search(const struct sk_store *store, const char *query_json, char **out_json);

// The ids of the project's session logs, sorted, as a JSON array: read from
// the directory, so it works when the index is missing or unreadable.
//
// # Safety
//
// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_store_session_ids(const struct sk_store *store, char **out_json);

// Check the links between the session logs and the file history, reading
// only: refs of sessions whose log is gone, refs whose chain of snapshots
// reaches a missing commit, and `checkpointHash`es that name no snapshot of
// their session, as a JSON object. Takes no writer lock.
//
// # Safety
//
// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_store_check_file_history(const struct sk_store *store, char **out_json);

// Delete the file-history refs (branches and pending restores) of sessions
// whose log no longer exists and that are not in the trash; `out_json`
// receives the refs deleted, a JSON array. A ref that moved meanwhile is
// left alone.
//
// # Safety
//
// `store` is NULL or a live handle; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_store_prune_orphan_file_history(const struct sk_store *store, char **out_json);

// Start the file-history branch of session `session_id` at `snapshot` (for a
// fork: the snapshot of the message forked at). `SK_CONFLICT` if the session
// already has a branch.
//
// # Safety
//
// `store` is NULL or a live handle; the strings are NULL or NUL-terminated.
sk_status sk_store_branch_file_history(const struct sk_store *store,
                                       const char *session_id,
                                       const char *snapshot);

// Where the log of session `session_id` lives (whether or not it exists), as
// a JSON string. `SK_INVALID_INPUT` if the id is not a valid session id, so
// that no id names a path outside the store.
//
// # Safety
//
// `store` is NULL or a live handle; `session_id` is NULL or NUL-terminated;
// `out_path_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_store_log_path(const struct sk_store *store,
                            const char *session_id,
                            char **out_path_json);

// Release the subagent's lock, free the handle and set `*subagent` to NULL.
// NULL, or a pointer to NULL, does nothing. In a forked child, frees the
// child's copy only.
//
// # Safety
//
// `subagent` is NULL or points to a subagent pointer from this library (or
// NULL); no other thread uses the handle during or after the call.
void sk_subagent_close(struct sk_subagent **subagent);

// The subagent's id, as a plain string (not JSON).
//
// # Safety
//
// `subagent` is NULL or a live handle; `out_id` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_subagent_id(const struct sk_subagent *subagent, char **out_id);

// Append one message (a JSON object) to the sidechain; `out_message_json`
// receives it as stored. Errors as for `sk_session_append`.
//
// # Safety
//
// `subagent` is NULL or a live handle; `message_json` is NULL or
// NUL-terminated; `out_message_json` is NULL or writable. Free the result with
// `sk_string_free`.
sk_status sk_subagent_append(const struct sk_subagent *subagent,
                             const char *message_json,
                             char **out_message_json);

// Append a JSON array of messages to the sidechain in one write (all or none);
// `out_messages_json` receives them as stored.
//
// # Safety
//
// `subagent` is NULL or a live handle; `messages_json` is NULL or
// NUL-terminated; `out_messages_json` is NULL or writable. Free the result with
// `sk_string_free`.
sk_status sk_subagent_append_batch(const struct sk_subagent *subagent,
                                   const char *messages_json,
                                   char **out_messages_json);

// Append several groups of messages in one write, with a result per group,
// as `sk_session_append_groups` does.
//
// # Safety
//
// `subagent` is NULL or a live handle; `groups_json` is NULL or
// NUL-terminated; `out_results_json` is NULL or writable. Free the result with
// `sk_string_free`.
sk_status sk_subagent_append_groups(const struct sk_subagent *subagent,
                                    const char *groups_json,
                                    char **out_results_json);

// Record the subagent's result (any JSON value nested at most 99 levels): in
// its metadata (status "completed", or "failed" when `failed`) and as a result
// record in the main session's log.
//
// # Safety
//
// `subagent` is NULL or a live handle; `result_json` is NULL or NUL-terminated.
sk_status sk_subagent_finish(const struct sk_subagent *subagent,
                             const char *result_json,
                             bool failed);

// Read the sidechain back as a view; close it with `sk_view_close`.
//
// # Safety
//
// `subagent` is NULL or a live handle; `out_view` is NULL or writable.
sk_status sk_subagent_read(const struct sk_subagent *subagent, struct sk_view **out_view);

// Close a view and set `*view` to NULL. NULL, or a pointer to NULL, does nothing.
//
// # Safety
//
// `view` is NULL or points to a view pointer from this library (or NULL); no
// other thread uses the view during or after the call.
void sk_view_close(struct sk_view **view);

// What loading found, as a JSON object: `{"head": id|null, "header":
// object|null, "messageCount": n, "report": readReport, "records": [...]}`.
// `records` are the state and subagent records in log order; `report` is
// FORMAT.md §9.1: `skipped` and `tornTail` (`{line, offset, length, kind,
// reason}`), `brokenChains`, `duplicateIds`, `unknownRecords`, `missingBlobs`
// (`{messageId, field, sha256}`), `warnings`.
//
// # Safety
//
// `view` is NULL or a live view; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_view_info(const struct sk_view *view, char **out_json);

// The messages from the root to the head, as a JSON array of message objects
// (patches applied, blobs inlined).
//
// # Safety
//
// `view` is NULL or a live view; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_view_active_path(const struct sk_view *view, char **out_json);

// The active path for display: each message has `visible` and `compacted` as
// booleans. A JSON array.
//
// # Safety
//
// `view` is NULL or a live view; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_view_ui(const struct sk_view *view, char **out_json);

// What goes to the model, as a JSON array of messages. `options_json`: NULL, ""
// or `{"lastN": n, "tokenBudget": n}`.
//
// # Safety
//
// `view` is NULL or a live view; `options_json` is NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_view_model(const struct sk_view *view, const char *options_json, char **out_json);

// One message by id (patches applied, blobs inlined), as a JSON object.
// `SK_NOT_FOUND` for an unknown id.
//
// # Safety
//
// `view` is NULL or a live view; `message_id` is NULL or NUL-terminated;
// `out_json` is NULL or writable. Free the result with `sk_string_free`.
sk_status sk_view_message(const struct sk_view *view, const char *message_id, char **out_json);

// The full id of the message named by `prefix` (on any branch): the message
// whose id is `prefix`, else the only one whose id starts with it. `out_id`
// receives the id (free it with `sk_string_free`).
//
// Errors: `SK_NOT_FOUND` when no message id starts with `prefix`;
// `SK_INVALID_INPUT` when several do (the last error names them) or `prefix`
// is empty.
//
// # Safety
//
// `view` is NULL or a live view; `prefix` is NULL or NUL-terminated; `out_id`
// is NULL or writable.
sk_status sk_view_resolve_message(const struct sk_view *view, const char *prefix, char **out_id);

// Every message with its place in the tree, in log order: a JSON array of
// `{"id", "parentId", "role", "timestamp", "preview", "children",
// "onActivePath", "isHead", "compacted"}`.
//
// # Safety
//
// `view` is NULL or a live view; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_view_tree(const struct sk_view *view, char **out_json);

// The branches of the session, one per leaf: a JSON array of `{"leafId",
// "length", "forkPointId", "isActive", "lastTimestamp"}`.
//
// # Safety
//
// `view` is NULL or a live view; `out_json` is NULL or writable. Free the
// result with `sk_string_free`.
sk_status sk_view_branches(const struct sk_view *view, char **out_json);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* SESSIONKIT_H */
