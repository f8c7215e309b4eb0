#!/usr/bin/env bash
# Start a throwaway PostgreSQL server for the tests, on 127.0.0.1 and a free
# port, in a new temporary directory; print that directory on stdout.
#
#   state=$(testharness/pg/up.sh)      # installs PostgreSQL with apt if needed
#   export A2A_TEST_POSTGRES_DSN=$(cat "$state/dsn")
#   ...
#   testharness/pg/down.sh "$state"    # stop the server, remove the directory
#
# Nothing here depends on the distribution's own cluster or service: the
# server runs from Debian's binaries (/usr/lib/postgresql/<v>/bin) as an
# unprivileged OS user (PostgreSQL refuses to run as root), with its data,
# socket and log in the state directory, trust authentication on loopback
# only, and one database, a2a_test. Settings for speed (PG_FAST=1, the
# default): fsync and full-page writes off — a crash of the machine may lose
# the cluster, which is thrown away anyway. PG_FAST=0 keeps PostgreSQL's
# durable defaults (for benchmarks).
#
# Progress goes to stderr; a failure prints the server log.
set -euo pipefail

log() { echo "pg/up: $*" >&2; }

find_bin() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

bindir=$(find_bin || true)
if [ -z "$bindir" ]; then
	log "PostgreSQL is not installed; installing Debian's postgresql package with apt"
	# Do not let the package create and start its own 'main' cluster: the
	# tests run their own.
	as_root mkdir -p /etc/postgresql-common/createcluster.d
	echo "create_main_cluster = false" | as_root tee /etc/postgresql-common/createcluster.d/a2a-plugin-tests.conf >/dev/null
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >&2
	bindir=$(find_bin) || { log "apt installed postgresql but no initdb is under /usr/lib/postgresql/*/bin"; exit 1; }
fi

# The OS user that runs the server: ourselves unless we are root, then the
# postgres user the package creates (or a dedicated one).
runas=()
owner=$(id -un)
if [ "$(id -u)" = 0 ]; then
	owner=postgres
	if ! id "$owner" >/dev/null 2>&1; then
		owner=a2a-pgtest
		id "$owner" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$owner"
	fi
	runas=(runuser -u "$owner" --)
fi

state=$(mktemp -d "${TMPDIR:-/tmp}/a2a-pg.XXXXXX")
chmod 755 "$state"
[ "$(id -u)" = 0 ] && chown "$owner" "$state"
data="$state/data"

fail() {
	log "$*"
	[ -f "$state/server.log" ] && sed 's/^/pg\/up: server: /' "$state/server.log" | tail -40 >&2
	"${runas[@]}" "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$state"
	exit 1
}

"${runas[@]}" "$bindir/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >"$state/initdb.log" 2>&1 ||
	{ cat "$state/initdb.log" >&2; fail "initdb failed"; }

fast=${PG_FAST:-1}
{
	echo "listen_addresses = '127.0.0.1'"
	echo "unix_socket_directories = '$state'"
	echo "max_connections = 300"
	echo "shared_buffers = 128MB"
	if [ "$fast" = 1 ]; then
		echo "fsync = off"
		echo "full_page_writes = off"
	fi
} | "${runas[@]}" tee -a "$data/postgresql.conf" >/dev/null

free_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

started=
for _ in 1 2 3 4 5; do
	port=$(free_port) || fail "no free port found"
	if "${runas[@]}" "$bindir/pg_ctl" -D "$data" -l "$state/server.log" -w -t 30 -o "-p $port" start >/dev/null 2>&1; then
		started=1
		break
	fi
	log "port $port was taken; trying another"
done
[ -n "$started" ] || fail "the server did not start"

"${runas[@]}" "$bindir/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE DATABASE a2a_test" >&2 ||
	fail "could not create the test database"

echo "$bindir" >"$state/bindir"
echo "$owner" >"$state/owner"
echo "$port" >"$state/port"
echo "postgres://postgres@127.0.0.1:$port/a2a_test?sslmode=disable" >"$state/dsn"
log "PostgreSQL $("$bindir/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port (state in $state)"
echo "$state"
