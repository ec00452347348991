#!/usr/bin/env bash
# Crash harness: kills runner-step (its whole process group) with SIGKILL at
# a random point, then checks the promise: the tree validates and equals the
# tree before or after the iteration, no iteration directory was reused, and
# the next runner-step recovers without manual cleanup and leaves a clean,
# committed working tree. Prints trials, recoveries and failures.
# Usage: bench/crash-harness.sh [TRIALS] [SEED]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 6
trials=${1:-200}
RANDOM=${2:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -o "$work/bin/" ./cmd/... || exit 6
export PATH="$work/bin:$PWD/tools:$PATH"
export GIT_AUTHOR_NAME=crash GIT_AUTHOR_EMAIL=crash@example.com GIT_COMMITTER_NAME=crash GIT_COMMITTER_EMAIL=crash@example.com
cat > "$work/agent" <<'SH'
#!/usr/bin/env bash
cat >/dev/null
echo "work $RUNNER_ITERATION" >> work.txt
sleep 0.$((RANDOM % 3))
if [ "$RUNNER_MODE" = decompose ]; then
  echo '{"status":"decomposed","summary":"split","children":[{"title":"A","goal":"a","acceptance":[],"next":"execute"},{"title":"B","goal":"b","acceptance":[],"next":"execute"}]}' > "$RUNNER_OUTPUT"
else
  echo '{"status":"retry","summary":"again","children":[]}' > "$RUNNER_OUTPUT"
fi
SH
chmod +x "$work/agent"
export RUNNER_AGENT_BIN=$work/agent RUNNER_MAX_ITERATIONS=1000000
repo=$work/repo
mkdir -p "$repo" && cd "$repo" || exit 6
git init -q -b main
printf 'ci:\n    @sleep 0.1\n' > justfile
git add -A && git commit -qm initial
runner-init --goal <(printf '# Crash\n\nSurvive.\n') >/dev/null
sed -i 's/^max_attempts_default = 3$/max_attempts_default = 1000000/' .runner/state/config.toml
runner-start --id run-crash >/dev/null
python3 - <<'PY'
import json
p = ".runner/state/tree.json"
t = json.load(open(p)); t["max_attempts"] = 1000000
json.dump(t, open(p, "w"), indent=2); open(p, "a").write("\n")
PY
git commit -qam 'attempts for the harness'

recovered=0; failed=0; killed=0
fail() { failed=$((failed + 1)); echo "trial $1: FAIL: $2" >&2; }
for t in $(seq 1 "$trials"); do
  before=$(cd .runner/iterations/run-crash 2>/dev/null && printf '%s ' [0-9]*)
  setsid runner-step >/dev/null 2>&1 &
  pid=$!
  sleep "0.$(printf %03d $((RANDOM % 900)))"
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 -- -"$pid" 2>/dev/null && killed=$((killed + 1))
  fi
  wait "$pid" 2>/dev/null
  if ! tree-validate >/dev/null 2>&1; then fail "$t" "tree invalid after the kill"; continue; fi
  last=$(cd .runner/iterations/run-crash 2>/dev/null && printf '%s\n' [0-9]* | grep -E '^[0-9]+$' | sort | tail -1)
  if [ -n "$last" ]; then
    d=.runner/iterations/run-crash/$last
    if [ -f "$d/tree.before.json" ] && ! cmp -s .runner/state/tree.json "$d/tree.before.json" && { [ ! -f "$d/tree.after.json" ] || ! cmp -s .runner/state/tree.json "$d/tree.after.json"; }; then
      # tree-update may have written the next tree before tree.after.json exists.
      tree-validate --prev "$d/tree.before.json" >/dev/null 2>&1 || { fail "$t" "tree is neither the pre- nor a valid post-iteration tree"; continue; }
    fi
  fi
  for e in $before; do [ -e ".runner/iterations/run-crash/$e" ] || { fail "$t" "iteration directory $e disappeared"; continue 2; }; done
  out=$(runner-step 2>&1); rc=$?
  case $rc in
    0|5) ;;
    *) fail "$t" "the next step exited $rc: $out"; continue ;;
  esac
  case $out in *"step: recovered"*) recovered=$((recovered + 1)) ;; esac
  if [ -n "$(git status --porcelain)" ]; then fail "$t" "working tree not clean after the recovery step"; continue; fi
  tree-validate >/dev/null 2>&1 || { fail "$t" "tree invalid after the recovery step"; continue; }
done
iters=$(cd .runner/iterations/run-crash && printf '%s\n' [0-9]* | grep -cE '^[0-9]+$')
commits=$(git log --format=%s | grep -c '^chore(loop): run run-crash iter ')
echo "crash harness: trials=$trials killed=$killed recovered=$recovered failures=$failed iterations=$iters commits=$commits"
[ "$iters" -eq "$commits" ] || { echo "crash harness: $iters iterations but $commits iteration commits" >&2; failed=$((failed + 1)); }
[ "$failed" -eq 0 ]
