package eval

import (
	"math"
	"math/rand/v2"
	"sort"
)

// z95 is the normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson is the Wilson score 95% interval of k successes in n trials, as
// fractions in [0, 1]. Unlike the normal approximation it stays inside
// [0, 1] and does not collapse to a point at 0% or 100%. n == 0 gives [0, 1].
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	p := float64(k) / float64(n)
	nn := float64(n)
	z2 := z95 * z95
	den := 1 + z2/nn
	center := (p + z2/(2*nn)) / den
	half := z95 * math.Sqrt(p*(1-p)/nn+z2/(4*nn*nn)) / den
	return math.Max(0, center-half), math.Min(1, center+half)
}

// Median of xs (the mean of the middle two for an even count); 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// logChoose is log(n choose k).
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// FisherExact is the two-sided p-value of Fisher's exact test on the 2×2
// table [[k1, n1-k1], [k2, n2-k2]]: how likely success counts at least this
// unequal are when both cells share one success rate. It compares two cells
// whose runs are independent (run i of A has nothing to do with run i of B).
func FisherExact(k1, n1, k2, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	total, succ := n1+n2, k1+k2
	logP := func(a int) float64 {
		return logChoose(n1, a) + logChoose(n2, succ-a) - logChoose(total, succ)
	}
	obs := logP(k1)
	p := 0.0
	for a := max(0, succ-n2); a <= min(n1, succ); a++ {
		if lp := logP(a); lp <= obs+1e-7 {
			p += math.Exp(lp)
		}
	}
	return math.Min(1, p)
}

// McNemarExact is the two-sided exact McNemar p-value for paired binary
// outcomes: b pairs went success→failure, c failure→success. Pairs that did
// not flip carry no information about the difference.
func McNemarExact(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	p := 0.0
	for i := 0; i <= k; i++ {
		p += math.Exp(logChoose(n, i) - float64(n)*math.Ln2)
	}
	return math.Min(1, 2*p)
}

// BootstrapSeed makes every bootstrap reproducible: the same two summaries
// give the same interval.
const BootstrapSeed = 14

// Pair is one case's success counts before (A) and after (B).
type Pair struct{ KA, NA, KB, NB int }

// BootstrapPairedCI is a seeded percentile bootstrap 95% interval of the
// mean over cases of the success-rate difference B - A. Each draw resamples
// the cases with replacement and, within each drawn case, the runs of A and
// of B (binomially, at their observed rates), so the interval carries both
// the spread between cases and the run-to-run noise within a case: a single
// case run 3 times against 3 more does not look certain.
func BootstrapPairedCI(ps []Pair, resamples int) (lo, hi float64) {
	if len(ps) == 0 {
		return 0, 0
	}
	rng := rand.New(rand.NewPCG(BootstrapSeed, uint64(len(ps))))
	rate := func(k, n int) float64 {
		s := 0
		for range n {
			if rng.IntN(n) < k {
				s++
			}
		}
		return float64(s) / float64(n)
	}
	means := make([]float64, resamples)
	for r := range means {
		s := 0.0
		for range ps {
			p := ps[rng.IntN(len(ps))]
			s += rate(p.KB, p.NB) - rate(p.KA, p.NA)
		}
		means[r] = s / float64(len(ps))
	}
	sort.Float64s(means)
	return percentile(means, 0.025), percentile(means, 0.975)
}

// percentile is the q quantile (q in [0, 1]) of the ascending xs, by the
// nearest rank: xs[round(q·(len(xs)-1))].
func percentile(xs []float64, q float64) float64 {
	return xs[int(math.Round(q*float64(len(xs)-1)))]
}
