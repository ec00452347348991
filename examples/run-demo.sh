#!/usr/bin/env bash
# The treeloop demo: copies examples/textkit to a scratch directory, makes it
# a git repository, starts a run and loops the scripted stand-in agent over
# it with the real `just ci` guard until the tree is complete; then shows the
# final tree, the iterations and the git history. Every session is recorded
# in WORKDIR.cassette, and the run is replayed from it offline in a copy of
# the starting repository (WORKDIR.replay), which must reach the same tree
# with the same commit messages. The scratch directories are removed when
# the demo ends, however it ends, unless --keep is given (a WORKDIR that
# existed before is never removed).
# Usage: examples/run-demo.sh [--keep] [WORKDIR]   (needs the commands on PATH: just build)
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
keep=0
if [ "${1:-}" = --keep ]; then
  keep=1
  shift
fi
if [ -n "${1:-}" ] && [ -e "$1" ]; then
  keep=1
fi
work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/treeloop-demo.XXXXXX")}
mkdir -p "$work"
work=$(cd "$work" && pwd)
if [ "$keep" -eq 1 ]; then
  trap 'echo "demo: kept $work, $work.cassette and $work.replay"' EXIT
else
  trap 'rm -rf "$work" "$work.cassette" "$work.replay"; echo "demo: removed $work and its cassette and replay copies (--keep keeps them)"' EXIT
fi
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
# Record every session; keep a copy of the repository as the run starts.
export RUNNER_AGENT_CASSETTE="$work.cassette"
rm -rf "$work.cassette" "$work.replay"
cp -a "$work" "$work.replay"
# The guard's private caches stay with the repository they were built in.
rm -rf "$work.replay/.git/treeloop"
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
[ "$rc" -eq 0 ] || exit "$rc"

echo
echo "== replay: the recorded sessions, offline, in a copy of the starting repository =="
(cd "$work.replay" && RUNNER_AGENT=replay runner-loop)
if cmp -s .runner/state/tree.json "$work.replay/.runner/state/tree.json" &&
  [ "$(git log --format=%s)" = "$(git -C "$work.replay" log --format=%s)" ]; then
  echo "replay: $(find "$work.cassette" -mindepth 1 -maxdepth 1 -type d | wc -l) sessions from $work.cassette reached the same tree and the same $(git log --format=%s | wc -l) commit messages"
else
  echo "replay: the replayed run in $work.replay differs from the recorded one" >&2
  exit 1
fi
