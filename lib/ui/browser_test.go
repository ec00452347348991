package ui

// End-to-end tests in a real headless Chromium (Debian's chromium, driven
// over the DevTools protocol with chromedp): one browser per test binary, a
// tab per test, a deadline on every wait, and any JavaScript exception
// fails the test. A missing Chromium is a failure, never a skip.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/tree"
)

var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	err    error
}

func TestMain(m *testing.M) {
	runCommand()
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	if commandDir != "" {
		os.RemoveAll(commandDir)
	}
	os.Exit(code)
}

// chromiumPath finds Chromium: $CHROMIUM, else chromium or chromium-browser
// on PATH.
func chromiumPath() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on PATH: install it (apt-get install chromium) or set CHROMIUM")
}

// tab opens a new tab in the shared browser. JavaScript exceptions in it
// fail the test at cleanup.
func tab(t testing.TB) context.Context {
	t.Helper()
	browser.once.Do(func() {
		path, err := chromiumPath()
		if err != nil {
			browser.err = err
			return
		}
		dataDir, err := os.MkdirTemp("", "runner-ui-chromium-")
		if err != nil {
			browser.err = err
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(dataDir),
			chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
			chromedp.WindowSize(1440, 900))
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		// The first Run starts the browser; it must not carry a deadline.
		if err := chromedp.Do(bctx); err != nil {
			browser.err = fmt.Errorf("start %s: %w", path, err)
		}
		browser.ctx = bctx
		browser.cancel = func() { bcancel(); acancel(); os.RemoveAll(dataDir) }
	})
	if browser.err != nil {
		t.Fatalf("headless Chromium: %v", browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	var mu sync.Mutex
	var exceptions []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*cdpruntime.EventExceptionThrown); ok {
			mu.Lock()
			exceptions = append(exceptions, e.ExceptionDetails.Text+" "+exceptionText(e.ExceptionDetails))
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		mu.Lock()
		defer mu.Unlock()
		for _, e := range exceptions {
			t.Errorf("JavaScript exception: %s", e)
		}
	})
	return ctx
}

func exceptionText(d *cdpruntime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

// run runs actions with a deadline.
func run(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// runOnView runs one action on an element of the view. The view is built
// anew at the events that touch it, so the element chromedp looked up can
// be replaced before its input reaches it (CDP: "Could not find node with
// given id"); the action then looks the element up again, at most five
// times. Input events do not name a node, so a retried action has typed
// or clicked nothing before it failed.
func runOnView(t testing.TB, ctx context.Context, what string, action chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var err error
	for range 5 {
		if err = chromedp.Do(c, action); err == nil || !strings.Contains(err.Error(), "node with given id") {
			break
		}
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitJS polls a JavaScript expression until it is truthy.
func waitJS(t testing.TB, ctx context.Context, what, expr string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	// An expression that throws (an element not there yet: the page
	// re-renders as events arrive, later on a busy machine) is not true
	// yet, rather than a failure.
	guarded := "(() => { try { return !!(" + expr + "); } catch (e) { return false; } })()"
	for {
		_, err := chromedp.Run(c, chromedp.Poll[chromedp.Void](guarded, chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(0)))
		if err == nil {
			return
		}
		// A poll the page's own navigation interrupted (a redirect, as
		// /login's to /) lost the document it polled: poll the new one.
		if c.Err() == nil && navigatedAway(err) {
			continue
		}
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 3000)`))
		t.Fatalf("waiting for %s (%s): %v\npage text:\n%s", what, expr, err, page)
	}
}

// navigatedAway reports an error of the DevTools protocol that says the
// document an evaluation ran in went away while it ran.
func navigatedAway(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Cannot find context with specified id") || strings.Contains(msg, "Execution context was destroyed")
}

func eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// liveRepo is a git repository ready for runner-loop with a scripted
// command agent that works iteration N only once the test creates
// ctl/go-N, printing a "tick" line every 50 ms until then, and a guard
// that prints "guard says: …".
type liveRepo struct {
	dir, ctl string
	env      []string
}

func newLiveRepo(t *testing.T) liveRepo {
	t.Helper()
	path, err := commandPath()
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	r := liveRepo{dir: filepath.Join(base, "repo"), ctl: filepath.Join(base, "ctl")}
	for _, d := range []string{r.dir, r.ctl, filepath.Join(base, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	agent := filepath.Join(base, "agent.sh")
	writeText(t, agent, `#!/usr/bin/env bash
set -euo pipefail
cat >/dev/null
n=$RUNNER_ITERATION
echo "agent: iteration $n on $RUNNER_NODE_ID ($RUNNER_MODE)"
i=0
while [ ! -e "`+r.ctl+`/go-$n" ]; do
  i=$((i + 1))
  echo "tick $i"
  sleep 0.05
  if [ $i -ge 6000 ]; then echo "agent: the test never said go-$n" >&2; exit 1; fi
done
if [ "$RUNNER_MODE" = decompose ]; then
  echo '{"status": "decomposed", "summary": "Two parts.", "children": [{"title": "Part one", "goal": "Write one.txt.", "acceptance": ["one.txt exists"], "next": "execute"}, {"title": "Part two", "goal": "Write two.txt.", "acceptance": ["two.txt exists"], "next": "execute"}]}' > "$RUNNER_OUTPUT"
else
  echo "$RUNNER_NODE_ID" > "$RUNNER_NODE_ID.txt"
  echo '{"status": "done", "summary": "Wrote the file.", "children": []}' > "$RUNNER_OUTPUT"
fi
`)
	os.Chmod(agent, 0o755)
	guard := filepath.Join(base, "guard.sh")
	writeText(t, guard, "#!/usr/bin/env bash\necho \"guard says: checked $(ls *.txt 2>/dev/null | tr '\\n' ' ')\"\n")
	os.Chmod(guard, 0o755)
	writeText(t, filepath.Join(base, "goal.md"), "# Two files\n\nWrite one.txt and two.txt.\n")
	writeText(t, filepath.Join(r.dir, "README.md"), "A test repository.\n")
	r.env = append(os.Environ(),
		"PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+filepath.Join(base, "home"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"RUNNER_AGENT=command", "RUNNER_AGENT_BIN="+agent, "TREELOOP_DIR=", "CI=",
		// The scripted agent and guard live in the test's temporary
		// directory, which the bwrap sandbox hides.
		"RUNNER_SANDBOX=none")
	r.sh(t, "git init -q -b main && git add -A && git commit -q -m initial")
	r.sh(t, "runner-init --goal ../goal.md >/dev/null")
	cfg := filepath.Join(r.dir, ".runner/state/config.toml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte(`command = ["just", "ci"]`), []byte(`command = ["`+guard+`"]`), 1)
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r.sh(t, "git add -A && git commit -q -m 'treeloop: init' && runner-start --id run-ui >/dev/null")
	return r
}

func (r liveRepo) sh(t *testing.T, script string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir, cmd.Env = r.dir, r.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

func (r liveRepo) goAhead(t *testing.T, n int) {
	t.Helper()
	writeText(t, filepath.Join(r.ctl, fmt.Sprintf("go-%d", n)), "")
}

// During a live runner-loop the page follows the run without a reload: the
// live tail grows while the agent prints, the tree changes when the root
// is decomposed, new iterations appear, a node's guard log opens on a
// click, the keyboard moves through the tree; nothing shifts the layout.
func TestBrowserLiveRun(t *testing.T) {
	ciTier(t)
	repo := newLiveRepo(t)
	s := start(t, Options{Root: repo.dir})
	ctx := tab(t)
	run(t, ctx, "open the page", chromedp.Navigate(s.url+"/"))
	waitJS(t, ctx, "the event stream", `document.body.dataset.state === "live"`)
	// Marks that a reload would lose, and a layout-shift meter.
	eval[chromedp.Void](t, ctx, `window.__noReload = 1; window.__cls = 0;
		new PerformanceObserver((l) => { for (const e of l.getEntries()) if (!e.hadRecentInput) window.__cls += e.value; })
			.observe({type: "layout-shift", buffered: true}); 0`)
	waitJS(t, ctx, "the tree", `document.querySelector('#tree [data-id="root"]')`)

	// From here the list follows each event's iteration alone
	// (/api/iterations?id=): the whole list is asked for again only
	// after a reconnection or a reset (.runner/iterations/ created), which
	// a second stream counts.
	eval[chromedp.Void](t, ctx, `window.__whole = 0; window.__byID = 0; window.__reconnects = 0; window.__resets = 0;
		new EventSource("/events").addEventListener("reset", () => window.__resets++);
		const f = window.fetch;
		window.fetch = (u, o) => { const p = String(u); if (p === "/api/iterations") window.__whole++; if (p.startsWith("/api/iterations?id=")) window.__byID++; return f(u, o); };
		new MutationObserver(() => { if (document.body.dataset.state === "reconnecting") window.__reconnects++; })
			.observe(document.body, {attributes: true, attributeFilter: ["data-state"]}); 0`)

	loop := startLiveLoop(t, repo.dir, repo.env)

	// Iteration 1 runs: the root is current, and the live tail grows.
	waitJS(t, ctx, "iteration 1 running", `document.querySelector("#live-what").innerText.includes("iteration 1")`)
	waitJS(t, ctx, "the root marked current", `document.querySelector('#tree [data-id="root"]').classList.contains("st-current")`)
	waitJS(t, ctx, "the live tail", `document.querySelector("#live-tail").textContent.includes("tick 2")`)
	// The tail keeps the last 120 lines, so it grows by its last tick's
	// number, not by its count of lines (full already on a slow machine).
	lastTick := `Math.max(0, ...(document.querySelector("#live-tail")?.textContent ?? "").split("\n").filter((l) => l.startsWith("tick ")).map((l) => parseInt(l.slice(5), 10)))`
	tick := eval[int](t, ctx, lastTick)
	waitJS(t, ctx, "the live tail growing", fmt.Sprintf(`%s >= %d`, lastTick, tick+5))
	lines := eval[int](t, ctx, `(document.querySelector("#live-tail")?.textContent ?? "").split("\n").length`)
	if lines > 121+1 {
		t.Fatalf("the live tail shows %d lines, more than 120", lines)
	}

	// The root is decomposed: the tree grows without a reload.
	repo.goAhead(t, 1)
	waitJS(t, ctx, "the decomposition in the tree", `document.querySelector('#tree [data-id="root.1"]') && document.querySelector('#tree [data-id="root.2"]')`)
	waitJS(t, ctx, "iteration 2 in the list", `document.querySelector('tr[data-key="it:run-ui/2"]')`)
	waitJS(t, ctx, "iteration 1 recorded as decomposed", `document.querySelector('tr[data-key="it:run-ui/1"] td:nth-child(5)').textContent === "decomposed"`)
	waitJS(t, ctx, "root.1 current", `document.querySelector('#tree [data-id="root.1"]').classList.contains("st-current")`)

	// root.1 passes; a click on it shows its guard log. The tree is
	// updated in place: the item's elements that were there before its
	// status changed are the ones there after it, so a click between two
	// events is not lost to a re-render.
	eval[chromedp.Void](t, ctx, `document.querySelector('#tree [data-id="root.1"] > .node .title').__kept = 1; 0`)
	repo.goAhead(t, 2)
	waitJS(t, ctx, "iteration 2 passed", `(document.querySelector('tr[data-key="it:run-ui/2"] td:nth-child(5)') || {}).textContent === "passed"`)
	waitJS(t, ctx, "root.1 passed in the tree", `document.querySelector('#tree [data-id="root.1"]').classList.contains("st-passed")`)
	if !eval[bool](t, ctx, `document.querySelector('#tree [data-id="root.1"] > .node .title').__kept === 1`) {
		t.Fatal("the tree replaced root.1's item when its status changed: a click on it could be lost")
	}
	run(t, ctx, "click root.1", chromedp.Click(`#tree [data-id="root.1"] > .node .title`))
	waitJS(t, ctx, "the node's guard log", `(document.querySelector("#node-guard-log") || {}).textContent?.includes("guard says: checked root.1.txt")`)
	if h := eval[string](t, ctx, `location.hash`); h != "#/node/root.1" {
		t.Fatalf("after the click: %s", h)
	}

	// The keyboard: down to root.2, Enter opens it; 2 shows the iterations.
	run(t, ctx, "keys", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, "root.2 opened from the keyboard", `location.hash === "#/node/root.2"`)
	run(t, ctx, "key 2", chromedp.KeyEvent("2"))
	waitJS(t, ctx, "the iterations view", `location.hash === "#/iterations" && document.querySelectorAll("tbody tr").length >= 3`)
	// The overview while iteration 3 runs: a screenshot for inspection.
	run(t, ctx, "key 1", chromedp.KeyEvent("1"))
	waitJS(t, ctx, "iteration 3 in the live tail", `document.querySelector("#live-tail").dataset.iter === "run-ui/3" && `+lastTick+` >= 20`)
	screenshot(t, ctx)

	// The last iteration: the run completes.
	repo.goAhead(t, 3)
	select {
	case <-loop.done:
		if loop.err != nil {
			t.Fatalf("runner-loop: %v\n%s", loop.err, loop.out.String())
		}
	case <-time.After(120 * time.Second):
		t.Fatalf("runner-loop did not finish\n%s", loop.out.String())
	}
	waitJS(t, ctx, "the complete tree", `document.querySelector("#counts").textContent.includes("3 passed · 0 open")`)
	waitJS(t, ctx, "iteration 3 passed", `(document.querySelector('tr[data-key="it:run-ui/3"] td:nth-child(5)') || {}).textContent === "passed"`)
	run(t, ctx, "key 1", chromedp.KeyEvent("1"))
	waitJS(t, ctx, "the overview, idle, with the last guard log", `document.querySelector("#live-what").innerText.startsWith("idle") && document.querySelector("#live-tail").textContent.includes("guard says: checked root.1.txt root.2.txt")`)

	checkFollowed(t, ctx)
	t.Logf("loop output:\n%s", loop.out.String())
}

// checkFollowed checks what the marks set at the start of
// TestBrowserLiveRun counted: no reload, the iteration list followed
// event by event, and no layout shift.
func checkFollowed(t *testing.T, ctx context.Context) {
	t.Helper()
	if eval[int](t, ctx, `window.__noReload || 0`) != 1 {
		t.Fatal("the page reloaded")
	}
	byID, whole := eval[int](t, ctx, `window.__byID`), eval[int](t, ctx, `window.__whole`)
	re, resets := eval[int](t, ctx, `window.__reconnects`), eval[int](t, ctx, `window.__resets`)
	if byID == 0 || (re == 0 && whole > resets) {
		t.Fatalf("the list followed the run with %d single-iteration and %d whole-list requests (%d reconnections, %d resets): want single ones", byID, whole, re, resets)
	}
	t.Logf("the list followed the run with %d single-iteration and %d whole-list requests (%d reconnections, %d resets)", byID, whole, re, resets)
	if cls := eval[float64](t, ctx, `window.__cls`); cls > 0.02 {
		t.Fatalf("cumulative layout shift %.3f while events arrived", cls)
	}
}

// liveLoop is a runner-loop started by startLiveLoop: done closes when it
// ends, err and out are then its result and output.
type liveLoop struct {
	done chan struct{}
	err  error
	out  bytes.Buffer
}

// startLiveLoop starts runner-loop (found on env's PATH) in dir, in a
// process group of its own that the test's cleanup kills if it still runs.
func startLiveLoop(t *testing.T, dir string, env []string) *liveLoop {
	t.Helper()
	loopPath, err := lookPathIn("runner-loop", env)
	if err != nil {
		t.Fatal(err)
	}
	l := &liveLoop{done: make(chan struct{})}
	cmd := exec.Command(loopPath)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = &l.out, &l.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { l.err = cmd.Wait(); close(l.done) }()
	t.Cleanup(func() {
		select {
		case <-l.done:
		default:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-l.done
		}
	})
	return l
}

// screenshot writes the tab's viewport to $RUNNER_UI_SCREENSHOT, or
// runner-ui-e2e.png in the temporary directory.
func screenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	shot := os.Getenv("RUNNER_UI_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(os.TempDir(), "runner-ui-e2e.png")
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil || len(png) < 1000 {
		t.Fatalf("screenshot: %v (%d bytes)", err, len(png))
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
}

func lookPathIn(name string, env []string) (string, error) {
	for _, kv := range slices.Backward(env) {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(p) {
				if st, err := os.Stat(filepath.Join(d, name)); err == nil && !st.IsDir() {
					return filepath.Join(d, name), nil
				}
			}
			break
		}
	}
	return exec.LookPath(name)
}

// The page is readable in light and dark: the colours follow
// prefers-color-scheme, and the theme key overrides it.
func TestBrowserThemes(t *testing.T) {
	ciTier(t)
	s := start(t, Options{Root: fixture(t)})
	ctx := tab(t)
	media := func(v string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
			return chromedp.Void{}, err
		}
	}
	bg := `getComputedStyle(document.body).backgroundColor + " " + getComputedStyle(document.body).color`
	run(t, ctx, "light", media("light"), chromedp.Navigate(s.url+"/"))
	waitJS(t, ctx, "live", `document.body.dataset.state === "live"`)
	light := eval[string](t, ctx, bg)
	run(t, ctx, "dark", media("dark"))
	dark := eval[string](t, ctx, bg)
	if light != "rgb(251, 251, 250) rgb(29, 31, 33)" || dark != "rgb(21, 23, 26) rgb(227, 229, 232)" {
		t.Fatalf("light %q, dark %q", light, dark)
	}
	// d cycles auto → light → dark; under a dark system, light wins.
	run(t, ctx, "key d", chromedp.KeyEvent("d"))
	waitJS(t, ctx, "forced light", `document.documentElement.dataset.theme === "light"`)
	if got := eval[string](t, ctx, bg); got != light {
		t.Fatalf("forced light under a dark system: %q", got)
	}
	run(t, ctx, "back to auto", chromedp.KeyEvent("d"), chromedp.KeyEvent("d"), media(""))
}

// An iteration's page: the diff highlighted, the CLI events in the compact
// view, the answer; [ and ] step through iterations.
func TestBrowserIterationDetail(t *testing.T) {
	ciTier(t)
	s := start(t, Options{Root: fixture(t)})
	ctx := tab(t)
	run(t, ctx, "summary", chromedp.Navigate(s.url+"/#/iter/run-a/1/summary"))
	waitJS(t, ctx, "the evidence", `(document.querySelector("#iter-evidence") || {}).textContent === "witnessed; 3 passed, 1 skipped; 2 of 2 passed before; witness: tests.test_a::test_new"`)
	run(t, ctx, "open", chromedp.Navigate(s.url+"/#/iter/run-a/1/diff"))
	waitJS(t, ctx, "the diff", `document.querySelector("#iter-diff .add")`)
	if got := eval[string](t, ctx, `[...document.querySelectorAll("#iter-diff span")].map((e) => e.className + ":" + e.textContent).join("|")`); got != "meta:diff --git a/x b/x|add:+added|del:-removed" {
		t.Fatalf("diff spans: %s", got)
	}
	runOnView(t, ctx, "events tab", chromedp.Click(`button[data-key="tab:events"]`))
	waitJS(t, ctx, "the compact events", `(document.querySelector("#iter-events") || {}).textContent === "claude: tool Bash: make test\nclaude: says: All done.\n"`)
	runOnView(t, ctx, "answer tab", chromedp.Click(`button[data-key="tab:answer"]`))
	waitJS(t, ctx, "the answer", `document.querySelector(".logbox").textContent.includes('"summary": "did a"')`)
	run(t, ctx, "next iteration", chromedp.KeyEvent("]"))
	waitJS(t, ctx, "iteration 2", `location.hash === "#/iter/run-a/2/answer" && document.querySelector("h3").textContent.startsWith("Iteration 2")`)
	// Hostile text stays text.
	writeText(t, filepath.Join(s.opts.Root, ".runner/iterations/run-a/0002/executor.log"), "<img src=x onerror=alert(1)>\n")
	run(t, ctx, "agent log", chromedp.Navigate(s.url+"/#/iter/run-a/2/executor"))
	waitJS(t, ctx, "the agent log", `(document.querySelector("#iter-executor") || {}).textContent === "<img src=x onerror=alert(1)>\n"`)
	if n := eval[int](t, ctx, `document.querySelectorAll("img").length`); n != 0 {
		t.Fatalf("log text became markup: %d img elements", n)
	}
}

// The cancel button exists only with AllowCancel, in a browser signed in
// with the one-time login link (its cookie out of the page's reach), and
// writes the file; the link works once.
func TestBrowserCancel(t *testing.T) {
	ciTier(t)
	dir := fixture(t)
	ro := start(t, Options{Root: dir})
	ctx := tab(t)
	run(t, ctx, "read-only", chromedp.Navigate(ro.url+"/"))
	waitJS(t, ctx, "live", `document.body.dataset.state === "live"`)
	if !eval[bool](t, ctx, `document.querySelector("#cancel").hidden && document.querySelector("#sign-in").hidden`) {
		t.Fatal("a read-only UI shows the cancel button or the sign-in note")
	}
	s := start(t, Options{Root: dir, AllowCancel: true})
	run(t, ctx, "allow-cancel, not signed in", chromedp.Navigate(s.url+"/"))
	waitJS(t, ctx, "the sign-in note", `document.body.dataset.state === "live" && !document.querySelector("#sign-in").hidden`)
	if !eval[bool](t, ctx, `document.querySelector("#cancel").hidden`) {
		t.Fatal("a browser not signed in shows the cancel button")
	}
	run(t, ctx, "sign in", chromedp.Navigate(s.url+"/login?token="+s.LoginToken()))
	waitJS(t, ctx, "the cancel button", `location.pathname === "/" && location.search === "" && !document.querySelector("#cancel").hidden`)
	if !eval[bool](t, ctx, `document.querySelector("#sign-in").hidden && document.cookie === ""`) {
		t.Fatal("signed in: the sign-in note shows, or the page can read the session cookie")
	}
	run(t, ctx, "click once", chromedp.Click("#cancel"))
	waitJS(t, ctx, "the confirmation", `document.querySelector("#cancel").textContent === "Confirm cancel?"`)
	if _, err := os.Lstat(filepath.Join(dir, ".runner/cancel")); err == nil {
		t.Fatal("one click wrote the cancel file")
	}
	run(t, ctx, "confirm", chromedp.Click("#cancel"))
	waitJS(t, ctx, "requested", `document.querySelector("#cancel").textContent === "Cancel requested"`)
	if data, err := os.ReadFile(filepath.Join(dir, ".runner/cancel")); err != nil || !strings.HasPrefix(string(data), `by="runner-ui" pid=`) {
		t.Fatalf("cancel file: %q %v", data, err)
	}
	// The link is spent: opened again, it says so.
	run(t, ctx, "the link again", chromedp.Navigate(s.url+"/login?token="+s.LoginToken()))
	waitJS(t, ctx, "the spent link", `document.body.innerText.includes("this login link was used at")`)
}

// The open questions are on the overview; the answer form exists only
// with AllowAnswer, and its answer goes through tree-edit answer.
func TestBrowserAnswer(t *testing.T) {
	ciTier(t)
	dir, treeEdit := answerRepo(t)
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@e")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@e")
	ro := start(t, Options{Root: dir, TreeEdit: treeEdit})
	ctx := tab(t)
	run(t, ctx, "read-only", chromedp.Navigate(ro.url+"/"))
	waitJS(t, ctx, "the question", `(document.querySelector('#questions [data-question="root.1"] pre') || {}).textContent === "Postgres or SQLite?"`)
	if eval[bool](t, ctx, `!!document.querySelector("#questions textarea")`) {
		t.Fatal("a UI without --allow-answer shows an answer form")
	}
	s := start(t, Options{Root: dir, AllowAnswer: true, TreeEdit: treeEdit})
	run(t, ctx, "allow-answer, not signed in", chromedp.Navigate(s.url+"/"))
	waitJS(t, ctx, "the sign-in note", `!!document.querySelector('#questions [data-sign-in="root.1"]') && !document.querySelector("#questions textarea")`)
	run(t, ctx, "sign in", chromedp.Navigate(s.url+"/login?token="+s.LoginToken()))
	waitJS(t, ctx, "the answer form", `!!document.querySelector('#questions textarea[data-key="answer:root.1"]')`)
	runOnView(t, ctx, "type the answer", chromedp.SendKeys(`#questions textarea[data-key="answer:root.1"]`, "SQLite, one file."))
	runOnView(t, ctx, "answer", chromedp.Click(`#questions button[data-answer="root.1"]`))
	waitJS(t, ctx, "committed", `!document.querySelector("#questions") || ((document.querySelector('[data-answer-status="root.1"]') || {}).textContent === "Committed.")`)
	data, err := os.ReadFile(filepath.Join(dir, ".runner/state/tree.json"))
	if err != nil {
		t.Fatal(err)
	}
	root, ps := tree.Load(data)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if n, _ := tree.Find(root, "root.1"); n.IsWaiting() || len(n.Answers) != 1 || n.Answers[0].Answer != "SQLite, one file." {
		t.Fatalf("node after the answer: %+v", n)
	}
	waitJS(t, ctx, "the question gone", `!document.querySelector("#questions")`)
}

// BenchmarkEventLatency measures the time from a write of tree.json to the
// page showing it (MutationObserver in the page, both clocks the same
// machine's): median and p95 over 40 writes.
func BenchmarkEventLatency(b *testing.B) {
	dir := fixture(b)
	s := start(b, Options{Root: dir})
	ctx := tab(b)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/")); err != nil {
		b.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](`document.body.dataset.state === "live" && document.querySelector('#tree [data-id="root"]')`)); err != nil {
		b.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`window.__seen = {};
		new MutationObserver(() => { const m = document.querySelector('#tree [data-id="root"] .title'); if (m && !window.__seen[m.textContent]) window.__seen[m.textContent] = Date.now(); })
			.observe(document.querySelector("#tree"), {subtree: true, childList: true, characterData: true}); 0`)); err != nil {
		b.Fatal(err)
	}
	var lat []float64
	for i := 0; i < 40; i++ {
		title := fmt.Sprintf("lat-%d", i)
		at := time.Now().UnixMilli()
		if err := fsutil.WriteAtomic(filepath.Join(dir, ".runner/state/tree.json"), tree.Encode(testTree(title)), 0o644); err != nil {
			b.Fatal(err)
		}
		seen, err := chromedp.Run(ctx, chromedp.Poll[int64](fmt.Sprintf(`window.__seen[%q]`, title), chromedp.WithPollingInterval(5*time.Millisecond)))
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, float64(seen-at))
		time.Sleep(150 * time.Millisecond) // let the debounce settle between writes
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2], "median-ms")
	b.ReportMetric(lat[len(lat)*95/100], "p95-ms")
	b.ReportMetric(lat[len(lat)-1], "max-ms")
}

// What an operator reads at a glance, in a narrow window: every column
// as wide as its content (the node's and the goal's take the rest), an
// inner node's count labelled, the empty usage chart naming the backend
// that ran, the running session's CLI events in the compact view rather
// than raw JSON, and a pending cancel with who asked and when.
func TestBrowserOperatorView(t *testing.T) {
	ciTier(t)
	dir := fixture(t)
	it1 := filepath.Join(dir, ".runner/iterations/run-a/0001")
	var m iterdir.Meta
	if err := iterdir.Read(it1, iterdir.MetaFile, &m); err != nil {
		t.Fatal(err)
	}
	m.Mode = "decompose"
	m.Agent.Backend, m.Agent.Usage = "codex", iterdir.Usage{}
	writeJSONFile(t, filepath.Join(it1, iterdir.MetaFile), m)
	writeJSONFile(t, filepath.Join(it1, iterdir.AgentFile), m.Agent)
	events := `{"type":"system","subtype":"init","cwd":"/r"}` + "\n" +
		`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"go test ./..."}}]}}` + "\n"
	writeText(t, filepath.Join(dir, ".runner/iterations/run-a/0002/events.jsonl"), events)
	writeText(t, filepath.Join(dir, ".runner/iterations/run-a/0002/executor.log"), events)
	writeText(t, filepath.Join(dir, ".runner/cancel"), "by=\"ops\" pid=7 at=2026-01-02T03:04:05Z\n")
	s := start(t, Options{Root: dir})
	ctx := tab(t)
	run(t, ctx, "a narrow window", chromedp.EmulateViewport(960, 700), chromedp.Navigate(s.url+"/"))
	waitJS(t, ctx, "live", `document.body.dataset.state === "live"`)
	waitJS(t, ctx, "the compact events of the running session", `document.querySelector("#live-tail").textContent.includes("claude: tool Bash: go test ./...")`)
	if raw := eval[bool](t, ctx, `document.querySelector("#live-tail").textContent.includes('{"type"')`); raw {
		t.Error("the live tail shows raw JSON events")
	}
	waitJS(t, ctx, "the chart's note", `document.querySelector("svg.chart text").textContent === "No token usage reported by the codex backend"`)
	if got := eval[string](t, ctx, `document.querySelector('#tree [data-id="root"] .badge').textContent`); got != "1/2 passed" {
		t.Errorf("the root's badge: %q", got)
	}
	waitJS(t, ctx, "the pending cancel", `!document.querySelector("#cancel-note").hidden`)
	if got := eval[string](t, ctx, `document.querySelector("#cancel-note").textContent`); !strings.HasPrefix(got, "cancel requested by ops at ") {
		t.Errorf("the cancel note: %q", got)
	}
	cut := `[...document.querySelectorAll("table td:not(.grow), table th:not(.grow)")].filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent).join("|")`
	for _, view := range []string{"#/iterations", "#/runs"} {
		run(t, ctx, view, chromedp.Navigate(s.url+"/"+view))
		waitJS(t, ctx, view+"'s table", `document.querySelector("table tbody tr")`)
		if got := eval[string](t, ctx, cut); got != "" {
			t.Errorf("%s: cells cut short: %s", view, got)
		}
	}
}

// ciTier skips t in the short tier (`just test`, go test -short): the
// browser tests are the ci tier's (`just ci`).
func ciTier(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the ci tier's (just ci): a real Chromium")
	}
}
