#!/usr/bin/env bash
# Runs examples/evolve end to end on a copy of the core in a fresh Git repository: promotion moves
# a branch and the files of the core it evolves, so never the project's own checkout.
# Usage: bash examples/evolve/try.sh [STATE_DIR]   (EVOLVE_DEMO_DIR: where the copy goes)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${EVOLVE_DEMO_DIR:-$(mktemp -d)}
state=${1:-$(mktemp -d)}
chmod 700 "$state"
mkdir -p "$work"
cp "$here/agent.yaml" "$here/script.yaml" "$work/"
git -C "$work" init -q -b main
git -C "$work" add -A
git -C "$work" -c user.name=demo -c user.email=demo@example.invalid commit -qm "the core before it evolves"
echo "== the core, a Git repository: $work"
# The operator's rule answers evolve_core's prompts (the promotion); without it the run asks at the
# terminal (or, with --await-approval S, waits for supervisor approvals from another one).
node "$here/../../bin/supervisor.js" run "$work" --state-dir "$state" --approve evolve_core
echo "== the core's history"
git -C "$work" log --oneline
echo "== evolve runs (supervisor evolve list --state-dir $state)"
node "$here/../../bin/supervisor.js" evolve list --state-dir "$state"
