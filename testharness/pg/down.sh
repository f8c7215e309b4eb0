#!/usr/bin/env bash
# Stop a server started by up.sh and remove its state directory:
#
#   testharness/pg/down.sh "$state"
#
# Safe to call twice, or with a directory whose server already stopped.
set -uo pipefail

state=${1:-}
if [ -z "$state" ] || [ ! -d "$state" ]; then
	exit 0
fi
if [ ! -f "$state/bindir" ] && [ ! -d "$state/data" ]; then
	echo "pg/down: $state is not a directory made by up.sh; leaving it alone" >&2
	exit 1
fi
if [ -f "$state/bindir" ] && [ -f "$state/data/postmaster.pid" ]; then
	bindir=$(cat "$state/bindir")
	owner=$(cat "$state/owner")
	runas=()
	[ "$(id -u)" = 0 ] && [ "$owner" != root ] && runas=(runuser -u "$owner" --)
	"${runas[@]}" "$bindir/pg_ctl" -D "$state/data" -m fast -t 30 -w stop >/dev/null 2>&1 ||
		"${runas[@]}" "$bindir/pg_ctl" -D "$state/data" -m immediate -w stop >/dev/null 2>&1 || true
fi
rm -rf "$state"
echo "pg/down: stopped PostgreSQL and removed $state" >&2
