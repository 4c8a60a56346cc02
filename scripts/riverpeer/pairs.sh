#!/usr/bin/env bash
# pairs.sh ROUND — one alternated round: Herald's bench and the River peer,
# continuous then backlog, Herald first on even rounds. Output in results/.
set -u
cd "$(dirname "$0")"
r=${1:?round}
HERALD=${HERALD:-/tmp/herald-main}
PG=${PG:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
export HERALD
herald() { # mode extra-flags…
  local m=$1; shift
  { echo "load before: $(cat /proc/loadavg)"
    "$HERALD" bench "$@" --users 10000 --notifications 100000 --recipients 100 --concurrency 4 --database "$PG" 2>&1 |
      tr '\r' '\n' | grep -v '^\(users\|trigger\|deliver\|fill\|drain\) '
    echo "load after: $(cat /proc/loadavg)"; } > "results/herald-$m-r$r.txt"
}
river() { ./run.sh "$1" > "results/river-$1-r$r.txt" 2>&1; }
for m in continuous backlog; do
  flag=; [ "$m" = backlog ] && flag=--backlog
  if [ $((r % 2)) = 0 ]; then herald $m $flag; river $m; else river $m; herald $m $flag; fi
done
