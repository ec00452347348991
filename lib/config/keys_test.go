package config

import (
	"math"
	"strings"
	"testing"
)

func TestParsePrices(t *testing.T) {
	c, err := Parse("config.toml", []byte("[agent.prices.\"gpt-5.1\"]\ninput = 1.25\ncached_input = 0.125\noutput = 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.Agent.Price("gpt-5.1")
	if !ok || p != (Price{Input: 1.25, CachedInput: 0.125, Output: 10}) {
		t.Fatalf("Price = %+v, %v", p, ok)
	}
	// 1M input of which 200k cached, 100k output.
	if got, want := p.Cost(1_000_000, 200_000, 100_000), 0.8*1.25+0.2*0.125+0.1*10; math.Abs(got-want) > 1e-12 {
		t.Errorf("Cost = %v, want %v", got, want)
	}
	if _, ok := c.Agent.Price(""); ok {
		t.Error("the empty model has a price")
	}
}

func TestParsePricesStrict(t *testing.T) {
	for doc, want := range map[string]string{
		"[agent.prices.m]\ninput = 1\noutptu = 2\n": `config.toml:3: unknown key "agent.prices.m.outptu"`,
		"[agent.prices.m]\ninput = -1\n":            `agent.prices.m.input: must be 0 or a positive number`,
		"[agent.prices.m]\ninput = \"cheap\"\n":     `agent.prices.m.input: cannot decode`,
	} {
		_, err := Parse("config.toml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", doc, err, want)
		}
	}
}

func TestUnknownKeySuggestion(t *testing.T) {
	for doc, want := range map[string]string{
		"max_iteratoins = 3\n":            `unknown key "max_iteratoins" (did you mean "max_iterations"?)`,
		"[agent]\nmax_iterations = 3\n":   `unknown key "agent.max_iterations" (did you mean "max_iterations"?)`,
		"[agent]\nbackedn = \"codex\"\n":  `unknown key "agent.backedn" (did you mean "agent.backend"?)`,
		"[guard]\nflavour = \"strict\"\n": `unknown key "guard.flavour"`,
	} {
		_, err := Parse("config.toml", []byte(doc))
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want …%s", doc, err, want)
		}
	}
}

// The default file's header names every environment override.
func TestDefaultTOMLNamesEveryOverride(t *testing.T) {
	for _, v := range []string{EnvAgent, EnvAgentBin, EnvAgentModel, EnvAgentExtraArgs, EnvAgentCassette, EnvMaxIterations, EnvIterationTimeoutSecs} {
		if !strings.Contains(string(DefaultTOML()), v) {
			t.Errorf("DefaultTOML's header does not name %s", v)
		}
	}
}
