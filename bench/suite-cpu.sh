#!/usr/bin/env bash
# Where the suite's CPU goes, by program: the tools the tests drive for
# real (Go's toolchain, the agent CLIs, chromium, python, cargo) beside
# everything else (treeloop's commands, git, the shell, the test
# binaries). Runs COMMAND (default: just test-all, the ci tier's tests)
# under the kernel's process accounting (accton, from Debian's acct;
# root), then prints the CPU seconds of each group with its share, the
# total from getrusage, and the wall time the real tools alone would
# take on this machine's cores: the floor no change to treeloop's own
# code can go under. Accounting charges each process whole ticks of
# 10 ms, so a short process (a git, a bash, most of treeloop's commands)
# is counted as nothing: the rest of the total is theirs, printed as
# "short processes". Only COMMAND's descendants are counted (by the
# parent each process had when it ended: COMMAND runs under
# bench/subreaper, which takes in what outlives its parent).
# Usage: bench/suite-cpu.sh [COMMAND...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "suite-cpu: process accounting needs root" >&2; exit 1; }
for t in accton dump-acct; do
  command -v "$t" >/dev/null || { echo "suite-cpu: $t is not installed (apt-get install acct)" >&2; exit 1; }
done
[ $# -gt 0 ] || set -- just test-all
work=$(mktemp -d)
trap 'accton off >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
go build -o "$work/subreaper" ./bench/subreaper
: > "$work/pacct"
echo "suite-cpu: $*; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
accton "$work/pacct" >/dev/null
start=$SECONDS
rc=0
# COMMAND under bench/subreaper: what outlives its parent (a browser's
# helpers) is still COMMAND's, to the accounting and to getrusage.
"$work/subreaper" "$@" > "$work/out.txt" 2>&1 &
pid=$!
wait "$pid" || rc=$?
wall=$((SECONDS - start))
accton off >/dev/null
# times: the shell's children's user and system time (all the waited-for
# descendants of COMMAND), second line, as "XmY.ZZZs XmY.ZZZs".
times > "$work/times"
read -r cu cs < <(sed -n 2p "$work/times")
secs() { local m=${1%%m*} s=${1#*m}; awk -v m="$m" -v s="${s%s}" 'BEGIN {print m * 60 + s}'; }
total=$(awk -v a="$(secs "$cu")" -v b="$(secs "$cs")" 'BEGIN {printf "%.0f", a + b}')
[ "$rc" = 0 ] || { tail -30 "$work/out.txt" >&2; echo "suite-cpu: the command failed (exit $rc)" >&2; }
echo "suite-cpu: $wall s; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# dump-acct: command|version|utime|stime|etime|... in ticks of 1/100 s.
# A record is written when its process ends: a process's children that
# ended before it (named by its pid as their parent) are its subtree,
# summed into it as its own record comes (pids are reused: 32,768 of
# them against the tens of thousands of processes of a suite).
dump-acct "$work/pacct" | awk -F'|' -v root="$pid" -v total="$total" -v wall="$wall" -v cores="$(nproc)" '
  BEGIN {
    G = 7
    label[1] = "Go toolchain (compile, link, vet, go)"
    label[2] = "agent CLIs (opencode, claude, codex)"
    label[3] = "node (the Gemini CLI, jest, vitest, npm)"
    label[4] = "chromium"
    label[5] = "python (pytest, the eval cases)"
    label[6] = "Rust (cargo, rustc)"
    label[7] = "everything else, counted (treeloop, git, the shell, the test binaries)"
  }
  function group(c) {
    if (c ~ /^(compile|link|vet|asm|go|cgo|buildid|cover)\*?$/) return 1
    if (c ~ /^(opencode|claude|codex)\*?$/) return 2
    if (c ~ /^node/ || c ~ /^npm/ || c ~ /^jest/) return 3
    if (c ~ /^chrom/) return 4
    if (c ~ /^python/) return 5
    if (c ~ /^(cargo|rustc|rustdoc|rust-lld|cc|ld)\*?$/) return 6
    return 7
  }
  done { next }
  {
    c = $1; sub(/ +$/, "", c)
    p = $10 + 0; pp = $11 + 0; g = group(c)
    cpu[p, g] += ($3 + $4) / 100; n[p, g]++
    for (g = 1; g <= G; g++) {
      if (p == root) { sum[g] = cpu[p, g]; num[g] = n[p, g] }
      else { cpu[pp, g] += cpu[p, g]; n[pp, g] += n[p, g] }
      delete cpu[p, g]; delete n[p, g]
    }
    if (p == root) done = 1
  }
  END {
    printf "| program | CPU s | share of the total | processes |\n| --- | ---: | ---: | ---: |\n"
    for (g = 1; g < G; g++) {
      real += sum[g]
      if (num[g]) printf "| %s | %.0f | %.0f%% | %d |\n", label[g], sum[g], 100 * sum[g] / total, num[g]
    }
    printf "| %s | %.0f | %.0f%% | %d |\n", label[G], sum[G], 100 * sum[G] / total, num[G]
    short = total - real - sum[G]
    printf "| short processes, under the 10 ms tick (the same) | %.0f | %.0f%% | |\n", short, 100 * short / total
    printf "| **total** (getrusage) | **%.0f** | 100%% | |\n\n", total
    printf "wall %d s on %d cores; the real tools alone: %.0f CPU s, at least %.0f s of wall on %d cores; treeloop, git, the shell and the test binaries: %.0f CPU s\n", wall, cores, real, real / cores, cores, total - real
  }'
exit "$rc"
