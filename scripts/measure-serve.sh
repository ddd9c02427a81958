#!/bin/bash
# measure-serve.sh measures "neardup serve" on a data directory as BENCHMARKS.md
# ("Service at scale (issue 20)") reports it: start-up to /readyz (empty
# directory, first, twice warm, once cold after drop_caches when run as root),
# VmRSS/RssAnon/RssFile after each, then add_if_new and search phases with
# neardup-load on the same machine, the page cache (free -m) and the server's
# disk reads (/proc/PID/io) around them. The adds stay in the directory.
#
#   go build -o /tmp/nd ./cmd/neardup && go build -o /tmp/ndload ./cmd/neardup-load
#   scripts/measure-serve.sh /tmp/nd /tmp/ndload /data/imp30m 18800
set -euo pipefail
BIN=$1 LOAD=$2 D=$3 PORT=${4:-18800}
PROSE=${PROSE:-$(dirname "$0")/../testdata/corpora/en_prose.jsonl.zst}
OUT=$(mktemp -d)
PID=
start() { # $1: data directory; prints ms to /readyz and the index's load line
	local t0 t1
	t0=$(date +%s%N)
	setsid "$BIN" serve --addr 127.0.0.1:"$PORT" --data "$1" --log-level info >"$OUT/out" 2>"$OUT/err" &
	PID=$!
	until curl -s -o /dev/null -w "%{http_code}" 127.0.0.1:"$PORT"/readyz 2>/dev/null | grep -q 200; do
		kill -0 "$PID" || { cat "$OUT/err"; exit 1; }
		sleep 0.01
	done
	t1=$(date +%s%N)
	echo "ready in $(((t1 - t0) / 1000000)) ms, pid $PID; $(grep -h 'index loaded' "$OUT/err" | tail -1 | cut -c1-200)"
}
rss() { grep -E 'VmRSS|RssAnon|RssFile' /proc/"$PID"/status | tr -s ' \n' ' '; echo; }
stop() { kill "$PID"; while kill -0 "$PID" 2>/dev/null; do sleep 0.1; done; }
trap 'kill "$PID" 2>/dev/null || true; rm -rf "$OUT"' EXIT
load() { "$LOAD" -url http://127.0.0.1:"$PORT" -n 10 -d 8s -pid-a "$PID" "$@" "$PROSE" 2>&1 | grep -E "req/s|CPU"; }

echo "== empty"; start "$OUT/empty"; rss; stop
echo "== first start"; start "$D"; rss; stop
for i in 1 2; do echo "== warm start $i"; start "$D"; rss; stop; done
if [ "$(id -u)" = 0 ]; then
	echo "== cold start"; sync; echo 3 >/proc/sys/vm/drop_caches; sleep 1; start "$D"; rss; stop
fi
echo "== load"; start "$D"; rss
free -m; grep -E 'read_bytes' /proc/"$PID"/io
load -c 32 -texts 40000 -seed 11 -phases add_if_new,search
load -c 16 -texts 40000 -seed 7 -phases search,search
load -c 32 -texts 40000 -seed 7 -phases search,search
load -c 32 -texts 150000 -seed 12 -phases add_if_new
grep -E 'read_bytes' /proc/"$PID"/io
rss; free -m
curl -s 127.0.0.1:"$PORT"/v1/stats; echo
stop
