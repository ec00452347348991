#!/usr/bin/env bash
# Disk faults: runs runner-step on a repository on a small tmpfs that is
# first full, then read-only. Each faulty step must fail with a short
# message and exit 6 (runner error) or 1 (refused), leave a valid tree, and
# the next step, once the fault is gone, must recover without manual
# cleanup and leave a clean, committed working tree with one commit per
# iteration. Needs root (mount). Prints one line per fault and a summary.
# Usage: bench/fault-disk.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 6
work=$(mktemp -d)
mnt=$work/mnt
cleanup() { cd / && umount "$mnt" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/... || exit 6
export PATH="$work/bin:$PWD/tools:$PATH"
# The repositories below choose no sandbox (runner-init would write bwrap
# where it works): this measures the runner itself.
export RUNNER_SANDBOX=none
export GIT_AUTHOR_NAME=fault GIT_AUTHOR_EMAIL=fault@example.com GIT_COMMITTER_NAME=fault GIT_COMMITTER_EMAIL=fault@example.com
mkdir -p "$mnt"
mount -t tmpfs -o size=16m tmpfs "$mnt" || { echo "fault-disk: cannot mount a tmpfs (run as root)" >&2; exit 6; }
cat > "$work/agent" <<'SH'
#!/usr/bin/env bash
cat >/dev/null
echo "work $RUNNER_ITERATION" >> work.txt
if [ -n "${FILL:-}" ]; then dd if=/dev/zero of="$FILL" bs=64k 2>/dev/null; fi
echo '{"status":"retry","summary":"again","children":[]}' > "$RUNNER_OUTPUT"
SH
chmod +x "$work/agent"
export RUNNER_AGENT_BIN=$work/agent
cd "$mnt" && mkdir repo && cd repo || exit 6
git init -q -b main && printf 'ci:\n    @true\n' > justfile && git add -A && git commit -qm initial
runner-init --goal <(printf '# Disk\n\nSurvive.\n') --next execute >/dev/null
sed -i 's/^max_attempts_default = 3$/max_attempts_default = 100/' .runner/state/config.toml
sed -i 's/"max_attempts": 3/"max_attempts": 100/' .runner/state/tree.json
runner-start --id run-disk >/dev/null
runner-step >/dev/null || { echo "fault-disk: the first step failed" >&2; exit 1; }

failures=0
check_fault() { # NAME RC ERR
  local lines; lines=$(printf '%s\n' "$3" | grep -c .)
  case $2 in 1|6) ;; *) echo "$1: FAIL: exit $2"; failures=$((failures + 1)) ;; esac
  echo "$1: exit $2, $lines stderr line(s): $(printf '%s' "$3" | head -1)"
}
check_after() { # NAME
  local out rc
  out=$(runner-step 2>&1); rc=$?
  case $rc in 0|5) ;; *) echo "$1: FAIL: the next step exited $rc: $out"; failures=$((failures + 1)); return ;; esac
  tree-validate >/dev/null || { echo "$1: FAIL: tree invalid"; failures=$((failures + 1)); }
  [ -z "$(git status --porcelain)" ] || { echo "$1: FAIL: dirty after recovery"; failures=$((failures + 1)); }
  echo "$1: next step exit $rc: $(printf '%s' "$out" | grep '^step:' | tr '\n' ' ')"
}

# Full disk.
dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null
err=$(runner-step 2>&1 >/dev/null); rc=$?
tree-validate >/dev/null 2>&1 || { echo "full disk: FAIL: tree invalid while full"; failures=$((failures + 1)); }
check_fault "full disk" "$rc" "$err"
rm -f "$mnt/filler"
check_after "full disk"

# The disk fills up while the agent runs (it fills it).
err=$(FILL=$mnt/filler runner-step 2>&1 >/dev/null); rc=$?
tree-validate >/dev/null 2>&1 || { echo "disk full mid-step: FAIL: tree invalid while full"; failures=$((failures + 1)); }
check_fault "disk full mid-step" "$rc" "$err"
rm -f "$mnt/filler"
check_after "disk full mid-step"

# Read-only disk.
mount -o remount,ro "$mnt"
err=$(runner-step 2>&1 >/dev/null); rc=$?
tree-validate >/dev/null 2>&1 || { echo "read-only disk: FAIL: tree invalid"; failures=$((failures + 1)); }
check_fault "read-only disk" "$rc" "$err"
mount -o remount,rw "$mnt"
check_after "read-only disk"

iters=$(cd .runner/iterations/run-disk && printf '%s\n' [0-9]* | grep -cE '^[0-9]+$')
commits=$(git log --format=%s | grep -c '^chore(loop): run run-disk iter ')
echo "fault-disk: iterations=$iters commits=$commits failures=$failures"
[ "$iters" -eq "$commits" ] && [ "$failures" -eq 0 ]
