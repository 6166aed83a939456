#!/usr/bin/env bash
# Runs the Windows node.exe under Wine: scripts/wine/node.sh <node args...>   (setup.sh first)
# Runs in the current folder (Z:\<cwd> for node.exe); relative and absolute Unix paths both work.
# - Output: Windows node.exe under Wine 8 cannot write to a Unix pipe (EBADF), so stdout and stderr
#   go to temporary files that are printed when it ends (not live). Standard input is /dev/null.
# - Exit code: node.exe's. 124: killed after SUPERVISOR_WINE_TIMEOUT seconds (default 300). 125: the
#   wineserver crashed twice (once is run again, see below).
# - Leaves nothing running: when the last node.sh of the prefix ends, it runs wineserver -k, which
#   also ends any Windows process a test left behind. SUPERVISOR_WINE_KEEP=1 keeps the wineserver
#   (faster start for the next run) until scripts/wine/stop.sh.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

if [ ! -f "$READY_MARK" ] || [ ! -f "$NODE_EXE" ]; then
  echo "node.sh: the Wine environment is not ready; run scripts/wine/setup.sh first" >&2
  exit 2
fi
limit=${SUPERVISOR_WINE_TIMEOUT:-300}
[[ "$limit" =~ ^[0-9]+$ ]] || { echo "node.sh: SUPERVISOR_WINE_TIMEOUT must be whole seconds, not '$limit'" >&2; exit 2; }

export NODE_PATH=$(win_path "$WIN_MODULES")
export SUPERVISOR_UNDER_WINE=1
export SUPERVISOR_SQLITE_BINDING=$(win_path "$SQLITE_WIN_BINDING")
out=$(mktemp -d "${TMPDIR:-/tmp}/supervisor-wine.XXXXXX")
exec 9>"$LOCK_FILE"
flock -s 9 # shared with other node.sh runs; setup.sh and the final cleanup take it exclusively

# timeout(1) sends TERM to wine64 at the limit and KILL 5 s later; wineserver -k below ends the
# Windows processes node.exe started (Wine detaches them from their Unix parent).
# Wine 8's wineserver itself sometimes crashes ("wineserver crashed" on stderr); node.exe then hangs
# until the limit. That is Wine failing, not a test: it is seen at once, everything of the prefix is
# ended, and the run starts again, once. A second crash fails the run (exit 125).
stopped=''
pid=''
on_signal() { stopped=$1; [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; }
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP
attempt=1
while :; do
  # Files of this attempt only: the background job opens (truncates) its redirections after the
  # fork, so a shared name would let the poll below read the first attempt's "crashed" again.
  stdout_file=$out/stdout.$attempt
  stderr_file=$out/stderr.$attempt
  # 9>&-: the lock stays this script's. Wine's services (and a wineserver) outlive node.exe; holding
  # the lock's descriptor they kept it, and after a wineserver crash left them behind every later
  # node.sh waited on flock forever.
  timeout -k 5 "$limit" wine64 "$NODE_EXE" "$@" </dev/null >"$stdout_file" 2>"$stderr_file" 9>&- &
  pid=$!
  crashed=''
  while kill -0 "$pid" 2>/dev/null; do
    if [ -z "$crashed" ] && grep -q 'wineserver crashed' "$stderr_file" 2>/dev/null; then
      crashed=1
      kill -TERM "$pid" 2>/dev/null
      wine_stop
    fi
    sleep 0.5
  done
  wait "$pid"; rc=$?
  if [ -n "$crashed" ] && [ -z "$stopped" ] && [ "$attempt" -eq 1 ]; then
    echo "node.sh: the wineserver crashed (Wine's failure, not a test's); the first attempt printed:" >&2
    cat "$stdout_file"
    cat "$stderr_file" >&2
    echo "node.sh: running again, once" >&2
    attempt=2
    continue
  fi
  break
done
trap - INT TERM HUP

cat "$stdout_file"
cat "$stderr_file" >&2
rm -rf "$out"

if [ -n "$crashed" ] && [ -z "$stopped" ]; then
  echo "node.sh: the wineserver crashed again; giving up (exit 125)" >&2
  wine_stop
  rc=125
elif [ -n "$stopped" ] || [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  [ -n "$stopped" ] && echo "node.sh: stopped by SIG$stopped; ending the prefix's Windows processes" >&2
  [ -z "$stopped" ] && echo "node.sh: timed out after ${limit}s (SUPERVISOR_WINE_TIMEOUT); ending the prefix's Windows processes" >&2
  wine_stop
  rc=124
elif [ "${SUPERVISOR_WINE_KEEP:-}" != 1 ] && flock -n -x 9; then
  wine_stop # no other node.sh is using the prefix
fi
exit "$rc"
