#!/usr/bin/env bash
# Stops the prefix's wineserver and every Windows process in it (wineserver -k, this prefix only).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
[ -d "$WINEPREFIX" ] || exit 0
command -v wineserver >/dev/null || exit 0
if wineserver -k 2>/dev/null; then echo "stop.sh: wineserver of $WINEPREFIX stopped"; else echo "stop.sh: no wineserver running for $WINEPREFIX"; fi
