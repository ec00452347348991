#!/usr/bin/env bash
# Whole-process wall time of tree-validate and tree-select on generated trees
# of 100 to 100,000 nodes, and ajv-cli on the same schema side by side.
# Prints a table of medians (ms) and per-node figures. Needs hyperfine;
# ajv-cli is used when present (npm install -g ajv-cli).
# Usage: bench/tree-bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -o "$work/bin/" ./cmd/tree-validate ./cmd/tree-select ./bench/gentree
command -v hyperfine >/dev/null || { echo "tree-bench: hyperfine not installed (apt-get install hyperfine)" >&2; exit 6; }

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
