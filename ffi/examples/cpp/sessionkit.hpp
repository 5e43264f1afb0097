// A small RAII wrapper over the sessionkit C ABI (include/sessionkit.h), for the
// C++ example. Handles are move-only and closed by their destructors; a failed
// call throws sessionkit::Error with the status and the library's message;
// JSON crosses as std::string.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "sessionkit.h"

namespace sessionkit {

class Error : public std::runtime_error {
public:
    Error(sk_status status, const char *message)
        : std::runtime_error(std::string(sk_status_name(status)) + ": " + message),
          status_(status) {}
    sk_status status() const noexcept { return status_; }

private:
    sk_status status_;
};

namespace detail {
inline void check(sk_status st) {
    if (st != SK_OK) throw Error(st, sk_last_error());
}
// Take ownership of a library string: copy it, free it.
inline std::string take(char *s) {
    std::string out = s ? s : "";
    sk_string_free(s);
    return out;
}
template <class F> std::string string_result(F &&call) {
    char *out = nullptr;
    check(call(&out));
    return take(out);
}
inline const char *opt(const std::string &s) { return s.empty() ? nullptr : s.c_str(); }
}  // namespace detail

class View {
public:
    explicit View(sk_view *v) : v_(v) {}
    View(View &&o) noexcept : v_(std::exchange(o.v_, nullptr)) {}
    View &operator=(View &&o) noexcept { std::swap(v_, o.v_); return *this; }
    View(const View &) = delete;
    View &operator=(const View &) = delete;
    ~View() { sk_view_close(&v_); }

    std::string info() const { return detail::string_result([&](char **o) { return sk_view_info(v_, o); }); }
    std::string active_path() const { return detail::string_result([&](char **o) { return sk_view_active_path(v_, o); }); }
    std::string model_view(const std::string &options = "") const {
        return detail::string_result([&](char **o) { return sk_view_model(v_, detail::opt(options), o); });
    }

private:
    sk_view *v_;
};

class Session {
public:
    explicit Session(sk_session *s) : s_(s) {}
    Session(Session &&o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    Session &operator=(Session &&o) noexcept { std::swap(s_, o.s_); return *this; }
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;
    ~Session() { sk_session_close(&s_); }  // errors on this path are dropped: call close()

    // Flush the index and release the lock, reporting errors.
    void close() { detail::check(sk_session_close(&s_)); }
    std::string id() const { return detail::string_result([&](char **o) { return sk_session_id(s_, o); }); }
    std::string append(const std::string &message) {
        return detail::string_result([&](char **o) { return sk_session_append(s_, message.c_str(), o); });
    }
    std::string append_batch(const std::string &messages) {
        return detail::string_result([&](char **o) { return sk_session_append_batch(s_, messages.c_str(), o); });
    }
    std::string update_state(const std::string &state) {
        return detail::string_result([&](char **o) { return sk_session_update_state(s_, state.c_str(), o); });
    }
    std::string active_path() const {
        return detail::string_result([&](char **o) { return sk_session_active_path(s_, o); });
    }
    std::string model_view(const std::string &options = "") const {
        return detail::string_result([&](char **o) { return sk_session_model_view(s_, detail::opt(options), o); });
    }

private:
    sk_session *s_;
};

class Store {
public:
    explicit Store(const std::string &project_root, const std::string &options = "") {
        detail::check(sk_store_open(project_root.c_str(), detail::opt(options), &s_));
    }
    Store(Store &&o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    Store &operator=(Store &&o) noexcept { std::swap(s_, o.s_); return *this; }
    Store(const Store &) = delete;
    Store &operator=(const Store &) = delete;
    ~Store() { sk_store_close(&s_); }

    Session create_session(const std::string &options = "") {
        sk_session *s = nullptr;
        detail::check(sk_session_create(s_, detail::opt(options), &s));
        return Session(s);
    }
    Session open_session(const std::string &id) {
        sk_session *s = nullptr;
        detail::check(sk_session_open(s_, id.c_str(), &s));
        return Session(s);
    }
    View read_session(const std::string &id) const {
        sk_view *v = nullptr;
        detail::check(sk_store_read_session(s_, id.c_str(), &v));
        return View(v);
    }
    std::string list_sessions() const {
        return detail::string_result([&](char **o) { return sk_store_list_sessions(s_, o); });
    }

private:
    sk_store *s_ = nullptr;
};

}  // namespace sessionkit
