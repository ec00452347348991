#!/usr/bin/env bash
# What evidence by name adds to a guard's run, side by side in one run on
# a Go module and a pytest project of a few hundred tests each (DESIGN.md
# decisions 24 and 25). For each project two repositories step in turn:
#   plain     [guard] results = "off", caches = "shared": the guard's exit
#             status alone (go test ./..., python3 -m pytest -q);
#   evidence  results = "auto" (go test -json, pytest --junitxml), the
#             witness on the node's test file, private caches.
# Every step is an execute leaf whose agent adds a function and its test,
# so the witness runs each time. Per step: the guard's own time (the
# guard process, guard.json duration_ms) and guard-run's whole wall time
# (RUNNER_TRACE); the added cost is evidence's guard-run less plain's, as
# a share of plain's guard. The witness's own run (its checkout and one
# run of the node's test file on the base code, one start of the test
# runner) goes beside the guard's: its time, and its share of plain's
# guard, are what it would add run after the guard instead. Prints one
# markdown table of medians (ms).
# Usage: bench/evidence-bench.sh [-n STEPS] [-t TESTS]
#        (defaults: 11 steps, 300 tests; the first step of each repository
#        warms its caches and is left out)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=11 tests=300
while getopts n:t: opt; do
  case $opt in
    n) steps=$OPTARG ;;
    t) tests=$OPTARG ;;
    *) echo "usage: bench/evidence-bench.sh [-n STEPS] [-t TESTS]" >&2; exit 80 ;;
  esac
done
py=/usr/bin/python3
"$py" -m pytest --version >/dev/null 2>&1 || { echo "evidence-bench: $py -m pytest does not run (apt-get install python3-pytest)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/evidence-bench.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/...
cp tools/runner-step tools/runner-loop tools/treeloop-sh-setup "$work/bin/"
export PATH=$work/bin:$PATH RUNNER_SANDBOX=none RUNNER_MAX_ITERATIONS=100000
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# The agent: node N (its title "step N") adds f<N> and its test to module
# N mod 10 of the project it finds.
cat > "$work/agent" <<'SH'
#!/usr/bin/env bash
set -eu
cat >/dev/null
n=$(grep -m1 '^# ' .runner/context/goal.md | sed 's/^# step //')
m=$((n % 10))
if [ -e go.mod ]; then
  printf '\n// F%s is %s.\nfunc F%s() int { return %s }\n' "$n" "$n" "$n" "$n" >> "p$m/p.go"
  printf 'package p%s\n\nimport "testing"\n\nfunc TestF%s(t *testing.T) {\n\tif F%s() != %s {\n\t\tt.Fatal("F%s")\n\t}\n}\n' "$m" "$n" "$n" "$n" "$n" > "p$m/f${n}_test.go"
else
  printf '\n\ndef f%s():\n    return %s\n' "$n" "$n" >> "pkg/m$m.py"
  printf '\n\ndef test_f%s():\n    assert m%s.f%s() == %s\n' "$n" "$m" "$n" "$n" >> "tests/test_m$m.py"
fi
echo '{"status":"done","summary":"added","children":[]}' > "$RUNNER_OUTPUT"
SH
chmod +x "$work/agent"
export RUNNER_AGENT_BIN=$work/agent

# project DIR KIND: a Go module or a pytest project of $tests tests in ten
# packages or modules, a run started on a plan of $steps leaves.
project() {
  local dir=$1 kind=$2
  mkdir -p "$dir"
  python3 - "$dir" "$kind" "$tests" <<'PY'
import os, sys
d, kind, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
per = n // 10
if kind == "go":
    open(f"{d}/go.mod", "w").write("module example.com/bench\n\ngo 1.22\n")
    for m in range(10):
        os.makedirs(f"{d}/p{m}", exist_ok=True)
        src = [f"package p{m}\n"]
        tst = [f"package p{m}\n\nimport \"testing\"\n"]
        for i in range(per):
            src.append(f"\n// G{i} is a small sum.\nfunc G{i}(a int) int {{\n\ts := 0\n\tfor j := 0; j < a; j++ {{\n\t\ts += j\n\t}}\n\treturn s\n}}\n")
            tst.append(f"\nfunc TestG{i}(t *testing.T) {{\n\tif G{i}(4) != 6 {{\n\t\tt.Fatal(\"G{i}\")\n\t}}\n}}\n")
        open(f"{d}/p{m}/p.go", "w").write("".join(src))
        open(f"{d}/p{m}/p_test.go", "w").write("".join(tst))
else:
    os.makedirs(f"{d}/pkg", exist_ok=True)
    os.makedirs(f"{d}/tests", exist_ok=True)
    open(f"{d}/pkg/__init__.py", "w").write("")
    open(f"{d}/pyproject.toml", "w").write('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    open(f"{d}/.gitignore", "w").write("__pycache__/\n")
    for m in range(10):
        open(f"{d}/pkg/m{m}.py", "w").write("".join(f"\n\ndef g{i}(a):\n    return sum(range(a))\n" for i in range(per)))
        open(f"{d}/tests/test_m{m}.py", "w").write(f"from pkg import m{m}\n" + "".join(f"\n\ndef test_g{i}():\n    assert m{m}.g{i}(4) == 6\n" for i in range(per)))
PY
  {
    echo "# Bench"
    echo
    for i in $(seq 1 "$steps"); do echo "- [ ] step $i"; done
  } > "$work/plan-$kind.md"
}

# setup DIR KIND MODE: the repository, runner-init on the plan, the guard
# of MODE (plain or evidence), runner-start.
# shellcheck disable=SC2016  # ${RUNNER_TEST_…} are the runner's, not the shell's
setup() {
  local dir=$1 kind=$2 mode=$3 guard witness
  project "$dir" "$kind"
  cd "$dir"
  git init -q -b main && git add -A && git commit -qm initial
  runner-init --plan "$work/plan-$kind.md" --sandbox none >/dev/null 2>&1
  if [ "$kind" = go ]; then
    guard='["go", "test", "./..."]'
    [ "$mode" = plain ] || guard='["go", "test", "-json", "./..."]'
    witness='["go", "test", "-json", "${RUNNER_TEST_DIRS}"]'
  else
    guard='["'$py'", "-m", "pytest", "-q", "-p", "no:cacheprovider"]'
    [ "$mode" = plain ] || guard='["'$py'", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=${RUNNER_TEST_RESULTS}/pytest.xml"]'
    witness='["'$py'", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=${RUNNER_TEST_RESULTS}/pytest.xml", "${RUNNER_TEST_FILES}"]'
  fi
  local results=off caches=shared
  [ "$mode" = plain ] || { results=auto; caches=private; }
  python3 - .runner/state/config.toml "$guard" "$witness" "$results" "$caches" <<'PY'
import re, sys
p, guard, witness, results, caches = sys.argv[1:]
s = open(p).read()
for key, value in (("command", guard), ("results", f'"{results}"'), ("witness", witness), ("caches", f'"{caches}"')):
    s, n = re.subn(rf"(?m)^{key} = .*$", lambda m: f"{key} = {value}", s, count=1)
    assert n == 1, key
open(p, "w").write(s)
PY
  git add -A && git commit -qm "bench: $mode guard"
  runner-start --id "bench-$mode" >/dev/null 2>&1
  cd - >/dev/null
}

# step DIR: one traced runner-step; prints "guard_ms guard_run_ms
# witness_ms" (0 without a witness).
step() {
  local dir=$1 err iter
  err=$(cd "$dir" && RUNNER_TRACE=1 runner-step 2>&1 >/dev/null) || { echo "evidence-bench: runner-step failed in $dir: $err" >&2; exit 1; }
  iter=$(cd "$dir" && find .runner/iterations -mindepth 2 -maxdepth 2 -name '0*' | sort | tail -1)
  printf '%s %s %s\n' "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["duration_ms"])' "$dir/$iter/guard.json")" \
    "$(printf '%s\n' "$err" | sed -n 's/^trace: cmd=guard-run ms=\([0-9.]*\).*/\1/p' | tail -1)" \
    "$(python3 -c 'import json,sys; print(((json.load(open(sys.argv[1])).get("evidence") or {}).get("witness") or {}).get("duration_ms", 0))' "$dir/$iter/guard.json")"
  grep -q '"outcome": "pass"' "$dir/$iter/guard.json" || { echo "evidence-bench: the guard did not pass in $dir/$iter" >&2; exit 1; }
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.0f\n", (a[NR/2]+a[NR/2+1])/2}'; }

echo "| project | plain guard | plain guard-run | evidence guard | evidence guard-run | added | added / plain guard | witness's own run | witness / plain guard |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for kind in go python; do
  for mode in plain evidence; do setup "$work/$kind-$mode" "$kind" "$mode"; done
  : > "$work/$kind.plain" && : > "$work/$kind.evidence"
  for i in $(seq 1 "$steps"); do
    for mode in plain evidence; do
      r=$(step "$work/$kind-$mode")
      [ "$i" -eq 1 ] || echo "$r" >> "$work/$kind.$mode"
    done
  done
  pg=$(cut -d' ' -f1 "$work/$kind.plain" | median)
  pr=$(cut -d' ' -f2 "$work/$kind.plain" | median)
  eg=$(cut -d' ' -f1 "$work/$kind.evidence" | median)
  er=$(cut -d' ' -f2 "$work/$kind.evidence" | median)
  added=$(awk -v e="$er" -v p="$pr" 'BEGIN {printf "%.0f", e - p}')
  share=$(awk -v a="$added" -v g="$pg" 'BEGIN {printf "%.2f", a / g}')
  wit=$(cut -d' ' -f3 "$work/$kind.evidence" | median)
  alone=$(awk -v w="$wit" -v g="$pg" 'BEGIN {printf "%.2f", w / g}')
  echo "| $kind, $tests tests | $pg | $pr | $eg | $er | $added | $share | $wit | $alone |"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
