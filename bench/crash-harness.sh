#!/usr/bin/env bash
# Crash harness: kills runner-step (its whole process group) with SIGKILL at
# a random point, waits until every process of the group is gone (the lock
# released), then checks what docs/operations.md ("Crashes and a second
# runner") promises:
# - right after the kill: the tree validates and is the tree before the
#   iteration, or the tree after it (in the tree meta.json names, or the
#   tree tree-update makes from the snapshot and output.json when the kill
#   came between tree-update and iter-log end); no iteration directory
#   vanished;
# - after the next runner-step (which must recover without manual
#   cleanup): a clean working tree, a valid tree, on the run branch, HEAD a
#   descendant of the HEAD before the trial and an iteration commit, every
#   commit since then an iteration commit, the protected justfile and the
#   runner-owned files as at the start, and every node's attempts equal to
#   its iterations committed as status=retry (an interrupted iteration
#   consumes none);
# - at the end: one commit per iteration directory.
# Prints trials, kills, recoveries and failures; a failure names the trial.
# Usage: bench/crash-harness.sh [TRIALS] [SEED]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 6
trials=${1:-200}
RANDOM=${2:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/... || exit 6
cp tools/runner-step tools/treeloop-sh-setup "$work/bin/" || exit 6 # the code under test, fixed at the start
export PATH="$work/bin:$PATH"
# The repositories below choose no sandbox (runner-init would write bwrap
# where it works): this measures the runner itself.
export RUNNER_SANDBOX=none
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
mkdir -p "$work/start"
cp justfile .runner/GOAL.md .runner/.gitignore .runner/state/config.toml .runner/state/schema.json \
  .runner/state/agent_output.schema.json "$work/start/"

# holders: the processes holding .runner/lock open (pid and command line).
holders() {
  local lock fd
  lock=$(readlink -f .runner/lock)
  for fd in /proc/[0-9]*/fd/*; do
    [ "$(readlink "$fd" 2>/dev/null)" = "$lock" ] || continue
    fd=${fd#/proc/}; fd=${fd%%/*}
    printf '%s(%s) ' "$fd" "$(tr '\0' ' ' < "/proc/$fd/cmdline" 2>/dev/null)"
  done
}
# attempts_match: every node's attempts equal its iterations committed as
# status=retry (the harness agent never says done).
attempts_match() {
  python3 - "$1" <<'PY'
import json, subprocess, sys, collections
log = subprocess.run(["git", "log", "--format=%s"], capture_output=True, text=True, check=True).stdout
retries = collections.Counter()
for line in log.splitlines():
    parts = line.split()
    if line.startswith("chore(loop): run run-crash iter ") and "status=retry" in parts:
        retries[parts[parts.index("node") + 1]] += 1
def walk(n):
    yield n
    for c in n["children"]:
        yield from walk(c)
bad = [f"{n['id']}: attempts={n['attempts']} retries={retries[n['id']]}" for n in walk(json.load(open(".runner/state/tree.json"))) if n["attempts"] != retries[n["id"]]]
if bad:
    print("trial %s: attempts do not match the committed retries: %s" % (sys.argv[1], "; ".join(bad)), file=sys.stderr)
    sys.exit(1)
PY
}

# tree_before DIR OUT: the tree iteration DIR began with, in OUT: the
# blob its begin.json names (tree_blob), or its tree.before.json (an
# older directory); false before begin.json.
tree_before() {
  local id
  [ -f "$1/begin.json" ] || return 1
  id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("tree_blob", ""))' "$1/begin.json") || return 1
  if [ -n "$id" ]; then git cat-file blob "$id" > "$2"; else cp "$1/tree.before.json" "$2"; fi
}
# tree_after DIR OUT: the tree after iteration DIR, in OUT, once iter-log
# end completed its log: in the tree meta.json names (staged_tree, else
# the commit), or its tree.after.json (an older directory); false before.
tree_after() {
  local rev
  [ -f "$1/meta.json" ] || return 1
  rev=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m.get("staged_tree") or m.get("commit") or "")' "$1/meta.json") || return 1
  if [ -n "$rev" ]; then git cat-file blob "$rev:.runner/state/tree.json" > "$2"; else cp "$1/tree.after.json" "$2"; fi
}

recovered=0; failed=0; killed=0
fail() { failed=$((failed + 1)); echo "trial $1: FAIL: $2" >&2; }
for t in $(seq 1 "$trials"); do
  before=$(cd .runner/iterations/run-crash 2>/dev/null && { shopt -s nullglob; printf "%s " [0-9]*; })
  head_before=$(git rev-parse HEAD)
  setsid runner-step >/dev/null 2>&1 &
  pid=$!
  sleep "0.$(printf %03d $((RANDOM % 900)))"
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 -- -"$pid" 2>/dev/null && killed=$((killed + 1))
  fi
  wait "$pid" 2>/dev/null
  # SIGKILL is not instant: a member of the group in the middle of an
  # fsync exits when the disk answers, and holds the lock until then.
  # Wait for the lock (all of the step's processes gone); a holder still
  # there after 60 s is a survivor, named.
  if ! flock -w 60 .runner/lock true; then fail "$t" "the lock is still held 60 s after the kill by: $(holders)"; continue; fi
  if ! tree-validate >/dev/null 2>&1; then fail "$t" "tree invalid after the kill"; continue; fi
  last=$(cd .runner/iterations/run-crash 2>/dev/null && printf '%s\n' [0-9]* | grep -E '^[0-9]+$' | sort | tail -1)
  if [ -n "$last" ]; then
    d=.runner/iterations/run-crash/$last
    snap=$work/tree-before.json after=$work/tree-after.json
    if tree_before "$d" "$snap" && ! cmp -s .runner/state/tree.json "$snap" && { ! tree_after "$d" "$after" || ! cmp -s .runner/state/tree.json "$after"; }; then
      # Killed between tree-update and iter-log end: the tree must be the
      # one tree-update makes from the snapshot and the agent's output.
      expect=$work/expected-tree.json
      cp "$snap" "$expect"
      sel=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["node_id"])' "$d/begin.json")
      if tree_after "$d" "$after" || [ ! -f "$d/output.json" ] ||
        ! tree-update --snapshot "$snap" --output "$d/output.json" --error-log "$work/errors.log" --tree "$expect" --selected "$sel" >/dev/null 2>&1 ||
        ! cmp -s .runner/state/tree.json "$expect"; then
        fail "$t" "the tree is neither the tree before iteration $last nor the tree after it"; continue
      fi
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
  [ "$(git symbolic-ref -q --short HEAD)" = runner/run-crash ] || { fail "$t" "not on runner/run-crash after the recovery step"; continue; }
  git merge-base --is-ancestor "$head_before" HEAD || { fail "$t" "HEAD is not a descendant of the HEAD before the trial"; continue; }
  if git log --format=%s "$head_before..HEAD" | grep -qv '^chore(loop): run run-crash iter '; then
    fail "$t" "a commit since the trial's start is not an iteration commit: $(git log --oneline "$head_before..HEAD")"; continue
  fi
  [ -n "$(git log --format=%s "$head_before..HEAD")" ] || { fail "$t" "no iteration committed by the recovery step"; continue; }
  for f in justfile GOAL.md .gitignore config.toml schema.json agent_output.schema.json; do
    case $f in justfile) p=justfile ;; GOAL.md|.gitignore) p=.runner/$f ;; *) p=.runner/state/$f ;; esac
    cmp -s "$work/start/$f" "$p" || { fail "$t" "$p changed"; continue 2; }
  done
  attempts_match "$t" || { failed=$((failed + 1)); continue; }
done
iters=$(cd .runner/iterations/run-crash && printf '%s\n' [0-9]* | grep -cE '^[0-9]+$')
commits=$(git log --format=%s | grep -c '^chore(loop): run run-crash iter ')
echo "crash harness: trials=$trials killed=$killed recovered=$recovered failures=$failed iterations=$iters commits=$commits"
[ "$iters" -eq "$commits" ] || { echo "crash harness: $iters iterations but $commits iteration commits" >&2; failed=$((failed + 1)); }
[ "$failed" -eq 0 ]
