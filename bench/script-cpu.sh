#!/usr/bin/env bash
# What each testscript costs the suite in CPU time: on a 2-core machine
# the suite is CPU-bound (testscripts kept 1.8 cores busy), so CPU
# seconds, not wall seconds, say where the time goes and what a change
# saved. Runs the scripts matching PATTERN (default: all) one at a time
# (-test.parallel=1), each script's figures taken from getrusage over its
# run (testscripts/cpu_test.go), then prints the scripts by CPU seconds
# with their share of the total, the wall seconds beside them.
# Usage: bench/script-cpu.sh [PATTERN]   (a -test.run pattern under TestScripts/)
set -euo pipefail
cd "$(dirname "$0")/.."
pattern=${1:-.}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/testscripts.test" ./testscripts
echo "script-cpu: running TestScripts/$pattern one at a time; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
start=$SECONDS
rc=0
(cd testscripts && TREELOOP_SCRIPT_CPU="$work/cpu.txt" "$work/testscripts.test" \
  -test.run "TestScripts/$pattern" -test.parallel 1 -test.timeout 120m </dev/null >"$work/out.txt" 2>&1) || rc=$?
[ "$rc" = 0 ] || { tail -40 "$work/out.txt" >&2; echo "script-cpu: the scripts failed (exit $rc)" >&2; }
[ -s "$work/cpu.txt" ] || { echo "script-cpu: no script ran" >&2; exit 1; }
echo "script-cpu: $((SECONDS - start)) s; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
sort -k2,2 -g -r "$work/cpu.txt" | awk '
  { name[NR] = $1; cpu[NR] = $2 + $3; wall[NR] = $4; total += $2 + $3; wtotal += $4 }
  END {
    printf "%d scripts: %.0f CPU s, %.0f wall s one at a time\n\n", NR, total, wtotal
    print "| script | CPU s | share | wall s |"
    print "| --- | ---: | ---: | ---: |"
    for (i = 1; i <= NR; i++) printf "| %s | %.1f | %.1f%% | %.1f |\n", name[i], cpu[i], 100 * cpu[i] / total, wall[i]
  }'
exit "$rc"
