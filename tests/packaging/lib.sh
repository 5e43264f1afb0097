# Shared by the tests/packaging scripts (sourced, not run).

# PATH without the Rust toolchain: every directory holding cargo, rustc or
# rustup is dropped, so what is installed from an artifact is shown to need
# none of them. Rust from rustup lives in ~/.cargo/bin; one beside the system's
# own tools (/usr/bin) cannot be left out, and that is an error.
no_rust_path() {
    local dir out=""
    local IFS=:
    for dir in $PATH; do
        [ -n "$dir" ] || continue
        if [ -e "$dir/cargo" ] || [ -e "$dir/rustc" ] || [ -e "$dir/rustup" ]; then
            if [ -e "$dir/sh" ]; then
                echo "packaging: cargo or rustc is in $dir, beside the system's tools: it cannot be left off PATH" >&2
                return 1
            fi
            continue
        fi
        out="${out:+$out:}$dir"
    done
    printf '%s\n' "$out"
}

# Fail unless PATH (as given) finds no cargo or rustc.
assert_no_rust() { # PATH-value
    if PATH="$1" command -v cargo >/dev/null 2>&1 || PATH="$1" command -v rustc >/dev/null 2>&1; then
        echo "packaging: a Rust toolchain is still on PATH=$1" >&2
        return 1
    fi
}

# A user's fresh HOME under DIR; the toolchain's own homes stay where they are so
# cargo and rustup keep working when a quick-start needs them.
sandbox_home() { # DIR
    export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
    mkdir -p "$1"
    export HOME="$1"
    unset SESSIONKIT_HOME
}

# Fail with the output when it lacks the text a user would look for.
expect_output() { # what, file, text
    if ! grep -qF -- "$3" "$2"; then
        echo "packaging: $1 did not print '$3'; it printed:" >&2
        cat "$2" >&2
        return 1
    fi
    echo "   ok: $1 printed '$3'"
}
