#!/usr/bin/env bash
# Mutation testing: gremlins (github.com/go-gremlins/gremlins, pinned in
# bench/mutate/go.mod) plants one-line bugs in each package named, one at a
# time, and runs that package's own unit tests against each; a mutant the
# tests fail on is killed, one they pass on lived.
#
# Usage: bench/mutate.sh [PKG...]   (default: the packages bench/mutation.md tracks)
# Prints one row of bench/mutation.md's table per package and the mutants
# that lived, each with its source line; exits 1 when a package is below
# MUTATE_MIN_EFFICACY (default 85: killed / covered mutants, in %) or
# MUTATE_MIN_COVERAGE (default 70: covered / all mutants, in %).
# Each package's gremlins report (JSON) and log are left in
# bin/mutate/<pkg>.json and .log. Slow: every mutant is a `go test` of its
# package (lib/ui's, with its browser tests, takes the longest).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ $# -eq 0 ]; then
  set -- lib/eval lib/runrecord lib/cancel lib/iterdir lib/ui lib/command/treeedit lib/command/runnerstatus lib/sandbox lib/policy lib/evidence lib/tree lib/agentout \
    lib/guard lib/ratchet lib/testresults lib/passcache lib/seal lib/command/treeupdate lib/agent lib/runcheck \
    lib/artifacts lib/setup lib/nodetools lib/command/loopcommit lib/runstate lib/answer lib/subject lib/config \
    lib/proc lib/session lib/stepctx lib/runlock lib/ecosystem lib/command/runnerrecord \
    lib/cli lib/plan lib/keyval
fi
out=$root/bin/mutate
mkdir -p "$out"
# The tool is built from its own module (bench/mutate), so its
# dependencies never enter treeloop's go.mod, and into ./bin, not GOPATH.
go -C bench/mutate build -o "$root/bin/gremlins" github.com/go-gremlins/gremlins/cmd/gremlins

# A mutant may turn a pid or a process group into 0 or -1, and its tests
# then signal processes far beyond their own: each gremlins run is a
# session of its own (kill(0) reaches only it) and, as root, in a PID
# namespace of its own, where kill(-1) reaches only its processes, not the
# machine's.
isolate=(setsid)
if [ "$(id -u)" = 0 ] && unshare --pid --fork --mount-proc true 2>/dev/null; then
  isolate+=(unshare --pid --fork --mount-proc --kill-child)
fi
# gremlins times each mutant's tests against the coverage run's duration;
# a coverage run served from go test's cache would take milliseconds and
# turn every mutant into a timeout.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1"
job=""
trap '[ -z "$job" ] || kill -TERM -- "-$job" 2>/dev/null' INT TERM

reports=()
for pkg in "$@"; do
  pkg=${pkg#./}
  pkg=${pkg%/}
  [ -d "$pkg" ] || { echo "mutate: $pkg is not a package directory" >&2; exit 80; }
  name=${pkg//\//_}
  echo "mutate: $pkg (log in bin/mutate/$name.log)" >&2
  # A generous timeout coefficient: on a loaded machine a mutant whose
  # tests merely run slowly must not count as timed out.
  "${isolate[@]}" "$root/bin/gremlins" unleash --timeout-coefficient 10 --output "$out/$name.json" "./$pkg" > "$out/$name.log" 2>&1 < /dev/null &
  job=$!
  if ! wait "$job"; then
    echo "mutate: gremlins failed on $pkg:" >&2
    tail -n 20 "$out/$name.log" >&2
    exit 1
  fi
  reports+=("$pkg=$out/$name.json")
done
go run ./bench/mutationtable -min-efficacy "${MUTATE_MIN_EFFICACY:-85}" -min-coverage "${MUTATE_MIN_COVERAGE:-70}" "${reports[@]}"
