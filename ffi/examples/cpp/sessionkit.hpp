// sessionkit.hpp: a C++11 wrapper over the whole sessionkit C ABI
// (include/sessionkit.h), in one header to copy into a project.
//
// - Store, Session, Subagent, View, Remote and Follower each own one handle.
//   They are move-only; the destructor closes the handle, and a
//   move-assignment closes the handle it replaces before taking the other. A
//   moved-from or closed object holds no handle: calling it throws Error
//   with SK_NULL_ARGUMENT, never crashes.
// - A failed call throws sessionkit::Error, which carries the status and the
//   library's last-error text ("<function>: <what was wrong>").
// - JSON crosses as std::string, as in the C ABI (parse it with the JSON
//   library of your choice). An empty options string means the defaults (NULL
//   in C). Paths and message ids are passed as std::vector<std::string>.
// - A string argument holding a NUL byte throws Error with SK_INVALID_INPUT
//   before the call: the C string would end at it.
// - Strings the library returns are copied into std::string and freed at once,
//   also when the copy throws.
// - Threads: like the C handles, an object may be used from several threads at
//   once; only moving, closing and destroying it must not race other uses.
#ifndef SESSIONKIT_HPP
#define SESSIONKIT_HPP

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sessionkit.h"

namespace sessionkit {

// A failed call: the status and the library's message for it.
class Error : public std::runtime_error {
public:
    Error(sk_status status, const std::string &message, int os_errno = 0)
        : std::runtime_error(std::string(sk_status_name(status)) + ": " + message),
          status_(status),
          message_(message),
          os_errno_(os_errno) {}
    // The status the call returned (SK_NOT_FOUND, SK_BUSY, ...).
    sk_status status() const noexcept { return status_; }
    // The status's name ("NOT_FOUND", ...), static.
    const char *name() const noexcept { return sk_status_name(status_); }
    // The library's last-error text for the call.
    const std::string &message() const noexcept { return message_; }
    // The operating system's error number behind it (ENOSPC, EACCES, ...), 0 if none.
    int os_errno() const noexcept { return os_errno_; }

private:
    sk_status status_;
    std::string message_;
    int os_errno_;
};

// The library's version ("0.1.0"), its ABI version, and whether that ABI is
// the one this header was written for.
inline std::string version() { return sk_version(); }
// The enum values and defaults every interface shares (JSON).
inline std::string defaults() { return sk_defaults(); }
inline std::uint32_t abi_version() noexcept { return sk_abi_version(); }
inline bool abi_compatible() noexcept { return sk_abi_version() == SK_ABI_VERSION; }
inline const char *status_name(sk_status status) noexcept { return sk_status_name(status); }

enum class RewindMode { Files, Conversation, Both };

namespace detail {

struct StringFree {
    void operator()(char *s) const noexcept { sk_string_free(s); }
};
using OwnedString = std::unique_ptr<char, StringFree>;

inline void check(sk_status st) {
    if (st != SK_OK) throw Error(st, sk_last_error(), sk_last_errno());
}

// Call `call(&out)`, then copy and free the string it returned. The string is
// owned before anything can throw, so neither an error nor bad_alloc leaks it.
template <class F>
std::string string_result(F call) {
    char *out = nullptr;
    sk_status st = call(&out);
    OwnedString owned(out);
    check(st);
    return owned ? std::string(owned.get()) : std::string();
}

// The C string of `s`. A std::string may hold a NUL byte, where the C string
// would end and the library would read only what comes before it: refused as
// SK_INVALID_INPUT (before the call) instead of cut silently.
inline const char *c_str(const std::string &s) {
    std::string::size_type at = s.find('\0');
    if (at != std::string::npos) {
        throw Error(SK_INVALID_INPUT, "a string argument holds a NUL byte at offset " +
                                          std::to_string(at) +
                                          " (a C string would end there); nothing was done");
    }
    return s.c_str();
}

// NULL for an empty string: the C ABI's "absent" for options and optional ids.
inline const char *opt(const std::string &s) { return s.empty() ? nullptr : c_str(s); }

// A JSON string literal for `s` (UTF-8 passes through; the library checks it).
inline std::string json_string(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

inline std::string json_array(const std::vector<std::string> &items) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); i++) {
        if (i) out += ",";
        out += json_string(items[i]);
    }
    return out + "]";
}

// Ownership of one handle; `Close` releases it and sets the pointer to NULL.
template <class T, class Close>
class Handle {
public:
    Handle() noexcept = default;
    explicit Handle(T *h) noexcept : h_(h) {}
    Handle(Handle &&o) noexcept : h_(o.release()) {}
    Handle &operator=(Handle &&o) noexcept {
        if (this != &o) reset(o.release());
        return *this;
    }
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    ~Handle() { reset(); }

    // The C handle, still owned by this object (NULL once closed or moved).
    T *get() const noexcept { return h_; }
    // Give up ownership: the caller closes the returned handle.
    T *release() noexcept {
        T *h = h_;
        h_ = nullptr;
        return h;
    }
    explicit operator bool() const noexcept { return h_ != nullptr; }

protected:
    // Close the held handle (if any) and hold `h` instead.
    void reset(T *h = nullptr) noexcept {
        T *old = h_;
        h_ = h;
        Close()(&old);
    }
    T *h_ = nullptr;
};

struct CloseStore {
    void operator()(sk_store **h) const noexcept { sk_store_close(h); }
};
struct CloseView {
    void operator()(sk_view **h) const noexcept { sk_view_close(h); }
};
struct CloseSubagent {
    void operator()(sk_subagent **h) const noexcept { sk_subagent_close(h); }
};
struct CloseRemote {
    void operator()(sk_remote **h) const noexcept { sk_remote_close(h); }
};
struct CloseFollower {
    void operator()(sk_follower **h) const noexcept { sk_follower_close(h); }
};
struct CloseBackgroundPush {
    void operator()(sk_background_push **h) const noexcept { sk_background_push_close(h); }
};
// From a destructor or a move-assignment there is no one to tell of a failed
// index flush; Session::close() reports it.
struct CloseSession {
    void operator()(sk_session **h) const noexcept { (void)sk_session_close(h); }
};

}  // namespace detail

// A session or sidechain as it was on disk when loaded (no lock).
class View : public detail::Handle<sk_view, detail::CloseView> {
public:
    using Handle::Handle;

    void close() noexcept { reset(); }
    // {"head", "header", "messageCount", "report", "records"}
    std::string info() const {
        return detail::string_result([&](char **o) { return sk_view_info(h_, o); });
    }
    // The id of the message whose id is `prefix`, else of the only one starting with it.
    std::string resolve_message(const std::string &prefix) const {
        return detail::string_result(
            [&](char **o) { return sk_view_resolve_message(h_, detail::c_str(prefix), o); });
    }
    std::string active_path() const {
        return detail::string_result([&](char **o) { return sk_view_active_path(h_, o); });
    }
    std::string ui() const {
        return detail::string_result([&](char **o) { return sk_view_ui(h_, o); });
    }
    // `options`: "" or {"lastN": n, "tokenBudget": n}.
    std::string model(const std::string &options = "") const {
        return detail::string_result(
            [&](char **o) { return sk_view_model(h_, detail::opt(options), o); });
    }
    std::string message(const std::string &message_id) const {
        return detail::string_result(
            [&](char **o) { return sk_view_message(h_, detail::c_str(message_id), o); });
    }
    std::string tree() const {
        return detail::string_result([&](char **o) { return sk_view_tree(h_, o); });
    }
    std::string branches() const {
        return detail::string_result([&](char **o) { return sk_view_branches(h_, o); });
    }
};

// A subagent's sidechain, open for writing.
class Subagent : public detail::Handle<sk_subagent, detail::CloseSubagent> {
public:
    using Handle::Handle;

    // Release the lock now (the destructor does it otherwise).
    void close() noexcept { reset(); }
    std::string id() const {
        return detail::string_result([&](char **o) { return sk_subagent_id(h_, o); });
    }
    std::string append(const std::string &message) {
        return detail::string_result(
            [&](char **o) { return sk_subagent_append(h_, detail::c_str(message), o); });
    }
    std::string append_batch(const std::string &messages) {
        return detail::string_result(
            [&](char **o) { return sk_subagent_append_batch(h_, detail::c_str(messages), o); });
    }
    // `groups`: a JSON array of arrays of messages, one write; a JSON array
    // of {"ok": [messages]} or {"error": {"code", "message", "errno"}}, one per group.
    std::string append_groups(const std::string &groups) {
        return detail::string_result(
            [&](char **o) { return sk_subagent_append_groups(h_, detail::c_str(groups), o); });
    }
    // `result`: any JSON value, e.g. "\"done\"".
    void finish(const std::string &result, bool failed = false) {
        detail::check(sk_subagent_finish(h_, detail::c_str(result), failed));
    }
    View read() const {
        sk_view *v = nullptr;
        detail::check(sk_subagent_read(h_, &v));
        return View(v);
    }
};

// A session open for writing: holds its lock until closed or destroyed.
class Session : public detail::Handle<sk_session, detail::CloseSession> {
public:
    using Handle::Handle;

    // Flush the index entry and release the lock, reporting a failed flush
    // (the handle is released either way). The destructor does the same
    // silently.
    void close() { detail::check(sk_session_close(&h_)); }

    std::string id() const {
        return detail::string_result([&](char **o) { return sk_session_id(h_, o); });
    }
    // {"id", "path", "head", "entry", "openReport", "pruned"}
    std::string info() const {
        return detail::string_result([&](char **o) { return sk_session_info(h_, o); });
    }
    std::string append(const std::string &message) {
        return detail::string_result(
            [&](char **o) { return sk_session_append(h_, detail::c_str(message), o); });
    }
    std::string append_batch(const std::string &messages) {
        return detail::string_result(
            [&](char **o) { return sk_session_append_batch(h_, detail::c_str(messages), o); });
    }
    // `groups`: a JSON array of arrays of messages, one write; a JSON array
    // of {"ok": [messages]} or {"error": {"code", "message", "errno"}}, one per group.
    std::string append_groups(const std::string &groups) {
        return detail::string_result(
            [&](char **o) { return sk_session_append_groups(h_, detail::c_str(groups), o); });
    }
    std::string update_state(const std::string &state) {
        return detail::string_result(
            [&](char **o) { return sk_session_update_state(h_, detail::c_str(state), o); });
    }
    void patch(const std::string &message_id, const std::string &patch) {
        detail::check(sk_session_patch(h_, detail::c_str(message_id), detail::c_str(patch)));
    }
    void set_head(const std::string &message_id) {
        detail::check(sk_session_set_head(h_, detail::c_str(message_id)));
    }
    // Move the head to before the first message.
    void set_head_to_start() { detail::check(sk_session_set_head(h_, nullptr)); }
    void resume_at(const std::string &message_id) {
        detail::check(sk_session_resume_at(h_, detail::c_str(message_id)));
    }
    std::string rename(const std::string &title) {
        return detail::string_result(
            [&](char **o) { return sk_session_rename(h_, detail::c_str(title), o); });
    }
    void sync() { detail::check(sk_session_sync(h_)); }
    View read() const {
        sk_view *v = nullptr;
        detail::check(sk_session_read(h_, &v));
        return View(v);
    }
    std::string active_path() const {
        return detail::string_result([&](char **o) { return sk_session_active_path(h_, o); });
    }
    std::string model_view(const std::string &options = "") const {
        return detail::string_result(
            [&](char **o) { return sk_session_model_view(h_, detail::opt(options), o); });
    }
    // The plan as JSON, or "null" when nothing needs compacting.
    std::string select_compaction(const std::string &policy) const {
        return detail::string_result(
            [&](char **o) { return sk_session_select_compaction(h_, detail::c_str(policy), o); });
    }
    // `summary`: JSON, a string ("\"...\"") or an array of content blocks.
    std::string apply_compaction(const std::vector<std::string> &replaces,
                                 const std::string &summary) {
        const std::string ids = detail::json_array(replaces);
        return detail::string_result([&](char **o) {
            return sk_session_apply_compaction(h_, detail::c_str(ids), detail::c_str(summary), o);
        });
    }
    // `agent_id` "" for a fresh id; `meta` "" for {}.
    Subagent spawn_subagent(const std::string &agent_id = "", const std::string &meta = "") {
        sk_subagent *a = nullptr;
        detail::check(
            sk_session_spawn_subagent(h_, detail::opt(agent_id), detail::opt(meta), &a));
        return Subagent(a);
    }
    Subagent open_subagent(const std::string &agent_id) {
        sk_subagent *a = nullptr;
        detail::check(sk_session_open_subagent(h_, detail::c_str(agent_id), &a));
        return Subagent(a);
    }
    std::string user_input(const std::string &message) {
        return detail::string_result(
            [&](char **o) { return sk_session_user_input(h_, detail::c_str(message), o); });
    }
    void track_read(const std::vector<std::string> &paths) {
        detail::check(sk_session_track_read(h_, detail::json_array(paths).c_str()));
    }
    // The snapshot id.
    std::string before_edit(const std::vector<std::string> &paths) {
        const std::string p = detail::json_array(paths);
        return detail::string_result(
            [&](char **o) { return sk_session_before_edit(h_, detail::c_str(p), o); });
    }
    std::string after_edit(const std::vector<std::string> &paths) {
        const std::string p = detail::json_array(paths);
        return detail::string_result(
            [&](char **o) { return sk_session_after_edit(h_, detail::c_str(p), o); });
    }
    std::string tracked_files() const {
        return detail::string_result(
            [&](char **o) { return sk_session_tracked_files(h_, o); });
    }
    std::string external_changes(const std::vector<std::string> &paths) const {
        const std::string p = detail::json_array(paths);
        return detail::string_result(
            [&](char **o) { return sk_session_external_changes(h_, detail::c_str(p), o); });
    }
    // Throws Error with SK_CONFLICT, naming the files, if any changed on disk
    // since the agent read it.
    void ensure_unchanged(const std::vector<std::string> &paths) const {
        detail::check(sk_session_ensure_unchanged(h_, detail::json_array(paths).c_str()));
    }
    std::string undo_candidates() const {
        return detail::string_result(
            [&](char **o) { return sk_session_undo_candidates(h_, o); });
    }
    std::string rewind_plan(const std::string &message_id) const {
        return detail::string_result(
            [&](char **o) { return sk_session_rewind_plan(h_, detail::c_str(message_id), o); });
    }
    // Undo the latest `turns` turns (default mode: the conversation only).
    std::string rewind_turns(std::uint32_t turns = 1, RewindMode mode = RewindMode::Conversation,
                             bool force = false) {
        const char *m = mode == RewindMode::Files          ? "files"
                        : mode == RewindMode::Conversation ? "conversation"
                                                           : "both";
        return detail::string_result(
            [&](char **o) { return sk_session_rewind_turns(h_, turns, m, force, o); });
    }
    // The newest snapshot id (a JSON string), or "null".
    std::string last_snapshot() const {
        return detail::string_result([&](char **o) { return sk_session_last_snapshot(h_, o); });
    }
    void flush_index() { detail::check(sk_session_flush_index(h_)); }
    std::uint64_t fsync_count() const {
        std::uint64_t n = 0;
        detail::check(sk_session_fsync_count(h_, &n));
        return n;
    }
    // OpenAI Responses items: `options` "" or {"limit", "modelView"}.
    std::string responses_items(const std::string &options = "") const {
        return detail::string_result(
            [&](char **o) { return sk_session_responses_items(h_, detail::c_str(options), o); });
    }
    std::string append_responses_items(const std::string &items) {
        return detail::string_result(
            [&](char **o) { return sk_session_append_responses_items(h_, detail::c_str(items), o); });
    }
    std::string replace_responses_items_with_compaction(const std::string &items) {
        return detail::string_result([&](char **o) {
            return sk_session_replace_responses_items_with_compaction(h_, detail::c_str(items), o);
        });
    }
    // The popped item, or "null".
    std::string pop_responses_item() {
        return detail::string_result([&](char **o) { return sk_session_pop_responses_item(h_, o); });
    }
    // Delete the session for good and start it again, empty, under its id:
    // this handle is closed whatever the outcome; the new one is returned.
    Session erase() {
        sk_session *fresh = nullptr;
        detail::check(sk_session_erase(&h_, &fresh));
        return Session(fresh);
    }
    std::string rewind(const std::string &message_id, RewindMode mode, bool force = false) {
        const char *m = mode == RewindMode::Files          ? "files"
                        : mode == RewindMode::Conversation ? "conversation"
                                                           : "both";
        return detail::string_result(
            [&](char **o) { return sk_session_rewind(h_, detail::c_str(message_id), m, force, o); });
    }
    // What rewind(message_id, mode) would do, changing nothing: the file plan and
    // where the head goes.
    std::string rewind_preview(const std::string &message_id, RewindMode mode) const {
        const char *m = mode == RewindMode::Files          ? "files"
                        : mode == RewindMode::Conversation ? "conversation"
                                                           : "both";
        return detail::string_result(
            [&](char **o) { return sk_session_rewind_preview(h_, detail::c_str(message_id), m, o); });
    }
    std::string snapshot_plan(const std::string &snapshot) const {
        return detail::string_result(
            [&](char **o) { return sk_session_snapshot_plan(h_, detail::c_str(snapshot), o); });
    }
    std::string restore_snapshot(const std::string &snapshot, bool force = false) {
        return detail::string_result([&](char **o) {
            return sk_session_restore_snapshot(h_, detail::c_str(snapshot), force, o);
        });
    }
};

// The sessions of one project.
class Store : public detail::Handle<sk_store, detail::CloseStore> {
public:
    using Handle::Handle;
    Store() noexcept = default;
    // `options`: "" for the defaults (home $SESSIONKIT_HOME or ~/.sessionkit,
    // every session kept), or a JSON object such as {"home": "...", "maxSessions": 50}
    // (the oldest beyond 50 move to the trash).
    explicit Store(const std::string &project_root, const std::string &options = "") {
        detail::check(sk_store_open(detail::c_str(project_root), detail::opt(options), &h_));
    }

    void close() noexcept { reset(); }
    // {"projectRoot", "dir", "projectCode", "indexPath"}
    std::string info() const {
        return detail::string_result([&](char **o) { return sk_store_info(h_, o); });
    }
    // The id of the session whose id is `prefix`, else of the only one starting with it.
    std::string resolve_session(const std::string &prefix) const {
        return detail::string_result(
            [&](char **o) { return sk_store_resolve_session(h_, detail::c_str(prefix), o); });
    }
    // Check the store (and repair it when options_json says {"repair": true}): the report.
    std::string doctor(const std::string &options_json = "") {
        return detail::string_result(
            [&](char **o) { return sk_store_doctor(h_, detail::opt(options_json), o); });
    }
    // Full-text search (query_json: {"text": ..., "all", "role", "session", "since",
    // "until", "tool", "limit"}): {"hits": [...], ...}.
    std::string search(const std::string &query_json) const {
        return detail::string_result(
            [&](char **o) { return sk_store_search(h_, detail::c_str(query_json), o); });
    }
    std::string list_sessions() const {
        return detail::string_result([&](char **o) { return sk_store_list_sessions(h_, o); });
    }
    // {"sessions": [...], "total": n} for options {"offset": n, "limit": n}.
    std::string list_page(const std::string &options = "") const {
        return detail::string_result(
            [&](char **o) { return sk_store_list_page(h_, detail::opt(options), o); });
    }
    // The active path as "jsonl", "markdown" or "json" text.
    std::string export_session(const std::string &session_id, const std::string &format) const {
        return detail::string_result([&](char **o) {
            return sk_store_export_session(h_, detail::c_str(session_id), detail::c_str(format), o);
        });
    }
    // The session written where another agent keeps its own: options_json
    // {"to": "claude-code" | "codex", "home", "modelProvider"}; what was written.
    std::string export_to(const std::string &session_id, const std::string &options_json) const {
        return detail::string_result([&](char **o) {
            return sk_store_export_to(h_, detail::c_str(session_id), detail::c_str(options_json), o);
        });
    }
    std::string session_entry(const std::string &session_id) const {
        return detail::string_result(
            [&](char **o) { return sk_store_session_entry(h_, detail::c_str(session_id), o); });
    }
    // An index entry, or "null".
    std::string continue_session() const {
        return detail::string_result(
            [&](char **o) { return sk_store_continue_session(h_, o); });
    }
    std::string rename_session(const std::string &session_id, const std::string &title) {
        return detail::string_result([&](char **o) {
            return sk_store_rename_session(h_, detail::c_str(session_id), detail::c_str(title), o);
        });
    }
    void delete_session(const std::string &session_id) {
        detail::check(sk_store_delete_session(h_, detail::c_str(session_id)));
    }
    // The sessions pruned into the trash: [{"id", "trashedAt", "reason", "title",
    // "updatedAt", "messageCount", "purgeAfter"}, ...], most recently trashed first.
    std::string list_trash() const {
        return detail::string_result([&](char **o) { return sk_store_list_trash(h_, o); });
    }
    // Move a trashed session back; its index entry.
    std::string restore_session(const std::string &session_id) {
        return detail::string_result(
            [&](char **o) { return sk_store_restore_session(h_, detail::c_str(session_id), o); });
    }
    // A graph checkpointer's threads (LangGraph's saver; FORMAT.md §24). JSON in
    // and out, the serializer's bytes in base64.
    void checkpoint_put(const std::string &thread_id, const std::string &put_json) {
        detail::check(sk_checkpoint_put(h_, detail::c_str(thread_id), detail::c_str(put_json)));
    }
    void checkpoint_put_writes(const std::string &thread_id, const std::string &writes_json) {
        detail::check(sk_checkpoint_put_writes(h_, detail::c_str(thread_id), detail::c_str(writes_json)));
    }
    // A checkpoint, or "null"; the newest of `ns` when `checkpoint_id` is empty.
    std::string checkpoint_get(const std::string &thread_id, const std::string &ns = "",
                               const std::string &checkpoint_id = "") const {
        return detail::string_result([&](char **o) {
            return sk_checkpoint_get(h_, detail::c_str(thread_id), detail::c_str(ns), detail::opt(checkpoint_id), o);
        });
    }
    std::string checkpoint_list(const std::string &query_json = "") const {
        return detail::string_result(
            [&](char **o) { return sk_checkpoint_list(h_, detail::opt(query_json), o); });
    }
    void checkpoint_delete_thread(const std::string &thread_id) {
        detail::check(sk_checkpoint_delete_thread(h_, detail::c_str(thread_id)));
    }
    void checkpoint_copy_thread(const std::string &source, const std::string &target) {
        detail::check(sk_checkpoint_copy_thread(h_, detail::c_str(source), detail::c_str(target)));
    }
    void checkpoint_prune(const std::vector<std::string> &thread_ids,
                          const std::string &strategy = "keep_latest") {
        detail::check(sk_checkpoint_prune(h_, detail::json_array(thread_ids).c_str(), detail::c_str(strategy)));
    }
    void checkpoint_delete_for_runs(const std::vector<std::string> &run_ids) {
        detail::check(sk_checkpoint_delete_for_runs(h_, detail::json_array(run_ids).c_str()));
    }
    std::string checkpoint_delta_history(const std::string &thread_id, const std::string &ns,
                                         const std::string &checkpoint_id,
                                         const std::vector<std::string> &channels) const {
        const std::string channels_json = detail::json_array(channels);
        return detail::string_result([&](char **o) {
            return sk_checkpoint_delta_history(h_, detail::c_str(thread_id), detail::c_str(ns),
                                               detail::opt(checkpoint_id), detail::c_str(channels_json), o);
        });
    }
    View read_session(const std::string &session_id) const {
        sk_view *v = nullptr;
        detail::check(sk_store_read_session(h_, detail::c_str(session_id), &v));
        return View(v);
    }
    std::string model_view(const std::string &session_id, const std::string &options = "") const {
        return detail::string_result([&](char **o) {
            return sk_store_model_view(h_, detail::c_str(session_id), detail::opt(options), o);
        });
    }
    std::string list_subagents(const std::string &session_id) const {
        return detail::string_result(
            [&](char **o) { return sk_store_list_subagents(h_, detail::c_str(session_id), o); });
    }
    View read_subagent(const std::string &session_id, const std::string &agent_id) const {
        sk_view *v = nullptr;
        detail::check(sk_store_read_subagent(h_, detail::c_str(session_id), detail::c_str(agent_id), &v));
        return View(v);
    }
    std::string rebuild_index() {
        return detail::string_result([&](char **o) { return sk_store_rebuild_index(h_, o); });
    }
    std::string gc() {
        return detail::string_result([&](char **o) { return sk_store_gc(h_, o); });
    }
    std::string file_history_sizes() const {
        return detail::string_result(
            [&](char **o) { return sk_store_file_history_sizes(h_, o); });
    }
    // Settings (docs/SETTINGS.md): `options_json` "" or {"sources": [...], "overrides": {...}}.
    std::string settings(const std::string &options_json = "") const {
        return detail::string_result(
            [&](char **o) { return sk_store_settings(h_, detail::opt(options_json), o); });
    }
    // `source`: "user", "project" or "local"; `value_json` any JSON (null removes below).
    std::string set_setting(const std::string &source, const std::string &key,
                            const std::string &value_json) {
        return detail::string_result([&](char **o) {
            return sk_store_set_setting(h_, detail::c_str(source), detail::c_str(key), detail::c_str(value_json), o);
        });
    }
    std::string unset_setting(const std::string &source, const std::string &key) {
        return detail::string_result([&](char **o) {
            return sk_store_unset_setting(h_, detail::c_str(source), detail::c_str(key), o);
        });
    }
    // Rewrite the file of `source` in the current shape, backing up an older one.
    std::string migrate_settings(const std::string &source) {
        return detail::string_result(
            [&](char **o) { return sk_store_migrate_settings(h_, detail::c_str(source), o); });
    }
    // The instruction files that apply to `dir`, with their includes and problems.
    std::string instructions(const std::string &dir, const std::string &options_json = "") const {
        return detail::string_result([&](char **o) {
            return sk_store_instructions(h_, detail::c_str(dir), detail::opt(options_json), o);
        });
    }
    // Memory: `scope` "project" or "user"; `replace` false adds, true updates.
    std::string memory_write(const std::string &scope, const std::string &name,
                             const std::string &content, bool replace) {
        return detail::string_result([&](char **o) {
            return sk_store_memory_write(h_, detail::c_str(scope), detail::c_str(name), detail::c_str(content),
                                         replace, o);
        });
    }
    void memory_delete(const std::string &scope, const std::string &name) {
        detail::check(sk_store_memory_delete(h_, detail::c_str(scope), detail::c_str(name)));
    }
    // The directory of the memories of `scope` (a JSON string).
    std::string memory_path(const std::string &scope) const {
        return detail::string_result(
            [&](char **o) { return sk_store_memory_path(h_, detail::c_str(scope), o); });
    }
    std::string memory_list(const std::string &scope) const {
        return detail::string_result(
            [&](char **o) { return sk_store_memory_list(h_, detail::c_str(scope), o); });
    }
    std::string memory_read(const std::string &scope, const std::string &name) const {
        return detail::string_result(
            [&](char **o) { return sk_store_memory_read(h_, detail::c_str(scope), detail::c_str(name), o); });
    }
    // `options`: "" or {"title": "...", "id": "..."}. May prune old sessions:
    // see "pruned" in Session::info().
    Session create_session(const std::string &options = "") {
        sk_session *s = nullptr;
        detail::check(sk_session_create(h_, detail::opt(options), &s));
        return Session(s);
    }
    Session open_or_create_session(const std::string &session_id) {
        sk_session *s = nullptr;
        detail::check(sk_session_open_or_create(h_, detail::c_str(session_id), &s));
        return Session(s);
    }
    // Where a session's log is (a JSON string).
    std::string log_path(const std::string &session_id) const {
        return detail::string_result(
            [&](char **o) { return sk_store_log_path(h_, detail::c_str(session_id), o); });
    }
    std::string session_ids() const {
        return detail::string_result([&](char **o) { return sk_store_session_ids(h_, o); });
    }
    std::string check_file_history() const {
        return detail::string_result([&](char **o) { return sk_store_check_file_history(h_, o); });
    }
    std::string prune_orphan_file_history() {
        return detail::string_result(
            [&](char **o) { return sk_store_prune_orphan_file_history(h_, o); });
    }
    void branch_file_history(const std::string &session_id, const std::string &snapshot) {
        detail::check(sk_store_branch_file_history(h_, detail::c_str(session_id), detail::c_str(snapshot)));
    }
    std::string checkpoint_summaries(const std::string &session_id) const {
        return detail::string_result(
            [&](char **o) { return sk_checkpoint_summaries(h_, detail::c_str(session_id), o); });
    }
    Session open_session(const std::string &session_id) {
        sk_session *s = nullptr;
        detail::check(sk_session_open(h_, detail::c_str(session_id), &s));
        return Session(s);
    }
    // A shared writer: the session's lock is taken only for each write.
    Session open_shared(const std::string &session_id) {
        sk_session *s = nullptr;
        detail::check(sk_session_open_shared(h_, detail::c_str(session_id), &s));
        return Session(s);
    }
    // The conversation `conversation_id` (any string up to 1,024 bytes) as a
    // shared writer, created on first use.
    Session open_conversation(const std::string &conversation_id) {
        sk_session *s = nullptr;
        detail::check(sk_session_open_conversation(h_, detail::c_str(conversation_id), &s));
        return Session(s);
    }
    // `options`: "" or {"at": messageId, "title": "..."}.
    Session fork_session(const std::string &source_id, const std::string &options = "") {
        sk_session *s = nullptr;
        detail::check(sk_session_fork(h_, detail::c_str(source_id), detail::opt(options), &s));
        return Session(s);
    }
};

// A session followed as other machines push it.
class Follower : public detail::Handle<sk_follower, detail::CloseFollower> {
public:
    using Handle::Handle;

    void close() noexcept { reset(); }
    // The byte offset of the log where the next lines start.
    std::uint64_t offset() const {
        std::uint64_t at = 0;
        detail::check(sk_follower_offset(h_, &at));
        return at;
    }
    // A JSON array of the whole lines (each with its "\n") pushed past the
    // offset, waiting up to `timeout_ms` for some; "[]" when none came.
    std::string next(std::uint32_t timeout_ms) {
        return detail::string_result(
            [&](char **o) { return sk_follower_next(h_, timeout_ms, o); });
    }
};

// A session pushed in the background while this process writes it; the
// destructor stops it without its report, `stop()` with it.
class BackgroundPush : public detail::Handle<sk_background_push, detail::CloseBackgroundPush> {
public:
    using Handle::Handle;

    // The report of a push of what the log holds now.
    std::string flush() {
        return detail::string_result([&](char **o) { return sk_background_push_flush(h_, o); });
    }
    std::uint64_t pushed() const {
        std::uint64_t n = 0;
        detail::check(sk_background_push_pushed(h_, &n));
        return n;
    }
    // Push the rest, give the lease back; the last report.
    std::string stop() {
        return detail::string_result([&](char **o) { return sk_background_push_stop(&h_, o); });
    }
};

// The project's sessions shared through PostgreSQL (docs/DISTRIBUTED.md),
// pushed from and pulled into the store it was opened with.
class Remote : public detail::Handle<sk_remote, detail::CloseRemote> {
public:
    using Handle::Handle;
    Remote() noexcept = default;
    // `options`: "" or {"url", "project", "holder", "leaseTtlMs"}.
    explicit Remote(const Store &store, const std::string &options = "") {
        detail::check(sk_remote_open(store.get(), detail::opt(options), &h_));
    }

    void close() noexcept { reset(); }
    std::string project() const {
        return detail::string_result([&](char **o) { return sk_remote_project(h_, o); });
    }
    std::string holder() const {
        return detail::string_result([&](char **o) { return sk_remote_holder(h_, o); });
    }
    std::int64_t schema_version() const {
        std::int64_t v = 0;
        detail::check(sk_remote_schema_version(h_, &v));
        return v;
    }
    // [{"id", "pushedBytes", "entry", "leaseHolder"}]
    std::string list() const {
        return detail::string_result([&](char **o) { return sk_remote_list(h_, o); });
    }
    // A lease: {"sessionId", "holder", "token", "expiresMs"}.
    std::string acquire(const std::string &session_id) {
        return detail::string_result(
            [&](char **o) { return sk_remote_acquire(h_, detail::c_str(session_id), o); });
    }
    std::string renew(const std::string &lease_json) {
        return detail::string_result(
            [&](char **o) { return sk_remote_renew(h_, detail::c_str(lease_json), o); });
    }
    void release(const std::string &lease_json) {
        detail::check(sk_remote_release(h_, detail::c_str(lease_json)));
    }
    // `lease_json`: "" to take the lease for the push, or one held. The report.
    std::string push(const std::string &session_id, const std::string &lease_json = "") {
        return detail::string_result([&](char **o) {
            return sk_remote_push(h_, detail::c_str(session_id), detail::opt(lease_json), o);
        });
    }
    std::string pull(const std::string &session_id) {
        return detail::string_result(
            [&](char **o) { return sk_remote_pull(h_, detail::c_str(session_id), o); });
    }
    // From byte `from_offset` of the log; negative: where the remote stands.
    Follower follow(const std::string &session_id, std::int64_t from_offset = -1) const {
        sk_follower *f = nullptr;
        detail::check(sk_remote_follow(h_, detail::c_str(session_id), from_offset, &f));
        return Follower(f);
    }
    // Push `session_id` every `interval_ms` while this process writes it.
    BackgroundPush push_in_background(const std::string &session_id,
                                      std::uint32_t interval_ms = 200) const {
        sk_background_push *p = nullptr;
        detail::check(sk_remote_push_in_background(h_, detail::c_str(session_id), interval_ms, &p));
        return BackgroundPush(p);
    }
};

// Import transcripts (files or directories) of Claude Code, Codex or
// seed-style logs; returns the import report as JSON.
inline std::string import_transcripts(const std::vector<std::string> &paths,
                                      const std::string &options_json = "") {
    const std::string paths_json = detail::json_array(paths);
    return detail::string_result([&](char **o) {
        return sk_import(detail::c_str(paths_json), detail::opt(options_json), o);
    });
}

// The session id that holds the conversation `conversation_id`.
inline std::string conversation_session_id(const std::string &conversation_id) {
    return detail::string_result(
        [&](char **o) { return sk_conversation_session_id(detail::c_str(conversation_id), o); });
}

// The sessions of every project in the home the store options name.
inline std::string list_all_sessions(const std::string &options_json = "") {
    return detail::string_result(
        [&](char **o) { return sk_list_all_sessions(detail::opt(options_json), o); });
}

// The channel version after `current_json` (JSON; empty for none).
inline std::string next_channel_version(const std::string &current_json = "") {
    return detail::string_result(
        [&](char **o) { return sk_next_channel_version(detail::opt(current_json), o); });
}

}  // namespace sessionkit

#endif  // SESSIONKIT_HPP
