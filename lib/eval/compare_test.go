package eval

import (
	"reflect"
	"slices"
	"testing"
)

// cellOf is a cell with k of n successes and the medians and total cost
// given.
func cellOf(c, b string, k, n int, iters, tokens, cost, wall, total float64) Cell {
	cell := cellFor(c, b, k, n)
	cell.MedianIterations, cell.MedianTokens, cell.MedianCostUSD, cell.MedianWallMS, cell.TotalCostUSD = iters, tokens, cost, wall, total
	return cell
}

func twoSummaries(aCells, bCells []Cell, cases ...string) (Summary, Summary) {
	a := Summary{EvalRunID: "a", Cases: cases, Backends: []string{"b1"}, CaseSetHash: "h", Cells: aCells}
	b := Summary{EvalRunID: "b", Cases: cases, Backends: []string{"b1"}, CaseSetHash: "h", Cells: bCells}
	return a, b
}

// TestCompareHalf: a cell at exactly half its runs is not a majority of
// successes: 2/4 → 3/4 improved, 3/4 → 2/4 regressed, 2/4 → 1/4 neither.
func TestCompareHalf(t *testing.T) {
	a, b := twoSummaries(
		[]Cell{cellFor("h1", "b1", 2, 4), cellFor("h2", "b1", 2, 4), cellFor("h3", "b1", 3, 4), cellFor("h4", "b1", 2, 4)},
		[]Cell{cellFor("h1", "b1", 3, 4), cellFor("h2", "b1", 1, 4), cellFor("h3", "b1", 2, 4), cellFor("h4", "b1", 2, 4)},
		"h1", "h2", "h3", "h4")
	col := Compare(a, b).Columns[0]
	if !slices.Equal(col.Improved, []string{"h1"}) || !slices.Equal(col.Regressed, []string{"h3"}) {
		t.Fatalf("improved %v, regressed %v; want [h1], [h3]", col.Improved, col.Regressed)
	}
	if col.McNemarP != 1 || col.Cases != 4 || col.MeanDelta != -0.0625 {
		t.Errorf("column: %+v", col)
	}
}

// TestCompareDeltas: each cell's deltas are B - A of its own median, and
// the column's cost delta sums each case's cost per run, B - A.
func TestCompareDeltas(t *testing.T) {
	a, b := twoSummaries(
		[]Cell{cellOf("x", "b1", 1, 2, 3, 1000, 0.75, 2000, 1.5), cellOf("y", "b1", 4, 4, 8, 50, 0.5, 100, 4)},
		[]Cell{cellOf("x", "b1", 2, 4, 5, 400, 0.25, 3500, 0.5), cellOf("y", "b1", 1, 1, 2, 60, 1, 25, 0.25)},
		"x", "y")
	cmp := Compare(a, b)
	want := []CellDelta{
		{Case: "x", Backend: "b1", KA: 1, NA: 2, KB: 2, NB: 4, RateDelta: 0, P: 1,
			IterationsDelta: 2, TokensDelta: -600, CostDeltaUSD: -0.5, WallDeltaMS: 1500},
		{Case: "y", Backend: "b1", KA: 4, NA: 4, KB: 1, NB: 1, RateDelta: 0, P: 1,
			IterationsDelta: -6, TokensDelta: 10, CostDeltaUSD: 0.5, WallDeltaMS: -75},
	}
	for i := range cmp.Cells {
		if !near(cmp.Cells[i].P, 1, 1e-9) {
			t.Errorf("%s: p %v, want 1", cmp.Cells[i].Case, cmp.Cells[i].P)
		}
		cmp.Cells[i].P = 1
	}
	if !reflect.DeepEqual(cmp.Cells, want) {
		t.Errorf("cells:\n got %+v\nwant %+v", cmp.Cells, want)
	}
	// x: 0.5/4 - 1.5/2 = -0.625; y: 0.25/1 - 4/4 = -0.75.
	if col := cmp.Columns[0]; col.CostDeltaUSD != -1.375 {
		t.Errorf("column cost delta %v, want -1.375", col.CostDeltaUSD)
	}
	if len(cmp.Warnings) != 0 {
		t.Errorf("warnings for the same cases and hash: %q", cmp.Warnings)
	}
}

// TestCompareNoise: a column is beyond noise only when its interval
// excludes 0; an interval that reaches 0 from either side is noise. A
// cell's p below Alpha is beyond noise.
func TestCompareNoise(t *testing.T) {
	up, same := func(c string) (Cell, Cell) { return cellFor(c, "b1", 0, 1), cellFor(c, "b1", 1, 1) },
		func(c string) (Cell, Cell) { return cellFor(c, "b1", 1, 1), cellFor(c, "b1", 1, 1) }
	ax, bx := up("x")
	ay, by := same("y")
	for _, c := range []struct {
		name       string
		aCells     []Cell
		bCells     []Cell
		lo, hi     float64
		beyond     bool
		cellBeyond []bool
	}{
		{"up and same", []Cell{ax, ay}, []Cell{bx, by}, 0, 1, false, []bool{false, false}},
		{"down and same", []Cell{bx, ay}, []Cell{ax, by}, -1, 0, false, []bool{false, false}},
		{"up", []Cell{ax}, []Cell{bx}, 1, 1, true, []bool{false}},
		{"down", []Cell{bx}, []Cell{ax}, -1, -1, true, []bool{false}},
		{"far up", []Cell{cellFor("x", "b1", 0, 10)}, []Cell{cellFor("x", "b1", 10, 10)}, 1, 1, true, []bool{true}},
		{"four runs", []Cell{cellFor("x", "b1", 0, 4)}, []Cell{cellFor("x", "b1", 4, 4)}, 1, 1, true, []bool{true}},   // p = 2/70
		{"three runs", []Cell{cellFor("x", "b1", 0, 3)}, []Cell{cellFor("x", "b1", 3, 3)}, 1, 1, true, []bool{false}}, // p = 2/20
	} {
		var cases []string
		for _, cell := range c.aCells {
			cases = append(cases, cell.Case)
		}
		a, b := twoSummaries(c.aCells, c.bCells, cases...)
		cmp := Compare(a, b)
		col := cmp.Columns[0]
		if col.CILow != c.lo || col.CIHigh != c.hi || col.BeyondNoise != c.beyond {
			t.Errorf("%s: [%v, %v] beyond %v, want [%v, %v] beyond %v", c.name, col.CILow, col.CIHigh, col.BeyondNoise, c.lo, c.hi, c.beyond)
		}
		for i, d := range cmp.Cells {
			if d.BeyondNoise != (d.P < Alpha) || d.BeyondNoise != c.cellBeyond[i] {
				t.Errorf("%s: cell %s p %v beyond %v", c.name, d.Case, d.P, d.BeyondNoise)
			}
		}
	}
}

// TestCompareWarnings: the case sets, the case files and the backends,
// each named in one warning; cases and backends of one side only are left
// out, and so are empty cells.
func TestCompareWarnings(t *testing.T) {
	for _, c := range []struct {
		name           string
		casesA, casesB []string
		hashB          string
		backA, backB   []string
		warnings       []string
		onlyA, onlyB   []string
		compared, cols int
		emptyA         bool
	}{
		{name: "same", casesA: []string{"x"}, casesB: []string{"x"}, hashB: "h", backA: []string{"b1"}, backB: []string{"b1"},
			warnings: []string{}, onlyA: []string{}, onlyB: []string{}, compared: 1, cols: 1},
		{name: "hash", casesA: []string{"x"}, casesB: []string{"x"}, hashB: "h2", backA: []string{"b1"}, backB: []string{"b1"},
			warnings: []string{"the case files changed between the two runs (case_set_hash differs): the same ids may not ask the same thing"},
			onlyA:    []string{}, onlyB: []string{}, compared: 1, cols: 1},
		{name: "only in B", casesA: []string{"x"}, casesB: []string{"x", "y"}, hashB: "h2", backA: []string{"b1"}, backB: []string{"b1"},
			warnings: []string{"the case sets differ: only in a: none; only in b: y; those cases are left out"},
			onlyA:    []string{}, onlyB: []string{"y"}, compared: 1, cols: 1},
		{name: "only in A", casesA: []string{"w", "x", "z"}, casesB: []string{"x"}, hashB: "h", backA: []string{"b1"}, backB: []string{"b1"},
			warnings: []string{"the case sets differ: only in a: w, z; only in b: none; those cases are left out"},
			onlyA:    []string{"w", "z"}, onlyB: []string{}, compared: 1, cols: 1},
		{name: "backends", casesA: []string{"x"}, casesB: []string{"x"}, hashB: "h", backA: []string{"b0", "b1"}, backB: []string{"b1", "b2"},
			warnings: []string{"backend b0 is only in a", "backend b2 is only in b"}, onlyA: []string{}, onlyB: []string{}, compared: 1, cols: 1},
		{name: "empty cell", casesA: []string{"x"}, casesB: []string{"x"}, hashB: "h", backA: []string{"b1"}, backB: []string{"b1"}, emptyA: true,
			warnings: []string{}, onlyA: []string{}, onlyB: []string{}, compared: 0, cols: 0},
	} {
		var aCells, bCells []Cell
		for _, x := range c.casesA {
			for _, be := range c.backA {
				cell := cellFor(x, be, 1, 2)
				if c.emptyA {
					cell = Cell{Case: x, Backend: be}
				}
				aCells = append(aCells, cell)
			}
		}
		for _, x := range c.casesB {
			for _, be := range c.backB {
				bCells = append(bCells, cellFor(x, be, 2, 2))
			}
		}
		a := Summary{EvalRunID: "a", Cases: c.casesA, Backends: c.backA, CaseSetHash: "h", Cells: aCells}
		b := Summary{EvalRunID: "b", Cases: c.casesB, Backends: c.backB, CaseSetHash: c.hashB, Cells: bCells}
		cmp := Compare(a, b)
		if !slices.Equal(cmp.Warnings, c.warnings) || !slices.Equal(cmp.OnlyA, c.onlyA) || !slices.Equal(cmp.OnlyB, c.onlyB) {
			t.Errorf("%s: warnings %q, only A %q, only B %q", c.name, cmp.Warnings, cmp.OnlyA, cmp.OnlyB)
		}
		if len(cmp.Cells) != c.compared || len(cmp.Columns) != c.cols {
			t.Errorf("%s: %d cells, %d columns; want %d, %d", c.name, len(cmp.Cells), len(cmp.Columns), c.compared, c.cols)
		}
	}
}

// TestCompareMarkdown: the report as eval-report prints it; one case of
// four went up, so the column's interval is [0, 3/4] (k of 4 draws up, k
// ~ B(4, 1/4): P(k <= 2) = 94.9%, P(k <= 3) = 99.6%).
func TestCompareMarkdown(t *testing.T) {
	a, b := twoSummaries(
		[]Cell{cellOf("x", "b1", 0, 10, 3, 1000, 0.75, 2000, 1.5), cellOf("y", "b1", 1, 1, 8, 50, 0.5, 100, 4),
			cellFor("z", "b1", 2, 2), cellFor("w", "b1", 2, 2)},
		[]Cell{cellOf("x", "b1", 10, 10, 5, 400, 0.25, 3500, 0.5), cellOf("y", "b1", 1, 1, 2, 60, 1, 25, 0.25),
			cellFor("z", "b1", 2, 2), cellFor("w", "b1", 2, 2)},
		"x", "y", "z", "w")
	b.CaseSetHash = "h2"
	want := `## eval-report: a (A) → b (B)

warning: the case files changed between the two runs (case_set_hash differs): the same ids may not ask the same thing

| case | backend | A | B | Δ success | p (Fisher) | noise? | Δ iterations | Δ tokens | Δ cost $ | Δ wall s |
| --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |
| x | b1 | 0/10 | 10/10 | +100% | 0.000 | **beyond noise** | +2.0 | -600 | -0.5000 | +1.50 |
| y | b1 | 1/1 | 1/1 | +0% | 1.000 | within noise | -6.0 | +10 | +0.5000 | -0.07 |
| z | b1 | 2/2 | 2/2 | +0% | 1.000 | within noise | +0.0 | +0 | +0.0000 | +0.00 |
| w | b1 | 2/2 | 2/2 | +0% | 1.000 | within noise | +0.0 | +0 | +0.0000 | +0.00 |

| backend | cases | mean Δ success | 95% CI (bootstrap, paired by case) | noise? | improved | regressed | McNemar p | Δ cost $/run |
| --- | ---: | ---: | --- | --- | --- | --- | ---: | ---: |
| b1 | 4 | +25% | +0% … +75% | within noise | x | none | 1.000 | -3.8500 |
`
	if got := Compare(a, b).Markdown(); got != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", got, want)
	}
}
