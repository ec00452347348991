#!/usr/bin/env bash
# The treeloop demo: copies examples/textkit to a scratch directory, makes it
# a git repository, starts a run and loops the scripted stand-in agent over
# it with the real `just ci` guard until the tree is complete; then shows the
# final tree, the iterations and the git history.
# Usage: examples/run-demo.sh [WORKDIR]   (needs the commands on PATH: just build)
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/treeloop-demo.XXXXXX")}
mkdir -p "$work"
cp -R "$src/textkit/." "$work/"
cd "$work"
echo "demo: working in $work"
git init -q -b main
git add -A
git -c user.name=demo -c user.email=demo@example.com commit -q -m "textkit: initial"
runner-init --goal "$src/GOAL.md" >/dev/null
export RUNNER_AGENT=command RUNNER_AGENT_BIN="$src/agent/scripted-agent"
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-treeloop demo} GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-demo@example.com}
export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-treeloop demo} GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-demo@example.com}
runner-start
echo
set +e
runner-loop
rc=$?
set -e
echo
echo "== final tree (.runner/state/tree.json) =="
tree-select || true
grep -E '"(id|title|passes|attempts)"' .runner/state/tree.json | paste - - - - | sed 's/[[:space:]]\+/ /g'
echo
echo "== iterations (.runner/iterations/) =="
for m in .runner/iterations/*/*/meta.json; do
  d=$(dirname "$m")
  printf '%s  %s\n' "${d#.runner/iterations/}" "$(tr -d '\n ' < "$m" | grep -o '"node_id":"[^"]*"\|"status":"[^"]*"\|"guard":"[^"]*"' | head -3 | paste -sd ' ')"
done
echo
echo "== git log --oneline =="
git log --oneline
exit $rc
