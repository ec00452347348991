# shellcheck shell=bash
# Shared by the benches that step a generated repository (step-bench,
# step-growth, step-compare, soak); sourced from the repository's root.

# bench_files N: N small Go files in directories of 50 under src/ of the
# current directory, and a justfile whose ci recipe does nothing.
bench_files() {
  python3 - "$1" <<'PY'
import os, sys
for i in range(int(sys.argv[1])):
    d, f = divmod(i, 50)
    os.makedirs(f"src/d{d}", exist_ok=True)
    with open(f"src/d{d}/f{f}.go", "w") as fh:
        fh.write(f"package d{d}\n\n// F{f} is file {f}.\nconst F{f} = {f}\n")
PY
  printf 'ci:\n    @true\n' > justfile
}

# bench_agent PATH: an agent at PATH that says done at once (a no-op
# iteration: the step's own cost is what is measured).
bench_agent() {
  cat > "$1" <<'SH'
#!/bin/sh
cat >/dev/null
echo '{"status":"done","summary":"no-op","children":[]}' > "$RUNNER_OUTPUT"
SH
  chmod +x "$1"
}
