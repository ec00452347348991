#!/usr/bin/env bash
# Worktree start: how long `runner-start --worktree` takes to give a run a
# worktree of its own (git worktree add, the runner files, the bootstrap
# commit), against a plain `runner-start` in the checkout, in a repository
# of FILES files, without the guard baseline (--no-baseline), which costs
# a guard run either way. Prints the mean of each in ms.
# Usage: bench/worktree-start.sh [RUNS] [FILES]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
files=${2:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/...
export PATH="$work/bin:$PATH"
# The repositories below choose no sandbox (runner-init would write bwrap
# where it works): this measures the runner itself.
export RUNNER_SANDBOX=none
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
repo=$work/repo
git init -q -b main "$repo"
mkdir -p "$repo/src"
for i in $(seq "$files"); do echo "file $i" > "$repo/src/f$i.txt"; done
printf '# Bench\n\nOne node.\n' > "$work/goal.md"
runner-init -C "$repo" --goal "$work/goal.md" >/dev/null
git -C "$repo" add -A && git -C "$repo" commit -qm initial
ms() { date +%s%N; }
t0=$(ms)
for i in $(seq "$runs"); do runner-start -C "$repo" --worktree --id "wt-$i" --no-baseline >/dev/null; done
t1=$(ms)
for i in $(seq "$runs"); do
  git -C "$repo" checkout -q main
  runner-start -C "$repo" --id "in-place-$i" --no-baseline >/dev/null
done
t2=$(ms)
echo "worktree start: $(( (t1 - t0) / runs / 1000000 )) ms (mean of $runs, $files files)"
echo "in-place start: $(( (t2 - t1) / runs / 1000000 )) ms (mean of $runs)"
