#!/usr/bin/env bash
# Whole-process wall time of tree-validate and tree-select on generated trees
# of 100 to 100,000 nodes, and ajv-cli on the same schema side by side.
# Prints a table of medians (ms) and per-node figures. Needs hyperfine;
# ajv-cli is used when present (npm install -g ajv-cli).
# First the start cost side by side with a binary that only links
# jsonschema/v5 (no hyperfine needed).
# Usage: bench/tree-bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -ldflags="-s -w" -o "$work/bin/" ./cmd/tree-validate ./cmd/tree-select ./bench/gentree ./bench/schemaonly
"$work/bin/gentree" -n 100 > "$work/t100.json"

# Start cost, side by side (the commands alternate, so load hits them
# alike): a binary that only links jsonschema/v5 against tree-validate
# (which links it to word errors) and tree-select (which does not) at 100
# nodes. Target: tree-validate <= 1.3x the schema-only binary.
python3 - "$work" "$((runs * 4))" <<'PY'
import os, statistics, sys, time
work, runs = sys.argv[1], int(sys.argv[2])
cmds = {
    "schema-only binary": [f"{work}/bin/schemaonly"],
    "tree-validate 100 nodes": [f"{work}/bin/tree-validate", f"{work}/t100.json"],
    "tree-select 100 nodes": [f"{work}/bin/tree-select", f"{work}/t100.json"],
}
times = {k: [] for k in cmds}
devnull = os.open(os.devnull, os.O_WRONLY)
for i in range(runs + 3):
    for k, argv in cmds.items():
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
        _, status = os.waitpid(pid, 0)
        dt = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"tree-bench: {argv} failed")
        if i >= 3:  # warm-up
            times[k].append(dt * 1000)
base = statistics.median(times["schema-only binary"])
print(f"\nstart cost, median of {runs} alternating runs (load {open('/proc/loadavg').read().split()[0]})")
for k, v in times.items():
    m = statistics.median(v)
    print(f"{k:26s} {m:7.2f} ms  {m / base:5.2f}x")
PY

if ! command -v hyperfine >/dev/null; then
  echo "tree-bench: hyperfine not installed (apt-get install hyperfine): the table by tree size is skipped" >&2
  exit 6
fi

median_ms() { # command...
  hyperfine -N --runs "$runs" --warmup 2 --export-json "$work/h.json" "$*" >/dev/null 2>&1
  python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$work/h.json"
}

printf '%-8s %12s %12s %12s %12s %12s %14s\n' nodes validate prev select ajv ajv/validate us/node
for n in 100 1000 10000 100000; do
  "$work/bin/gentree" -n "$n" > "$work/t$n.json"
  v=$(median_ms "$work/bin/tree-validate $work/t$n.json")
  p=$(median_ms "$work/bin/tree-validate --prev $work/t$n.json $work/t$n.json")
  s=$(median_ms "$work/bin/tree-select $work/t$n.json")
  a=-; ratio=-
  if command -v ajv >/dev/null && [ "$n" -le 10000 ]; then
    a=$(median_ms "ajv validate --spec=draft2020 -s schemas/task_tree.v1.schema.json -d $work/t$n.json")
    ratio=$(python3 -c "print('%.1fx' % ($a/$v))")
  fi
  per=$(python3 -c "print('%.2f' % ($v*1000/$n))")
  printf '%-8s %12s %12s %12s %12s %12s %14s\n' "$n" "$v" "$p" "$s" "$a" "$ratio" "$per"
done
