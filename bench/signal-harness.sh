#!/usr/bin/env bash
# Signal harness: stops runner-loop (two trials in three) or runner-step
# (the third) at a random moment with SIGTERM or SIGINT (to the runner
# alone, or to its whole process group) or the operator's runner-cancel,
# then checks what DESIGN.md decision 12 and the README promise:
# - the runner ends 143 (SIGTERM) or 130 (SIGINT, the cancel), its last
#   line says so (loop: interrupted reason=<SIGTERM|SIGINT|cancel-file>,
#   step: interrupted …, or the line of the iteration it committed),
#   nothing on its stderr blames a second runner for the lock, and bash
#   reported no error of the scripts or of a trap (`…: trap: …`);
# - no session began after the signal: no agent.json or guard.json of the
#   trial has a started_at later than its interrupted_at (when agent-exec
#   or guard-run learnt of it), and one that began after the moment the
#   signal was sent (sent to the runner alone, it is passed on to the
#   session's command: the delay is counted and its maximum printed) was
#   stopped at once, its iteration committed as interrupted;
# - no attempt was consumed by it: an agent or a guard that did not finish
#   on its own (the scripted agent and guard leave an end mark) belongs to
#   an iteration committed as interrupted, and every node's attempts equal
#   its iterations committed as status=retry or as guard=fail;
# - the tree and the log are whole: the tree validates, the work tree is
#   clean, HEAD is on the run branch and a descendant of the HEAD before the
#   trial with only iteration commits since, iter-log recover finds nothing
#   to finish, and at the end there is one commit per iteration directory;
# - the run record the trial wrote ends interrupted (canceled for the
#   cancel) with a reason naming the signal or the cancel file.
# A step alone whose session had ended when the cancel file came commits
# that iteration and exits 0: the request must then still be pending (it
# stops the next runner before it begins).
# It prints, per trial kind, how many signals arrived before an iteration
# began, during an agent, during a guard, and between (the step's own
# commands: allocating, recording, committing), and the failures, each
# naming its trial.
# Usage: bench/signal-harness.sh [TRIALS] [SEED]
# (HARNESS_VERBOSE=1 names the trials that ended before their signal;
# HARNESS_FAILURES=DIR keeps the logs of each failed trial there.)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 6
trials=${1:-200}
RANDOM=${2:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/signal-harness.XXXXXX")
# The work directory is removed at the end, not by an EXIT trap: bash may
# run that in a subshell (the watchdog below, killed), and once removed the
# directory in the middle of a run. Stopped early, the harness leaves it.
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/... || exit 6
cp tools/runner-step tools/runner-loop tools/treeloop-sh-setup "$work/bin/" || exit 6 # the code under test, fixed at the start
export PATH="$work/bin:$PATH"
export GIT_AUTHOR_NAME=sig GIT_AUTHOR_EMAIL=sig@example.com GIT_COMMITTER_NAME=sig GIT_COMMITTER_EMAIL=sig@example.com
# The agent: decomposes the root, then says done (the guard runs, and
# fails) or retry; it sleeps up to 0.4 s and leaves an end mark.
cat > "$work/agent" <<'SH'
#!/usr/bin/env bash
cat >/dev/null
echo "work $RUNNER_ITERATION" >> work.txt
sleep 0.$((RANDOM % 5))
if [ "$RUNNER_MODE" = decompose ]; then
  echo '{"status":"decomposed","summary":"split","children":[{"title":"A","goal":"a","acceptance":[],"next":"execute"},{"title":"B","goal":"b","acceptance":[],"next":"execute"}]}' > "$RUNNER_OUTPUT"
elif [ $((RANDOM % 2)) = 0 ]; then
  echo '{"status":"done","summary":"done","children":[]}' > "$RUNNER_OUTPUT"
else
  echo '{"status":"retry","summary":"again","children":[]}' > "$RUNNER_OUTPUT"
fi
echo "$RUNNER_ITERATION" >> "$HARNESS_MARKS/agent.end"
SH
chmod +x "$work/agent"
mkdir -p "$work/marks"
export RUNNER_AGENT_BIN=$work/agent RUNNER_MAX_ITERATIONS=1000000 HARNESS_MARKS=$work/marks
repo=$work/repo
mkdir -p "$repo" && cd "$repo" || exit 6
git init -q -b main
# The guard: red, after up to 0.3 s, with an end mark naming the iteration.
cat > justfile <<JUST
ci:
    @sleep 0.\$((RANDOM % 4)); basename "\$(ls -d .runner/iterations/run-sig/[0-9]* | sort | tail -1)" >> $work/marks/guard.end; exit 1
JUST
git add -A && git commit -qm initial
runner-init --goal <(printf '# Signals\n\nStop when asked.\n') >/dev/null
sed -i 's/^max_attempts_default = 3$/max_attempts_default = 1000000/' .runner/state/config.toml
# The agent and the guard run confined (bwrap, runner-init's default where
# it works): their end marks are written where the sandbox lets them.
sed -i "s|^writable = \[\]$|writable = [\"$work/marks\"]|" .runner/state/config.toml
grep -q "^writable = \[\"$work/marks\"\]$" .runner/state/config.toml || { echo "signal harness: cannot make $work/marks writable in config.toml" >&2; exit 6; }
runner-start --id run-sig --no-baseline >/dev/null
python3 - <<'PY'
import json
p = ".runner/state/tree.json"
t = json.load(open(p)); t["max_attempts"] = 1000000
json.dump(t, open(p, "w"), indent=2); open(p, "a").write("\n")
PY
git commit -qam 'attempts for the harness'

# check_trial TRIAL KIND SIGNAL T_SIG RC OUT_FILE ERR_FILE ITERS_BEFORE RECORDS_BEFORE PID PENDING T_START
# (PENDING: 1 when the cancel file was still there once the runner ended;
# T_START: when the runner was started)
# prints the phase the signal fell in on stdout, failures on stderr (exit 1).
check_trial() {
  python3 - "$@" <<'PY'
import json, os, re, subprocess, sys, glob
trial, kind, sig, t_sig, rc, out_file, err_file, before, records_before, pid, pending, t_start = sys.argv[1:]
t_sig = float(t_sig); rc = int(rc)
before = set(before.split()); records_before = set(records_before.split())
fails = []
def ts(s):
    # RFC 3339 with nanoseconds, UTC ("...Z") -> seconds since the epoch
    from datetime import datetime, timezone
    main, _, frac = s.rstrip("Z").partition(".")
    t = datetime.strptime(main, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
    return t + float("0." + (frac or "0"))
out = open(out_file).read().splitlines()
err = open(err_file).read()
want_rc = 143 if sig.startswith("TERM") else 130
word = {"TERM": "SIGTERM", "INT": "SIGINT"}.get(sig.split("-")[0], "cancel-file")
# A step alone that had already ended its session when the cancel file
# came commits that iteration and ends as usual (exit 0, its record
# detached for the next runner): the request stays pending and stops the
# next loop or step before it begins.
late_cancel = (kind == "step" and word == "cancel-file" and rc == 0 and pending == "1"
               and bool(out) and out[-1].startswith("step: run=") and "status=" in out[-1])
if rc != want_rc and not late_cancel:
    fails.append(f"exit {rc}, want {want_rc}; stdout: {out[-3:]}; stderr: {err.strip()[-300:]}")
runs = ".runner/iterations/run-sig"
new = sorted(d for d in (os.listdir(runs) if os.path.isdir(runs) else []) if d.isdigit() and d not in before)
if rc == want_rc and not out and not err and not new and word != "cancel-file":
    # The signal killed the script in its first instant, before its traps
    # were set: nothing had begun (no record, no iteration).
    print("phase before-traps")
    sys.exit(0)
last = out[-1] if out else ""
if kind == "loop":
    if not last.startswith(f"loop: interrupted reason={word} "):
        fails.append(f"last line {last!r}")
elif not (last.startswith(f"step: interrupted reason={word}") or (last.startswith("step: run=") and "status=" in last)):
    fails.append(f"last line {last!r}")
if re.search(r"runner-(step|loop): line [0-9]+:", err):
    fails.append("the script failed: " + err.strip()[-200:])
# bash's own word on a trap it could not run (the signal then lost).
if re.search(r"(^|: )trap: ", err, re.M):
    fails.append("a trap failed: " + err.strip()[-200:])
if "another runner holds" in err:
    fails.append("stderr blames another runner: " + err.strip()[-200:])
def marks(name):
    p = os.path.join(os.environ["HARNESS_MARKS"], name)
    return {int(m) for m in open(p).read().split()} if os.path.exists(p) else set()
agent_end, guard_end = marks("agent.end"), marks("guard.end")
phase = "start" if not new else "between"
for d in new:
    meta_p = f"{runs}/{d}/meta.json"
    if not os.path.exists(meta_p):
        fails.append(f"iteration {d} has no meta.json"); continue
    meta = json.load(open(meta_p))
    status = meta.get("status")
    for name, ends in (("agent.json", agent_end), ("guard.json", guard_end)):
        p = f"{runs}/{d}/{name}"
        if not os.path.exists(p):
            continue
        rec = json.load(open(p))
        start = rec.get("started_at")
        if not start:
            continue
        s = ts(start)
        got = rec.get("interrupted_at")
        if got and s > ts(got):
            fails.append(f"iteration {d}: the {name[:-5]} began {1000 * (s - ts(got)):.1f} ms after {name[:-5].replace('agent', 'agent-exec').replace('guard', 'guard-run')} learnt of the interruption")
        if s > t_sig:
            if status != "interrupted" or not got or s - t_sig > 1:
                fails.append(f"iteration {d}: the {name[:-5]} began {1000 * (s - t_sig):.1f} ms after the signal and ran (status {status})")
            else:
                print(f"inflight {1000 * (s - t_sig):.1f}", file=sys.stdout)
        finished = int(d) in ends
        if s <= t_sig and (not finished or s + rec["duration_ms"] / 1000 > t_sig):
            phase = name[:-5]
        if not finished and status != "interrupted":
            fails.append(f"iteration {d}: the {name[:-5]} was stopped but the iteration is {status}")
# attempts: every node's attempts equal its committed retries and failed guards
log = subprocess.run(["git", "log", "--format=%s"], capture_output=True, text=True, check=True).stdout
count = {}
for line in log.splitlines():
    parts = line.split()
    if line.startswith("chore(loop): run run-sig iter ") and ("status=retry" in parts or "guard=fail" in parts):
        n = parts[parts.index("node") + 1]; count[n] = count.get(n, 0) + 1
def walk(n):
    yield n
    for c in n["children"]:
        yield from walk(c)
for n in walk(json.load(open(".runner/state/tree.json"))):
    if n["attempts"] != count.get(n["id"], 0):
        fails.append(f"node {n['id']}: attempts={n['attempts']}, committed retries and failed guards={count.get(n['id'], 0)}")
# the run record of the trial: the one whose runner was this trial's
# process (a loop, or a step alone that opened one) and that was written
# since the trial began (an earlier trial's runner may have had the same
# pid); none when the runner stopped before it opened one (a cancel
# request pending at its start)
rec_p = None
for p in glob.glob(".runner/runs/*.json"):
    try:
        r = json.load(open(p))
    except ValueError:
        continue
    if str((r.get("runner") or {}).get("pid")) == pid and ts(r.get("updated_at", "1970-01-01T00:00:00Z")) >= float(t_start):
        rec_p = p
if late_cancel:
    pass  # its record is detached (no pid): the next runner takes it
elif rec_p is None:
    if new or not (last.endswith("reason=cancel-file steps=0") or last == "step: interrupted reason=cancel-file"):
        fails.append("no run record of this runner")
else:
    r = json.load(open(rec_p))
    want = "canceled" if word == "cancel-file" else "interrupted"
    if r.get("status") != want or word.replace("-file", "") not in r.get("reason", ""):
        fails.append(f"record {os.path.basename(rec_p)}: status={r.get('status')} reason={r.get('reason')!r}, want {want} naming {word}")
print("phase " + phase)
for f in fails:
    print(f"trial {trial} ({kind} {sig}): FAIL: {f}", file=sys.stderr)
sys.exit(1 if fails else 0)
PY
}

declare -A phases=()
failed=0; missed=0; inflight=0; inflight_max=0
fail() { failed=$((failed + 1)); echo "trial $1: FAIL: $2" >&2; }
for t in $(seq 1 "$trials"); do
  before=$(cd .runner/iterations/run-sig 2>/dev/null && { shopt -s nullglob; printf "%s " [0-9]*; })
  records_before=$(cd .runner/runs 2>/dev/null && { shopt -s nullglob; printf "%s " *.json; })
  head_before=$(git rev-parse HEAD)
  flock -n .runner/lock true || { fail "$t" "a runner still holds .runner/lock before the trial"; flock -w 60 .runner/lock true; }
  kind=loop; [ $((RANDOM % 3)) -eq 0 ] && kind=step
  case $((RANDOM % 5)) in
    0) sig=TERM-runner ;; 1) sig=INT-runner ;; 2) sig=TERM-group ;; 3) sig=INT-group ;; 4) sig=cancel ;;
  esac
  # Started in the background, a command would inherit SIGINT ignored
  # (and bash could not trap it): env gives it the default, as a terminal's
  # foreground job has it.
  t_start=$EPOCHREALTIME
  setsid env --default-signal=INT "runner-$kind" </dev/null >"$work/out" 2>"$work/err" &
  pid=$!
  # The runner's script has started (setsid and env have run: a SIGINT to
  # setsid, started in the background, would be ignored).
  while kill -0 "$pid" 2>/dev/null; do
    args=()
    mapfile -d '' args < "/proc/$pid/cmdline" 2>/dev/null
    [ "${args[0]:-}" = bash ] && [ "${args[1]:-}" = "$work/bin/runner-$kind" ] && break
    sleep 0.005
  done
  # A step alone ends after one iteration: it is stopped sooner.
  if [ "$kind" = loop ]; then
    sleep "$((RANDOM % 2)).$(printf %03d $((RANDOM % 1000)))"
  else
    sleep "0.$(printf %03d $((RANDOM % 800)))"
  fi
  t_sig=$EPOCHREALTIME
  # A runner that has exited but is not yet waited for (a zombie) still
  # takes a signal without an error: that trial missed its signal too.
  state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
  if [ "$state" = Z ]; then
    sent=1
  else
    case $sig in
      TERM-runner) kill -TERM "$pid" 2>/dev/null ;;
      INT-runner) kill -INT "$pid" 2>/dev/null ;;
      TERM-group) kill -TERM -- "-$pid" 2>/dev/null ;;
      INT-group) kill -INT -- "-$pid" 2>/dev/null ;;
      # The cancel counts from the moment runner-cancel has written the file.
      cancel) kill -0 "$pid" 2>/dev/null && runner-cancel --by harness >/dev/null 2>&1 && t_sig=$EPOCHREALTIME ;;
    esac
    sent=$?
  fi
  # A runner that does not stop within a minute is a failure (and is killed).
  ( sleep 60; kill -KILL -- "-$pid" 2>/dev/null ) &
  watchdog=$!
  wait "$pid"
  rc=$?
  if ! kill "$watchdog" 2>/dev/null; then
    fail "$t" "the runner did not stop within 60 s of the signal ($kind $sig)"
  fi
  wait "$watchdog" 2>/dev/null
  pending=0; [ ! -e .runner/cancel ] || pending=1
  rm -f .runner/cancel
  if [ "$sent" -ne 0 ]; then
    # The runner had ended before the signal (a step alone ends after one
    # iteration): nothing to check but the tree.
    missed=$((missed + 1))
    phase=missed
    [ -z "${HARNESS_VERBOSE:-}" ] || echo "trial $t ($kind $sig): ended before the signal, exit $rc: $(tail -n 1 "$work/out") $(tail -n 2 "$work/err")" >&2
  else
    if ! report=$(check_trial "$t" "$kind" "$sig" "$t_sig" "$rc" "$work/out" "$work/err" "$before" "$records_before" "$pid" "$pending" "$t_start"); then
      failed=$((failed + 1))
      # HARNESS_FAILURES=DIR keeps what a failed trial left, for a look.
      if [ -n "${HARNESS_FAILURES:-}" ]; then
        mkdir -p "$HARNESS_FAILURES/trial-$t"
        cp -r "$work/out" "$work/err" .runner/iterations/run-sig .runner/runs "$HARNESS_FAILURES/trial-$t/" 2>/dev/null
      fi
    fi
    phase=""
    while read -r key value; do
      case $key in
        phase) phase=$value ;;
        inflight) inflight=$((inflight + 1)); inflight_max=$(python3 -c "print(max($inflight_max, $value))") ;;
      esac
    done <<< "$report"
  fi
  phases[$kind-$phase]=$((${phases[$kind-$phase]:-0} + 1))
  tree-validate >/dev/null 2>&1 || { fail "$t" "tree invalid"; continue; }
  [ -z "$(git status --porcelain)" ] || { fail "$t" "work tree not clean: $(git status --porcelain | head -3)"; continue; }
  [ "$(git symbolic-ref -q --short HEAD)" = runner/run-sig ] || { fail "$t" "not on runner/run-sig"; continue; }
  git merge-base --is-ancestor "$head_before" HEAD || { fail "$t" "HEAD is not a descendant of the HEAD before the trial"; continue; }
  if git log --format=%s "$head_before..HEAD" | grep -qv '^chore(loop): run run-sig iter '; then
    fail "$t" "a commit since the trial's start is not an iteration commit"; continue
  fi
  case $(iter-log recover) in action=none*) ;; *) fail "$t" "an iteration was left unfinished: $(iter-log recover)" ;; esac
done
iters=$(cd .runner/iterations/run-sig && printf '%s\n' [0-9]* | grep -cE '^[0-9]+$')
commits=$(git log --format=%s | grep -c '^chore(loop): run run-sig iter ')
[ "$iters" -eq "$commits" ] || { echo "signal harness: $iters iterations but $commits iteration commits" >&2; failed=$((failed + 1)); }
summary=()
for k in "${!phases[@]}"; do summary+=("$k=${phases[$k]}"); done
echo "signal harness: trials=$trials missed=$missed failures=$failed iterations=$iters commits=$commits; sessions begun while the signal was passed on to them: $inflight (at most $inflight_max ms after it was sent); signal during:$(printf ' %s' "${summary[@]}" | tr ' ' '\n' | sort | tr '\n' ' ')"
cd / && rm -rf "$work"
[ "$failed" -eq 0 ]
