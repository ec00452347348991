package agent

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
)

// TestEndpointOf: each CLI's endpoint and key as the runner reads them:
// the provider's defaults and variables, the base URLs and key variables
// the tests' scripted model server is configured with ([agent]
// extra_args for Codex, ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL,
// OPENCODE_CONFIG_CONTENT), a login file standing in for a key, and the
// setups it does not read.
func TestEndpointOf(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scripted := []string{"-c", "model_provider=scripted", "-c", "model_providers.scripted.name=scripted", "-c", "model_providers.scripted.base_url=http://127.0.0.1:4000/v1", "-c", "model_providers.scripted.env_key=TEST_KEY"}
	cases := []struct {
		name   string
		agent  config.Agent
		env    map[string]string
		files  map[string]string
		want   Endpoint
		wantOK bool
	}{
		{name: "command", agent: config.Agent{Backend: "command"}},
		{name: "replay", agent: config.Agent{Backend: "replay"}},
		{name: "codex default, no key", agent: config.Agent{Backend: "codex"}, wantOK: true,
			want: Endpoint{URL: "https://api.openai.com/v1", URLFrom: "the default", Keys: []string{"OPENAI_API_KEY", "CODEX_API_KEY"}, Login: "codex login"}},
		{name: "codex key and base URL", agent: config.Agent{Backend: "codex"}, env: map[string]string{"CODEX_API_KEY": "k", "OPENAI_BASE_URL": "http://proxy:8080/v1"}, wantOK: true,
			want: Endpoint{URL: "http://proxy:8080/v1", URLFrom: "OPENAI_BASE_URL", Keys: []string{"OPENAI_API_KEY", "CODEX_API_KEY"}, KeySet: true, Login: "codex login"}},
		{name: "codex logged in", agent: config.Agent{Backend: "codex"}, files: map[string]string{".codex/auth.json": "{}"}, wantOK: true,
			want: Endpoint{URL: "https://api.openai.com/v1", URLFrom: "the default", Keys: []string{"OPENAI_API_KEY", "CODEX_API_KEY"}, KeySet: true, Login: "codex login"}},
		{name: "codex scripted provider", agent: config.Agent{Backend: "codex", ExtraArgs: scripted}, env: map[string]string{"TEST_KEY": "k"}, wantOK: true,
			want: Endpoint{URL: "http://127.0.0.1:4000/v1", URLFrom: "[agent] extra_args", Keys: []string{"TEST_KEY"}, KeySet: true}},
		{name: "codex provider of its config.toml", agent: config.Agent{Backend: "codex"}, wantOK: true,
			files: map[string]string{".codex/config.toml": "model_provider = \"local\"\n[model_providers.local]\nname = \"local\"\nbase_url = \"http://127.0.0.1:11434/v1\"\n"},
			want:  Endpoint{URL: "http://127.0.0.1:11434/v1", URLFrom: filepath.Join(home, ".codex", "config.toml"), KeySet: true}},
		{name: "codex provider of its own", agent: config.Agent{Backend: "codex", ExtraArgs: []string{"-c", "model_provider=oss"}}},
		{name: "claude default", agent: config.Agent{Backend: "claude"}, env: map[string]string{"ANTHROPIC_API_KEY": "k"}, wantOK: true,
			want: Endpoint{URL: "https://api.anthropic.com", URLFrom: "the default", Keys: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}, KeySet: true, Login: "claude, then /login"}},
		{name: "claude settings env", agent: config.Agent{Backend: "claude"}, wantOK: true,
			files: map[string]string{".claude/settings.json": `{"env": {"ANTHROPIC_BASE_URL": "http://gw:9000", "ANTHROPIC_AUTH_TOKEN": "t"}}`},
			want:  Endpoint{URL: "http://gw:9000", URLFrom: "ANTHROPIC_BASE_URL", Keys: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}, KeySet: true, Login: "claude, then /login"}},
		{name: "claude on bedrock", agent: config.Agent{Backend: "claude"}, env: map[string]string{"CLAUDE_CODE_USE_BEDROCK": "1"}},
		{name: "gemini scripted", agent: config.Agent{Backend: "gemini"}, env: map[string]string{"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:5000"}, wantOK: true,
			want: Endpoint{URL: "http://127.0.0.1:5000", URLFrom: "GOOGLE_GEMINI_BASE_URL", Keys: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, KeySet: true, Login: "gemini (sign in with Google)"}},
		{name: "gemini key in .env", agent: config.Agent{Backend: "gemini"}, files: map[string]string{".gemini/.env": "GEMINI_API_KEY=k\n"}, wantOK: true,
			want: Endpoint{URL: "https://generativelanguage.googleapis.com", URLFrom: "the default", Keys: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, KeySet: true, Login: "gemini (sign in with Google)"}},
		{name: "gemini on vertex", agent: config.Agent{Backend: "gemini"}, env: map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "true"}},
		{name: "opencode scripted", agent: config.Agent{Backend: "opencode", Model: "scripted/scripted-model"}, wantOK: true,
			env:  map[string]string{"OPENCODE_CONFIG_CONTENT": `{"provider":{"scripted":{"options":{"baseURL":"http://127.0.0.1:6000/v1","apiKey":"k"}}}}`},
			want: Endpoint{URL: "http://127.0.0.1:6000/v1", URLFrom: "OPENCODE_CONFIG_CONTENT", KeySet: true, Login: "opencode auth login"}},
		{name: "opencode openai, no key", agent: config.Agent{Backend: "opencode", Model: "openai/gpt-5"}, wantOK: true,
			want: Endpoint{URL: "https://api.openai.com/v1", URLFrom: "the default", Keys: []string{"OPENAI_API_KEY"}, Login: "opencode auth login"}},
		{name: "opencode openai, logged in", agent: config.Agent{Backend: "opencode", Model: "openai/gpt-5"}, wantOK: true,
			files: map[string]string{".local/share/opencode/auth.json": `{"openai": {"type": "api", "key": "k"}}`},
			want:  Endpoint{URL: "https://api.openai.com/v1", URLFrom: "the default", Keys: []string{"OPENAI_API_KEY"}, KeySet: true, Login: "opencode auth login"}},
		{name: "opencode unknown provider", agent: config.Agent{Backend: "opencode", Model: "mine/m"}},
		{name: "opencode no provider", agent: config.Agent{Backend: "opencode"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(home)
			for rel, text := range c.files {
				write(rel, text)
			}
			env := EndpointEnv{Getenv: func(k string) string { return c.env[k] }, Home: home}
			got, ok := EndpointOf(c.agent, root, env)
			if ok != c.wantOK || got.URL != c.want.URL || got.URLFrom != c.want.URLFrom || !slices.Equal(got.Keys, c.want.Keys) || got.KeySet != c.want.KeySet || got.Login != c.want.Login {
				t.Errorf("EndpointOf = %+v, %v\nwant          %+v, %v", got, ok, c.want, c.wantOK)
			}
		})
	}
}
