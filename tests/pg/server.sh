#!/usr/bin/env bash
# A throw-away PostgreSQL server for the tests of sessionkit's remote (PostgreSQL)
# sharing. It runs on a temporary data directory, listens on a Unix socket in that
# directory and on 127.0.0.1 at a free port, trusts local connections (nothing but
# this machine can reach it), and is removed by `stop`.
#
#   dir="$(bash tests/pg/server.sh start)"   # prints the server's directory
#   bash tests/pg/server.sh url "$dir"       # its connection string (libpq keyword/value)
#   dir="$(bash tests/pg/server.sh start --tls)"  # the same, and TLS on TCP (below)
#   bash tests/pg/server.sh tls-url "$dir"   # its TCP connection string (host=localhost, no sslmode)
#   bash tests/pg/server.sh pause "$dir"     # stop it, keeping its data (a crash test's outage)
#   bash tests/pg/server.sh resume "$dir"    # start it again on the same data and port
#   bash tests/pg/server.sh stop "$dir"      # stop it and delete its directory
#
# With --tls the server also runs with ssl=on and a certificate made at start: a
# throw-away certificate authority ($dir/tls/ca.crt, the root a client verifies
# with) signs the server's certificate, valid for the host name `localhost` only
# (so `host=127.0.0.1` with sslmode=verify-full is a wrong host name);
# $dir/tls/other-ca.crt is an authority that signed nothing here. TCP
# connections without TLS are refused (pg_hba `hostnossl ... reject`); the Unix
# socket stays open without TLS. Needs the openssl command (installed from
# Debian's packages when missing).
#
# Needs: PostgreSQL's server programs (initdb, pg_ctl). When they are missing they
# are installed from Debian's packages (apt-get install -y postgresql). initdb and
# postgres refuse to run as root: as root they run as the `postgres` user the
# package creates, and the directory belongs to it.
set -euo pipefail

die() { echo "tests/pg/server.sh: $*" >&2; exit 1; }

bindir() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && { echo "$d"; return; }
    done
    d="$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")"
    [ -x "$d/initdb" ] && { echo "$d"; return; }
    return 1
}

ensure_installed() {
    bindir >/dev/null && return
    echo "PostgreSQL missing: installing it (apt-get install -y postgresql)" >&2
    (DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql ||
        (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql)) >&2
    bindir >/dev/null || die "no initdb after installing postgresql"
}

# Run a server program as the owner of the data: `postgres` when we are root.
as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

url_of() {
    echo "host=$1/sock port=$(cat "$1/port") user=sessionkit dbname=sessionkit"
}

# A certificate authority and a server certificate it signs, for `localhost`, and
# the server set to use them and to take TCP connections with TLS only.
setup_tls() {
    local dir="$1" tls="$1/tls"
    if ! command -v openssl >/dev/null; then
        echo "openssl missing: installing it (apt-get install -y openssl)" >&2
        (DEBIAN_FRONTEND=noninteractive apt-get install -y openssl ||
            (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y openssl)) >&2
        command -v openssl >/dev/null || die "--tls needs the openssl command, and installing it failed"
    fi
    mkdir -p "$tls"
    (
        cd "$tls"
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=sessionkit test CA" \
            -keyout ca.key -out ca.crt
        openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
            -keyout server.key -out server.csr
        printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n' >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
            -extfile server.ext -out server.crt
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=another CA" \
            -keyout other-ca.key -out other-ca.crt
        chmod 600 ./*.key
    ) >"$dir/tls.log" 2>&1 || { cat "$dir/tls.log" >&2; die "making the test certificates in $tls failed"; }
    printf "ssl = on\nssl_cert_file = '%s'\nssl_key_file = '%s'\n" \
        "$tls/server.crt" "$tls/server.key" >>"$dir/data/postgresql.conf"
    printf '%s\n' "local all all trust" "hostssl all all 127.0.0.1/32 trust" \
        "hostnossl all all 127.0.0.1/32 reject" >"$dir/data/pg_hba.conf"
}

start_server() {
    local dir="$1" bin
    bin="$(bindir)"
    # -w waits until the server accepts connections; the log says why it did not.
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $(cat "$dir/port") -k $dir/sock -c listen_addresses=127.0.0.1" start >/dev/null ||
        { cat "$dir/server.log" >&2; die "the server in $dir did not start"; }
}

cmd="${1:-}"
case "$cmd" in
start)
    tls=
    case "${2:-}" in
    "") ;;
    --tls) tls=1 ;;
    *) die "usage: $0 start [--tls]" ;;
    esac
    ensure_installed
    bin="$(bindir)"
    dir="$(mktemp -d "${TMPDIR:-/tmp}/sessionkit-pg.XXXXXX")"
    mkdir -p "$dir/sock"
    free_port >"$dir/port"
    if [ "$(id -u)" = 0 ]; then
        chown -R postgres: "$dir"
    fi
    chmod 700 "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -U sessionkit -A trust -E UTF8 --locale=C \
        --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed in $dir"; }
    if [ -n "$tls" ]; then
        setup_tls "$dir"
        if [ "$(id -u)" = 0 ]; then
            chown -R postgres: "$dir"
        fi
    fi
    start_server "$dir"
    as_owner "$bin/createdb" -h "$dir/sock" -p "$(cat "$dir/port")" -U sessionkit sessionkit ||
        die "createdb failed on the server in $dir"
    echo "$dir"
    ;;
url)
    [ -d "${2:-}/data" ] || die "usage: $0 url DIR (no server directory ${2:-})"
    url_of "$2"
    ;;
tls-url)
    [ -f "${2:-}/tls/ca.crt" ] || die "usage: $0 tls-url DIR (no server started with --tls in ${2:-})"
    echo "host=localhost port=$(cat "$2/port") user=sessionkit dbname=sessionkit"
    ;;
pause)
    [ -d "${2:-}/data" ] || die "usage: $0 pause DIR (no server directory ${2:-})"
    as_owner "$(bindir)/pg_ctl" -D "$2/data" -m fast -w stop >/dev/null
    ;;
resume)
    [ -d "${2:-}/data" ] || die "usage: $0 resume DIR (no server directory ${2:-})"
    start_server "$2"
    ;;
stop)
    dir="${2:-}"
    [ -n "$dir" ] || die "usage: $0 stop DIR"
    [ -f "$dir/port" ] || die "$dir is not a directory made by '$0 start'"
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$(bindir)/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
*)
    die "usage: $0 start [--tls] | url DIR | tls-url DIR | pause DIR | resume DIR | stop DIR"
    ;;
esac
