package eval

import (
	"math"
	"slices"
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

// TestFisherExactKnown: two-sided p-values worked by hand from the
// hypergeometric table, ties (tables as likely as the observed one)
// included, and a lower bound of the table above 0.
func TestFisherExactKnown(t *testing.T) {
	for _, c := range []struct {
		k1, n1, k2, n2 int
		p              float64
	}{
		{1, 4, 3, 4, 34.0 / 70},  // P(a) = [1 16 36 16 1]/70; a = 1, 3, 0, 4 are as unlikely
		{3, 4, 1, 4, 34.0 / 70},  // the mirror image
		{0, 2, 3, 5, 15.0 / 35},  // P(a) = [10 20 5]/35; a = 0 and 2
		{3, 3, 2, 3, 1},          // a runs from 2 (5 successes, 3 in B): [3 3]/6, a tie
		{2, 3, 3, 3, 1},          // and its mirror
		{0, 0, 2, 3, 1},          // an empty cell carries no evidence
		{2, 3, 0, 0, 1},          // either side
		{0, 1, 1, 1, 1},          // [1 1]/2, a tie
		{5, 5, 0, 5, 2.0 / 252},  // the two extremes of C(10, 5)
		{4, 5, 0, 5, 10.0 / 210}, // [5 50 100 50 5]/210 at a = 0 and 4
	} {
		if p := FisherExact(c.k1, c.n1, c.k2, c.n2); !near(p, c.p, 1e-9) {
			t.Errorf("FisherExact(%d/%d, %d/%d) = %.9f, want %.9f", c.k1, c.n1, c.k2, c.n2, p, c.p)
		}
	}
}

func TestMcNemarExactKnown(t *testing.T) {
	for _, c := range []struct {
		b, c int
		p    float64
	}{
		{1, 5, 2 * 7.0 / 64}, // 2·(C(6,0) + C(6,1))/2^6
		{5, 1, 2 * 7.0 / 64}, // symmetric
		{2, 0, 0.5},          // 2·(1/4)
		{0, 1, 1},            // 2·(1/2), capped at 1
		{2, 3, 1},            // 2·(1+5+10)/32 = 1
		{1, 9, 2 * 11.0 / 1024},
	} {
		if p := McNemarExact(c.b, c.c); !near(p, c.p, 1e-12) {
			t.Errorf("McNemarExact(%d, %d) = %v, want %v", c.b, c.c, p, c.p)
		}
	}
}

func TestMedianTies(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{2, 2, 1}, 2},
		{[]float64{1, 3}, 2},
		{[]float64{5}, 5},
		{[]float64{7, 7, 7, 1}, 7},
		{[]float64{9, 1, 5, 3, 7}, 5},
	} {
		in := append([]float64(nil), c.xs...)
		if got := Median(c.xs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
		if !slices.Equal(in, c.xs) {
			t.Errorf("Median reordered its input: %v", c.xs)
		}
	}
}

// TestPercentile: the nearest rank round(q·(n-1)) of the sorted draws.
func TestPercentile(t *testing.T) {
	xs := make([]float64, 2000)
	for i := range xs {
		xs[i] = float64(i)
	}
	for q, want := range map[float64]float64{0: 0, 0.025: 50, 0.5: 1000, 0.975: 1949, 1: 1999} {
		if got := percentile(xs, q); got != want {
			t.Errorf("percentile(0..1999, %v) = %v, want %v", q, got, want)
		}
	}
	if got := percentile([]float64{3}, 0.975); got != 3 {
		t.Errorf("percentile of one draw = %v", got)
	}
}

// TestBootstrapKnownDistributions: cases whose runs all agree (k = 0 or
// k = n) have no run noise, so the resampled mean is a known discrete
// distribution over the cases alone and its 2.5% and 97.5% points are
// exact. Swapping A and B mirrors the interval.
func TestBootstrapKnownDistributions(t *testing.T) {
	up, same, down, down1 := Pair{0, 1, 1, 1}, Pair{1, 1, 1, 1}, Pair{3, 3, 0, 3}, Pair{1, 1, 0, 1}
	swap := func(ps []Pair) []Pair {
		out := make([]Pair, len(ps))
		for i, p := range ps {
			out[i] = Pair{KA: p.KB, NA: p.NB, KB: p.KA, NB: p.NA}
		}
		return out
	}
	for _, c := range []struct {
		name   string
		ps     []Pair
		lo, hi float64
	}{
		// Two cases, deltas 1 and 0: the mean of two draws is 0, 1/2, 1
		// with chances 1/4, 1/2, 1/4.
		{"one up, one same", []Pair{up, same}, 0, 1},
		// Deltas 1, 1, 1, 0: the mean of four draws is k/4, k ~ B(4, 3/4):
		// P(k <= 0) = 0.4%, P(k <= 1) = 5.1%: the 2.5% point is k = 1.
		{"three up, one same", []Pair{up, up, up, same}, 0.25, 1},
		// Deltas -1, 0, 1: the mean of three draws is -1 with chance
		// 1/27 = 3.7%, -2/3 with 3/27: the 2.5% point is -1, the 5%
		// point would be -2/3 (and 1, 2/3 at the top).
		{"one down, one same, one up", []Pair{down1, same, up}, -1, 1},
		{"all down", []Pair{down, down}, -1, -1},
		{"none changed", []Pair{same, same, same}, 0, 0},
	} {
		lo, hi := BootstrapPairedCI(c.ps, BootstrapResamples)
		if lo != c.lo || hi != c.hi {
			t.Errorf("%s: [%v, %v], want [%v, %v]", c.name, lo, hi, c.lo, c.hi)
		}
		if lo, hi := BootstrapPairedCI(swap(c.ps), BootstrapResamples); lo != -c.hi || hi != -c.lo {
			t.Errorf("%s, A and B swapped: [%v, %v], want [%v, %v]", c.name, lo, hi, -c.hi, -c.lo)
		}
	}
	if lo, hi := BootstrapPairedCI(nil, BootstrapResamples); lo != 0 || hi != 0 {
		t.Errorf("no cases: [%v, %v]", lo, hi)
	}
}
