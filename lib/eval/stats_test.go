package eval

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestWilson(t *testing.T) {
	// Reference values: Wilson score interval, z = 1.96.
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.2775},
		{10, 10, 0.7225, 1},
		{5, 10, 0.2366, 0.7634},
		{3, 3, 0.4385, 1},
		{1, 1, 0.2065, 1},
		{0, 0, 0, 1},
	} {
		lo, hi := Wilson(c.k, c.n)
		if !near(lo, c.lo, 5e-4) || !near(hi, c.hi, 5e-4) {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

func TestMedian(t *testing.T) {
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("odd median = %v", m)
	}
	if m := Median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("even median = %v", m)
	}
	if m := Median(nil); m != 0 {
		t.Errorf("empty median = %v", m)
	}
}

func TestFisherExact(t *testing.T) {
	// 3/3 vs 0/3: p = 2 * (1/20) = 0.1, not below 0.05.
	if p := FisherExact(3, 3, 0, 3); !near(p, 0.1, 1e-9) {
		t.Errorf("3/3 vs 0/3: p = %v, want 0.1", p)
	}
	// 10/10 vs 0/10: p = 2/C(20,10).
	if p := FisherExact(10, 10, 0, 10); !near(p, 2/184756.0, 1e-12) {
		t.Errorf("10/10 vs 0/10: p = %v", p)
	}
	if p := FisherExact(2, 4, 2, 4); !near(p, 1, 1e-9) {
		t.Errorf("equal cells: p = %v, want 1", p)
	}
	// Symmetric in A and B.
	if a, b := FisherExact(7, 10, 2, 9), FisherExact(2, 9, 7, 10); !near(a, b, 1e-12) {
		t.Errorf("asymmetric: %v vs %v", a, b)
	}
}

func TestMcNemarExact(t *testing.T) {
	if p := McNemarExact(0, 0); p != 1 {
		t.Errorf("no flips: %v", p)
	}
	// 0 vs 6 flips: 2 * 0.5^6 = 0.03125.
	if p := McNemarExact(0, 6); !near(p, 0.03125, 1e-12) {
		t.Errorf("0/6: %v", p)
	}
	if p := McNemarExact(3, 3); p != 1 {
		t.Errorf("3/3: %v", p)
	}
}

func TestBootstrapPairedCI(t *testing.T) {
	// The same input gives the same interval (seeded).
	ps := []Pair{{3, 3, 2, 3}, {1, 3, 3, 3}, {0, 3, 0, 3}}
	lo1, hi1 := BootstrapPairedCI(ps, 2000)
	lo2, hi2 := BootstrapPairedCI(ps, 2000)
	if lo1 != lo2 || hi1 != hi2 {
		t.Fatalf("not reproducible: [%v, %v] vs [%v, %v]", lo1, hi1, lo2, hi2)
	}
	// One case, 3/3 then 2/3: run noise keeps 0 inside the interval.
	if lo, hi := BootstrapPairedCI([]Pair{{3, 3, 2, 3}}, 2000); !(lo < 0 && hi >= 0) {
		t.Errorf("one case 3/3 → 2/3: [%v, %v] should contain 0", lo, hi)
	}
	// Twelve cases that all went from 0/5 to 5/5: beyond noise.
	var all []Pair
	for range 12 {
		all = append(all, Pair{0, 5, 5, 5})
	}
	if lo, hi := BootstrapPairedCI(all, 2000); lo != 1 || hi != 1 {
		t.Errorf("all flipped: [%v, %v], want [1, 1]", lo, hi)
	}
}

func cellFor(c, b string, k, n int) Cell {
	cell := Cell{Case: c, Backend: b, N: n, Successes: k, Rate: float64(k) / float64(n)}
	return cell
}

func TestCompare(t *testing.T) {
	a := Summary{EvalRunID: "a", Cases: []string{"x", "y", "gone"}, Backends: []string{"b1"}, CaseSetHash: "h"}
	b := Summary{EvalRunID: "b", Cases: []string{"x", "y", "new"}, Backends: []string{"b1"}, CaseSetHash: "h2"}
	a.Cells = []Cell{cellFor("x", "b1", 0, 10), cellFor("y", "b1", 9, 10), cellFor("gone", "b1", 1, 1)}
	b.Cells = []Cell{cellFor("x", "b1", 10, 10), cellFor("y", "b1", 9, 10), cellFor("new", "b1", 1, 1)}
	cmp := Compare(a, b)
	if len(cmp.OnlyA) != 1 || cmp.OnlyA[0] != "gone" || len(cmp.OnlyB) != 1 || cmp.OnlyB[0] != "new" {
		t.Errorf("only: %v %v", cmp.OnlyA, cmp.OnlyB)
	}
	if len(cmp.Warnings) != 1 {
		t.Fatalf("warnings: %q", cmp.Warnings)
	}
	if len(cmp.Cells) != 2 {
		t.Fatalf("cells: %+v", cmp.Cells)
	}
	x := cmp.Cells[0]
	if x.Case != "x" || !x.BeyondNoise || x.RateDelta != 1 {
		t.Errorf("x: %+v", x)
	}
	if y := cmp.Cells[1]; y.BeyondNoise || y.RateDelta != 0 {
		t.Errorf("y: %+v", y)
	}
	col := cmp.Columns[0]
	if len(col.Improved) != 1 || col.Improved[0] != "x" || len(col.Regressed) != 0 || col.Cases != 2 {
		t.Errorf("column: %+v", col)
	}
	// Two cases, one unchanged: the case-level interval reaches 0.
	if col.BeyondNoise {
		t.Errorf("two cases, one unchanged, called beyond noise: %+v", col)
	}
}
