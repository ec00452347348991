package eval

import (
	"fmt"
	"slices"
	"strings"
)

// Alpha is the significance level: a difference with p < Alpha (or a 95%
// interval that excludes 0) is reported as larger than run-to-run noise.
const Alpha = 0.05

// BootstrapResamples is the number of bootstrap draws per column.
const BootstrapResamples = 10000

// Comparison is eval-report's answer: B (after) against A (before),
// paired by case id.
type Comparison struct {
	A        string       `json:"a"`
	B        string       `json:"b"`
	OnlyA    []string     `json:"only_a"` // cases in A only (left out of the comparison)
	OnlyB    []string     `json:"only_b"`
	Warnings []string     `json:"warnings"`
	Cells    []CellDelta  `json:"cells"`
	Columns  []ColumnTest `json:"columns"`
}

// CellDelta is one case × backend present in both summaries. Its runs
// are independent draws, so the success counts are compared with Fisher's
// exact test.
type CellDelta struct {
	Case            string  `json:"case"`
	Backend         string  `json:"backend"`
	KA              int     `json:"k_a"`
	NA              int     `json:"n_a"`
	KB              int     `json:"k_b"`
	NB              int     `json:"n_b"`
	RateDelta       float64 `json:"rate_delta"` // B - A, as a fraction
	P               float64 `json:"p"`          // Fisher's exact two-sided p-value
	BeyondNoise     bool    `json:"beyond_noise"`
	IterationsDelta float64 `json:"iterations_delta"` // medians, B - A
	TokensDelta     float64 `json:"tokens_delta"`
	CostDeltaUSD    float64 `json:"cost_delta_usd"`
	WallDeltaMS     float64 `json:"wall_delta_ms"`
}

// ColumnTest is one backend over the cases both summaries ran: the
// per-case success-rate differences, paired by case.
type ColumnTest struct {
	Backend      string   `json:"backend"`
	Cases        int      `json:"cases"`
	MeanDelta    float64  `json:"mean_delta"` // mean over cases of rate B - rate A
	CILow        float64  `json:"ci_low"`     // seeded bootstrap 95% interval of MeanDelta (cases and runs resampled)
	CIHigh       float64  `json:"ci_high"`
	BeyondNoise  bool     `json:"beyond_noise"` // the interval excludes 0
	Improved     []string `json:"improved"`     // cases that flipped to a majority of successes
	Regressed    []string `json:"regressed"`    // cases that flipped away from it
	McNemarP     float64  `json:"mcnemar_p"`    // exact McNemar p over the flipped cases
	CostDeltaUSD float64  `json:"cost_delta_usd"`
}

// Compare pairs two summaries by case id and backend.
func Compare(a, b Summary) Comparison {
	cmp := Comparison{A: a.EvalRunID, B: b.EvalRunID, OnlyA: []string{}, OnlyB: []string{}, Warnings: []string{}, Cells: []CellDelta{}, Columns: []ColumnTest{}}
	for _, c := range a.Cases {
		if !slices.Contains(b.Cases, c) {
			cmp.OnlyA = append(cmp.OnlyA, c)
		}
	}
	for _, c := range b.Cases {
		if !slices.Contains(a.Cases, c) {
			cmp.OnlyB = append(cmp.OnlyB, c)
		}
	}
	if len(cmp.OnlyA)+len(cmp.OnlyB) > 0 {
		cmp.Warnings = append(cmp.Warnings, fmt.Sprintf("the case sets differ: only in %s: %s; only in %s: %s; those cases are left out",
			a.EvalRunID, list(cmp.OnlyA), b.EvalRunID, list(cmp.OnlyB)))
	} else if a.CaseSetHash != b.CaseSetHash {
		cmp.Warnings = append(cmp.Warnings, "the case files changed between the two runs (case_set_hash differs): the same ids may not ask the same thing")
	}
	cellOf := func(s Summary, c, be string) *Cell {
		for i := range s.Cells {
			if s.Cells[i].Case == c && s.Cells[i].Backend == be {
				return &s.Cells[i]
			}
		}
		return nil
	}
	var backends []string
	for _, be := range a.Backends {
		if slices.Contains(b.Backends, be) {
			backends = append(backends, be)
		} else {
			cmp.Warnings = append(cmp.Warnings, fmt.Sprintf("backend %s is only in %s", be, a.EvalRunID))
		}
	}
	for _, be := range b.Backends {
		if !slices.Contains(a.Backends, be) {
			cmp.Warnings = append(cmp.Warnings, fmt.Sprintf("backend %s is only in %s", be, b.EvalRunID))
		}
	}
	for _, be := range backends {
		col := ColumnTest{Backend: be, Improved: []string{}, Regressed: []string{}}
		var ds []float64
		var pairs []Pair
		for _, c := range a.Cases {
			ca, cb := cellOf(a, c, be), cellOf(b, c, be)
			if ca == nil || cb == nil || ca.N == 0 || cb.N == 0 {
				continue
			}
			d := CellDelta{
				Case: c, Backend: be, KA: ca.Successes, NA: ca.N, KB: cb.Successes, NB: cb.N,
				RateDelta:       cb.Rate - ca.Rate,
				P:               FisherExact(ca.Successes, ca.N, cb.Successes, cb.N),
				IterationsDelta: cb.MedianIterations - ca.MedianIterations,
				TokensDelta:     cb.MedianTokens - ca.MedianTokens,
				CostDeltaUSD:    cb.MedianCostUSD - ca.MedianCostUSD,
				WallDeltaMS:     cb.MedianWallMS - ca.MedianWallMS,
			}
			d.BeyondNoise = d.P < Alpha
			cmp.Cells = append(cmp.Cells, d)
			ds = append(ds, d.RateDelta)
			pairs = append(pairs, Pair{KA: ca.Successes, NA: ca.N, KB: cb.Successes, NB: cb.N})
			col.CostDeltaUSD += cb.TotalCostUSD/float64(cb.N) - ca.TotalCostUSD/float64(ca.N)
			wa, wb := 2*ca.Successes > ca.N, 2*cb.Successes > cb.N
			switch {
			case wa && !wb:
				col.Regressed = append(col.Regressed, c)
			case !wa && wb:
				col.Improved = append(col.Improved, c)
			}
		}
		col.Cases = len(ds)
		if col.Cases == 0 {
			continue
		}
		for _, d := range ds {
			col.MeanDelta += d
		}
		col.MeanDelta /= float64(len(ds))
		col.CILow, col.CIHigh = BootstrapPairedCI(pairs, BootstrapResamples)
		col.BeyondNoise = col.CILow > 0 || col.CIHigh < 0
		col.McNemarP = McNemarExact(len(col.Regressed), len(col.Improved))
		cmp.Columns = append(cmp.Columns, col)
	}
	return cmp
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// Markdown renders the comparison.
func (c Comparison) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## eval-report: %s (A) → %s (B)\n\n", c.A, c.B)
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "warning: %s\n\n", w)
	}
	b.WriteString("| case | backend | A | B | Δ success | p (Fisher) | noise? | Δ iterations | Δ tokens | Δ cost $ | Δ wall s |\n")
	b.WriteString("| --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |\n")
	for _, d := range c.Cells {
		verdict := "within noise"
		if d.BeyondNoise {
			verdict = "**beyond noise**"
		}
		fmt.Fprintf(&b, "| %s | %s | %d/%d | %d/%d | %+.0f%% | %.3f | %s | %+.1f | %+.0f | %+.4f | %+.2f |\n",
			d.Case, d.Backend, d.KA, d.NA, d.KB, d.NB, 100*d.RateDelta, d.P, verdict,
			d.IterationsDelta, d.TokensDelta, d.CostDeltaUSD, d.WallDeltaMS/1000)
	}
	b.WriteString("\n| backend | cases | mean Δ success | 95% CI (bootstrap, paired by case) | noise? | improved | regressed | McNemar p | Δ cost $/run |\n")
	b.WriteString("| --- | ---: | ---: | --- | --- | --- | --- | ---: | ---: |\n")
	for _, col := range c.Columns {
		verdict := "within noise"
		if col.BeyondNoise {
			verdict = "**beyond noise**"
		}
		fmt.Fprintf(&b, "| %s | %d | %+.0f%% | %+.0f%% … %+.0f%% | %s | %s | %s | %.3f | %+.4f |\n",
			col.Backend, col.Cases, 100*col.MeanDelta, 100*col.CILow, 100*col.CIHigh, verdict,
			list(col.Improved), list(col.Regressed), col.McNemarP, col.CostDeltaUSD)
	}
	return b.String()
}
