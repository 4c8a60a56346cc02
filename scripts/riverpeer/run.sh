#!/usr/bin/env bash
# run.sh MODE [riverpeer flags…] — start Herald's FCM emulator, run the River
# peer in MODE (backlog | continuous) against it, stop the emulator.
#
# Environment:
#   HERALD      the herald binary (default /tmp/herald-main; build it with
#               `go build -o /tmp/herald-main ./cmd/herald` at the repository root)
#   EMU_ADDR    emulator listen address (default 127.0.0.1:18931)
#   DATABASE    PostgreSQL URL (default postgres://postgres@127.0.0.1:5432/riverpeer?sslmode=disable)
#   EMU_LOG     where the emulator's log goes (default /dev/null: it logs
#               every accepted message at info level)
#   EMULATOR    herald (default): `$HERALD emulate fcm`; quiet: ./quietfcm,
#               the same emulator package configured as `herald bench` runs
#               it in process (no log line per message, MaxRecorded 1)
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:?usage: run.sh backlog|continuous [riverpeer flags…]}
shift
HERALD=${HERALD:-/tmp/herald-main}
EMU_ADDR=${EMU_ADDR:-127.0.0.1:18931}
DATABASE=${DATABASE:-postgres://postgres@127.0.0.1:5432/riverpeer?sslmode=disable}
EMU_LOG=${EMU_LOG:-/dev/null}

EMULATOR=${EMULATOR:-herald}

go build -o ./riverpeer-bin .
creds=$(mktemp /tmp/riverpeer-creds.XXXXXX.json)
rm -f "$creds"
case $EMULATOR in
herald) "$HERALD" emulate fcm --addr "$EMU_ADDR" --project riverpeer --credentials-out "$creds" 2>"$EMU_LOG" & ;;
quiet)
  (cd quietfcm && go build -o ../quietfcm-bin .)
  ./quietfcm-bin --addr "$EMU_ADDR" --project riverpeer --credentials-out "$creds" 2>"$EMU_LOG" & ;;
*) echo "run.sh: EMULATOR must be herald or quiet" >&2; exit 2 ;;
esac
emu=$!
trap 'kill "$emu" 2>/dev/null; wait "$emu" 2>/dev/null; rm -f "$creds"' EXIT
for _ in $(seq 100); do
  [ -s "$creds" ] && curl -fsS "http://$EMU_ADDR/emulator/stats" >/dev/null 2>&1 && break
  sleep 0.1
done
[ -s "$creds" ] || { echo "run.sh: the emulator did not start" >&2; exit 1; }
echo "emulator: $EMULATOR (pid $emu); load average before: $(cat /proc/loadavg)"
./riverpeer-bin -mode "$mode" -database "$DATABASE" -fcm-endpoint "http://$EMU_ADDR" \
  -credentials "$creds" -emulator-pid "$emu" "$@"
echo "emulator stats: $(curl -fsS "http://$EMU_ADDR/emulator/stats")"
echo "load average after: $(cat /proc/loadavg)"
