// Tests of the C++ wrapper ffi/examples/cpp/sessionkit.hpp: handle ownership
// through moves and destruction, errors with status and message, and a call of
// every method. Run by tests/c/run.sh under AddressSanitizer (built as C++11)
// and valgrind (C++17), which also find any string or handle the wrapper leaks.
// Prints one line per test and ends with "N passed, M failed".
#include "sessionkit.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using sessionkit::Error;
using sessionkit::RewindMode;
using sessionkit::Session;
using sessionkit::Store;
using sessionkit::Subagent;
using sessionkit::View;

namespace {

int checks_failed;
std::string base;

#define CHECK(c)                                                                 \
    do {                                                                         \
        if (!(c)) {                                                              \
            checks_failed++;                                                     \
            std::fprintf(stderr, "    %s:%d: check failed: %s\n", __FILE__,      \
                         __LINE__, #c);                                          \
        }                                                                        \
    } while (0)

bool contains(const std::string &haystack, const std::string &needle) {
    return haystack.find(needle) != std::string::npos;
}

// The string value of the first "key":"..." in compact JSON (ids, hashes).
std::string field(const std::string &json, const std::string &key) {
    const std::string k = "\"" + key + "\":\"";
    std::size_t at = json.find(k);
    if (at == std::string::npos) return "";
    at += k.size();
    return json.substr(at, json.find('"', at) - at);
}

// The first string of the array "key":[...] ("" if it is empty).
std::string first_in(const std::string &json, const std::string &key) {
    const std::string k = "\"" + key + "\":[\"";
    std::size_t at = json.find(k);
    if (at == std::string::npos) return "";
    at += k.size();
    return json.substr(at, json.find('"', at) - at);
}

// Items of a JSON array, counted by a key each item has once.
std::size_t count(const std::string &json, const std::string &key) {
    std::size_t n = 0;
    for (std::size_t at = json.find("\"" + key + "\":"); at != std::string::npos;
         at = json.find("\"" + key + "\":", at + 1))
        n++;
    return n;
}

// `call` throws Error with `status` and a message mentioning `needle`.
void expect_error(const std::function<void()> &call, sk_status status, const std::string &needle,
                  int line) {
    try {
        call();
    } catch (const Error &e) {
        if (e.status() != status || !contains(e.message(), needle) ||
            std::string(e.what()) != std::string(e.name()) + ": " + e.message()) {
            checks_failed++;
            std::fprintf(stderr, "    line %d: got %s \"%s\", want %s mentioning \"%s\"\n", line,
                         e.name(), e.message().c_str(), sk_status_name(status), needle.c_str());
        }
        return;
    }
    checks_failed++;
    std::fprintf(stderr, "    line %d: no error, want %s\n", line, sk_status_name(status));
}
#define EXPECT_ERROR(stmt, status, needle) expect_error([&] { stmt; }, status, needle, __LINE__)

std::string fresh_dir(const std::string &name) {
    static int counter;
    std::string dir = base + "/" + std::to_string(++counter) + "-" + name;
    std::string cmd = "mkdir -p '" + dir + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "cannot create %s\n", dir.c_str());
    return dir;
}

void write_file(const std::string &path, const std::string &text) {
    std::ofstream(path.c_str()) << text;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path.c_str());
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

Store open_store(const std::string &root, const std::string &extra = "") {
    std::string options = "{\"home\": \"" + fresh_dir("home") + "\"" +
                          (extra.empty() ? "" : ", " + extra) + "}";
    return Store(root, options);
}

const char *user(const char *text) {
    static std::string m;
    m = std::string("{\"role\": \"user\", \"content\": \"") + text + "\"}";
    return m.c_str();
}

// ---- tests ------------------------------------------------------------------

void test_errors_carry_status_and_message() {
    std::string root = fresh_dir("root");
    EXPECT_ERROR(Store(root, "{\"nope\": 1}"), SK_INVALID_INPUT, "sk_store_open");
    EXPECT_ERROR(Store(root + "/missing"), SK_NOT_FOUND, "missing");
    // The operating system's error number travels with the exception: a home
    // below a plain file cannot be created (ENOTDIR).
    write_file(root + "/a-file", "x");
    bool thrown = false;
    try {
        Store under_file(root, "{\"home\": \"" + root + "/a-file/home\"}");
    } catch (const Error &e) {
        thrown = true;
        CHECK(e.os_errno() == ENOTDIR);
    }
    CHECK(thrown);
    Store store = open_store(root);
    EXPECT_ERROR(store.open_session("../escape"), SK_INVALID_INPUT, "../escape");
    EXPECT_ERROR(store.session_entry("0190aaaa-0000-7000-8000-000000000000"), SK_NOT_FOUND,
                 "sk_store_session_entry");
    // A caught error leaves nothing behind: the next call succeeds.
    CHECK(store.list_sessions() == "[]");
    CHECK(sessionkit::version() == SK_VERSION);
    CHECK(sessionkit::abi_version() == SK_ABI_VERSION && sessionkit::abi_compatible());
    CHECK(std::string(sessionkit::status_name(SK_BUSY)) == "BUSY");
}

void test_moves_and_destruction_release_handles() {
    std::string root = fresh_dir("root");
    Store store = open_store(root);
    std::string first_id, second_id;
    {
        Session a = store.create_session("{\"id\": \"first\"}");
        Session b = store.create_session("{\"id\": \"second\"}");
        first_id = a.id();
        second_id = b.id();
        EXPECT_ERROR(store.open_session("first"), SK_BUSY, "first");
        // Assigning over `a` closes the session it held, unlocking it.
        a = std::move(b);
        CHECK(!b);
        CHECK(a.id() == "second");
        Session first = store.open_session("first");
        CHECK(first.id() == "first");
        // A moved-from handle is empty: calls throw, they do not crash.
        EXPECT_ERROR(b.append(user("x")), SK_NULL_ARGUMENT, "session");
        // Moving into itself keeps the handle.
        Session &alias = a;
        a = std::move(alias);
        CHECK(a && a.id() == "second");
        Session c(std::move(a));
        CHECK(!a && c.id() == "second");
        EXPECT_ERROR(store.open_session("second"), SK_BUSY, "second");
    }
    // Destructors released every lock.
    Session again = store.open_session("second");
    again.close();
    CHECK(!again);
    EXPECT_ERROR(again.id(), SK_NULL_ARGUMENT, "session");
    again.close();  // closing twice is harmless

    // Views, subagents and stores move the same way.
    Session s = store.open_session("first");
    Subagent x = s.spawn_subagent("x");
    Subagent y = s.spawn_subagent("y");
    x = std::move(y);
    Subagent reopened = s.open_subagent("x");  // the old "x" was closed
    CHECK(reopened.id() == "x");
    View v1 = store.read_session("first");
    View v2 = store.read_session("second");
    v1 = std::move(v2);
    CHECK(contains(v1.info(), "\"messageCount\":0"));
    v1.close();
    EXPECT_ERROR(v1.info(), SK_NULL_ARGUMENT, "view");
    Store other;
    CHECK(!other);
    other = std::move(store);
    CHECK(!store && contains(other.list_sessions(), "second"));
    // A session stays usable after its store is gone.
    other.close();
    CHECK(!s.append(user("after the store closed")).empty());
}

void test_shared_writers() {
    std::string root = fresh_dir("root");
    Store store = open_store(root);
    Session a = store.open_conversation("user@example.com");
    Session b = store.open_conversation("user@example.com");
    CHECK(a.id() == b.id());
    CHECK(a.id() == sessionkit::conversation_session_id("user@example.com"));
    a.append(user("one"));
    b.append(user("two"));
    Session c = store.open_shared(a.id());
    c.append(user("three"));
    EXPECT_ERROR(sessionkit::conversation_session_id(""), SK_INVALID_INPUT, "empty");
}

void test_sessions_views_and_subagents() {
    std::string root = fresh_dir("root");
    Store store = open_store(root, "\"maxSessions\": 2");
    Session s = store.create_session("{\"title\": \"Wrapper\"}");
    const std::string sid = s.id();
    std::string m1 = s.append(user("first"));
    CHECK(contains(m1, "\"role\":\"user\""));
    const std::string id1 = field(m1, "id");
    std::string batch = s.append_batch(
        "[{\"role\": \"assistant\", \"content\": \"a\"}, {\"role\": \"user\", \"content\": \"b\"}]");
    CHECK(count(batch, "id") == 2);
    CHECK(contains(s.update_state("{\"status\": \"completed\"}"), "\"status\":\"completed\""));
    s.patch(id1, "{\"meta\": {\"usage\": 7}}");
    CHECK(contains(s.active_path(), "\"usage\":7"));
    s.set_head(id1);
    CHECK(count(s.active_path(), "role") == 1);
    s.set_head_to_start();
    CHECK(s.active_path() == "[]");
    s.resume_at(id1);
    CHECK(field(s.info(), "head") == id1);
    CHECK(contains(s.rename("Renamed"), "\"title\":\"Renamed\""));
    s.sync();
    CHECK(contains(s.model_view(), id1));
    CHECK(contains(s.model_view("{\"lastN\": 1}"), id1));
    EXPECT_ERROR(s.patch("nope", "{}"), SK_NOT_FOUND, "nope");
    EXPECT_ERROR(s.append("[1]"), SK_INVALID_INPUT, "message_json");

    View v = s.read();
    CHECK(contains(v.info(), "\"messageCount\":3"));
    CHECK(contains(v.active_path(), id1));
    CHECK(contains(v.ui(), "\"visible\""));
    CHECK(contains(v.model(), id1));
    CHECK(contains(v.model("{\"lastN\": 1}"), id1));
    CHECK(field(v.message(id1), "id") == id1);
    CHECK(contains(v.tree(), "\"onActivePath\""));
    CHECK(contains(v.branches(), "\"leafId\""));
    EXPECT_ERROR(v.message("nope"), SK_NOT_FOUND, "nope");
    CHECK(v.resolve_message(id1.substr(0, id1.size() - 1)) == id1);
    EXPECT_ERROR(v.resolve_message("no-such-message"), SK_NOT_FOUND, "no-such-message");
    CHECK(store.resolve_session(sid) == sid);
    EXPECT_ERROR(store.resolve_session("no-such-session"), SK_NOT_FOUND, "no-such-session");
    CHECK(contains(store.doctor(), "\"ok\":true"));
    CHECK(contains(store.doctor("{\"repair\": true}"), "\"repair\":true"));

    // Compaction: nothing to do under a large budget; a summary otherwise.
    CHECK(s.select_compaction("{\"tokenBudget\": 1000000}") == "null");
    std::string summary = s.apply_compaction({id1}, "\"The user said first.\"");
    CHECK(contains(summary, "The user said first."));

    Subagent a = s.spawn_subagent("helper", "{\"task\": \"look\"}");
    CHECK(a.id() == "helper");
    CHECK(contains(a.append(user("task")), "\"agentId\":\"helper\""));
    CHECK(count(a.append_batch("[{\"role\": \"assistant\", \"content\": \"ok\"}]"), "id") == 1);
    std::string groups = a.append_groups("[[{\"role\": 1}], [{\"role\": \"user\", \"content\": \"x\"}]]");
    CHECK(contains(groups, "\"code\":\"INVALID_INPUT\""));
    CHECK(count(groups, "ok") == 1);
    CHECK(contains(a.read().info(), "\"messageCount\":3"));
    CHECK(contains(sessionkit::defaults(), "\"rewindMode\":\"both\""));
    a.finish("\"done\"");
    {
        // The handle-returning calls: open-or-create, erase (the old handle goes).
        Store other = open_store(fresh_dir("other"));
        Session made = other.open_or_create_session("made-here");
        made.append(user("x"));
        std::uint64_t before = made.fsync_count();
        made.sync();
        CHECK(made.fsync_count() == before + 1);
        CHECK(made.last_snapshot() == "null");
        Session fresh = made.erase();
        CHECK(!made);
        CHECK(fresh.id() == "made-here");
        CHECK(count(fresh.active_path(), "role") == 0);
        CHECK(contains(other.session_ids(), "\"made-here\""));
        CHECK(contains(other.log_path("made-here"), "made-here.jsonl"));
    }
    a.close();
    Subagent b = s.spawn_subagent();  // a fresh id, no metadata
    CHECK(!b.id().empty());
    b.finish("{\"error\": \"gave up\"}", true);
    b.close();
    Subagent again = s.open_subagent("helper");
    again.close();
    CHECK(contains(store.list_subagents(sid), "\"status\":\"completed\""));
    CHECK(contains(store.list_subagents(sid), "\"status\":\"failed\""));
    CHECK(contains(store.read_subagent(sid, "helper").active_path(), "task"));

    // Store-level calls, with the session closed.
    s.close();
    CHECK(contains(store.info(), "\"projectCode\""));
    CHECK(contains(store.list_sessions(), sid));
    CHECK(contains(store.list_page("{\"limit\": 1}"), sid));
    CHECK(contains(store.list_page(), "\"total\":1"));
    CHECK(contains(store.session_entry(sid), "\"title\":\"Renamed\""));
    CHECK(field(store.continue_session(), "id") == sid);
    CHECK(contains(store.rename_session(sid, "Again"), "\"title\":\"Again\""));
    CHECK(contains(store.read_session(sid).info(), "\"head\""));
    CHECK(contains(store.model_view(sid), "The user said first."));
    CHECK(contains(store.model_view(sid, "{\"lastN\": 1}"), "\"role\""));
    CHECK(contains(store.rebuild_index(), "\"sessions\":1"));

    // Forks prune past maxSessions (2 here), and say so.
    Session f1 = store.fork_session(sid, "{\"title\": \"Fork one\"}");
    CHECK(contains(f1.info(), "\"pruned\":[]"));
    f1.close();
    Session f2 = store.fork_session(sid, "{\"at\": \"" + id1 + "\"}");
    const std::string pruned = first_in(f2.info(), "pruned");
    CHECK(!pruned.empty() && pruned != f2.id());
    EXPECT_ERROR(store.session_entry(pruned), SK_NOT_FOUND, pruned);
    CHECK(count(store.list_sessions(), "title") == 2);
    const std::string f2id = f2.id();
    f2.close();
    store.delete_session(f2id);
    EXPECT_ERROR(store.delete_session(f2id), SK_NOT_FOUND, f2id);
    // The pruned session waits in the trash, and comes back.
    CHECK(field(store.list_trash(), "id") == pruned);
    CHECK(field(store.restore_session(pruned), "id") == pruned);
    CHECK(store.list_trash() == "[]");
    EXPECT_ERROR(store.restore_session(pruned), SK_NOT_FOUND, pruned);
    CHECK(contains(store.session_entry(pruned), pruned));
}

void test_file_history() {
    std::string root = fresh_dir("project");
    // A name that must be escaped in JSON.
    const std::string name = "say \"hi\".txt";
    write_file(root + "/" + name, "one\n");
    Store store = open_store(root);
    Session s = store.create_session();
    s.track_read({name});
    std::string um = s.user_input("{\"content\": \"Change it\"}");
    const std::string uid = field(um, "id");
    CHECK(!field(um, "checkpointHash").empty());
    CHECK(!s.before_edit({name}).empty());
    write_file(root + "/" + name, "two\n");
    CHECK(!s.after_edit({name}).empty());
    CHECK(contains(s.tracked_files(), "say \\\"hi\\\".txt"));
    CHECK(contains(s.external_changes({name, "other.txt"}), "\"status\":\"notRead\""));
    s.ensure_unchanged({name});
    write_file(root + "/" + name, "three\n");
    EXPECT_ERROR(s.ensure_unchanged({name}), SK_CONFLICT, "hi");
    CHECK(contains(s.undo_candidates(), "\"restorable\":true"));
    CHECK(contains(s.rewind_plan(uid), "\"conflicts\""));
    CHECK(contains(s.rewind_preview(uid, RewindMode::Both), "\"head\""));
    EXPECT_ERROR(s.rewind(uid, RewindMode::Both), SK_CONFLICT, "hi");
    std::string res = s.rewind(uid, RewindMode::Files, true);
    CHECK(read_file(root + "/" + name) == "one\n");
    const std::string undo = field(res, "undoSnapshot");
    CHECK(contains(s.snapshot_plan(undo), "\"files\""));
    s.restore_snapshot(undo);
    CHECK(read_file(root + "/" + name) == "three\n");
    s.rewind(uid, RewindMode::Conversation);
    CHECK(s.active_path() == "[]");
    s.close();
    CHECK(contains(store.file_history_sizes(), "\"snapshots\""));
    CHECK(contains(store.gc(), "\"bytesFreed\""));
}

// A std::string may hold a NUL byte; its C string would end there and the
// library would act on the part before it. The wrapper refuses it instead,
// before any call, so nothing is written.
void test_strings_with_a_nul_are_refused() {
    const std::string root = fresh_dir("root");
    EXPECT_ERROR(Store(root + std::string("\0/elsewhere", 11)), SK_INVALID_INPUT, "NUL byte at offset");
    Store store = open_store(root);
    Session s = store.create_session();
    const std::string sessions = store.list_sessions();
    const std::string message = "{\"role\": \"user\", \"content\": \"kept\"}";
    EXPECT_ERROR(s.append(message + std::string("\0{\"role\": \"user\"}", 17)), SK_INVALID_INPUT,
                 "offset " + std::to_string(message.size()));
    EXPECT_ERROR(store.open_session(s.id() + std::string("\0x", 2)), SK_INVALID_INPUT, "NUL byte");
    EXPECT_ERROR(store.instructions(root + std::string("\0/etc", 5)), SK_INVALID_INPUT, "NUL byte");
    // An options string goes through the same check.
    EXPECT_ERROR(store.create_session(std::string("{}\0{\"nope\": 1}", 15)), SK_INVALID_INPUT, "NUL byte");
    CHECK(s.active_path() == "[]");
    CHECK(store.list_sessions() == sessions);
}

}  // namespace

int main() {
    const char *tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/sk-cxxtest-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back(0);
    if (!mkdtemp(buf.data())) {
        std::perror("mkdtemp");
        return 2;
    }
    base = buf.data();
    struct {
        const char *name;
        void (*fn)();
    } tests[] = {
        {"errors carry the status and the message", test_errors_carry_status_and_message},
        {"moves and destruction release handles", test_moves_and_destruction_release_handles},
        {"shared writers on one conversation", test_shared_writers},
        {"sessions, views and subagents", test_sessions_views_and_subagents},
        {"file history", test_file_history},
        {"strings with a NUL are refused", test_strings_with_a_nul_are_refused},
    };
    int passed = 0, failed = 0;
    for (auto &t : tests) {
        checks_failed = 0;
        try {
            t.fn();
        } catch (const std::exception &e) {
            checks_failed++;
            std::fprintf(stderr, "    unexpected exception: %s\n", e.what());
        }
        std::printf("%s %s\n", checks_failed ? "FAILED" : "ok    ", t.name);
        (checks_failed ? failed : passed)++;
    }
    std::string cmd = "rm -rf '" + base + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", base.c_str());
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
