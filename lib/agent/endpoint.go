package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/tidwall/gjson"

	"github.com/treeloop/treeloop/lib/config"
)

// Endpoint is where an agent CLI sends its requests and what it
// authenticates with, as far as the runner can tell from [agent], the
// environment and the CLI's own settings files (runner-check).
type Endpoint struct {
	URL     string   // the API's base URL
	URLFrom string   // what set it: a variable, "[agent] extra_args", a settings file, "the default"
	Keys    []string // the variables any one of which carries the key; none when no key is needed
	KeySet  bool     // one of Keys is set, or a login or a settings file gives a key
	Login   string   // how to log in instead of setting a key ("codex login"); "" when the CLI has no login
}

// EndpointEnv is how an endpoint is looked up: the environment's variables and
// the home directory.
type EndpointEnv struct {
	Getenv func(string) string
	Home   string
}

func (e EndpointEnv) set(names ...string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return e.Getenv(n) != "" })
}

func (e EndpointEnv) or(name, def string) (value, from string) {
	if v := e.Getenv(name); v != "" {
		return v, name
	}
	return def, "the default"
}

// EndpointOf is the endpoint of backend a in root; ok is false when the
// backend runs no provider's CLI (command, replay) or the CLI is set up
// in a way the runner does not read (a cloud platform's own credentials,
// a provider it does not know).
func EndpointOf(a config.Agent, root string, env EndpointEnv) (Endpoint, bool) {
	spec, _ := Lookup(a.Backend)
	if spec.Endpoint == nil {
		return Endpoint{}, false
	}
	return spec.Endpoint(a, root, env)
}

// codexEndpoint: the provider [agent] extra_args (-c model_provider=…,
// -c model_providers.<name>.base_url=…, .env_key=…) or Codex's
// config.toml choose; OpenAI's by default (OPENAI_BASE_URL, a key in
// OPENAI_API_KEY or CODEX_API_KEY, or `codex login`).
func codexEndpoint(a config.Agent, root string, env EndpointEnv) (Endpoint, bool) {
	codexHome := env.Getenv("CODEX_HOME")
	if codexHome == "" {
		codexHome = filepath.Join(env.Home, ".codex")
	}
	settings := map[string]string{}
	from := map[string]string{}
	var doc map[string]any
	if data, err := os.ReadFile(filepath.Join(codexHome, "config.toml")); err == nil && toml.Unmarshal(data, &doc) == nil {
		flattenTOML("", doc, settings)
		for k := range settings {
			from[k] = filepath.Join(codexHome, "config.toml")
		}
	}
	for i := 0; i+1 < len(a.ExtraArgs); i++ {
		if a.ExtraArgs[i] != "-c" && a.ExtraArgs[i] != "--config" {
			continue
		}
		if k, v, ok := strings.Cut(a.ExtraArgs[i+1], "="); ok {
			settings[k], from[k] = strings.Trim(v, `"'`), "[agent] extra_args"
		}
	}
	provider := settings["model_provider"]
	if provider == "" || provider == "openai" {
		e := Endpoint{Keys: []string{"OPENAI_API_KEY", "CODEX_API_KEY"}, Login: "codex login"}
		e.URL, e.URLFrom = env.or("OPENAI_BASE_URL", "https://api.openai.com/v1")
		e.KeySet = env.set(e.Keys...) || fileExists(filepath.Join(codexHome, "auth.json"))
		return e, true
	}
	url := settings["model_providers."+provider+".base_url"]
	if url == "" {
		return Endpoint{}, false // a provider of Codex's own (a local model server): not read here
	}
	e := Endpoint{URL: url, URLFrom: from["model_providers."+provider+".base_url"], KeySet: true}
	if k := settings["model_providers."+provider+".env_key"]; k != "" {
		e.Keys, e.KeySet = []string{k}, env.set(k)
	}
	return e, true
}

// flattenTOML puts doc's string values into out by dotted key.
func flattenTOML(prefix string, doc map[string]any, out map[string]string) {
	for k, v := range doc {
		switch v := v.(type) {
		case string:
			out[prefix+k] = v
		case map[string]any:
			flattenTOML(prefix+k+".", v, out)
		}
	}
}

// claudeEndpoint: ANTHROPIC_BASE_URL, a key in ANTHROPIC_API_KEY,
// ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN (or the "env" of Claude
// Code's settings files), an apiKeyHelper, or `claude` logged in; not
// read on Bedrock or Vertex.
func claudeEndpoint(a config.Agent, root string, env EndpointEnv) (Endpoint, bool) {
	vars := map[string]string{}
	helper := false
	for _, f := range claudeSettingsFiles(env.Home, root) {
		data, err := os.ReadFile(f)
		if err != nil || !gjson.ValidBytes(data) {
			continue
		}
		gjson.GetBytes(data, "env").ForEach(func(k, v gjson.Result) bool {
			vars[k.String()] = v.String()
			return true
		})
		helper = helper || gjson.GetBytes(data, "apiKeyHelper").String() != ""
	}
	get := func(n string) string {
		if v := env.Getenv(n); v != "" {
			return v
		}
		return vars[n]
	}
	e2 := EndpointEnv{Getenv: get, Home: env.Home}
	if e2.set("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX") {
		return Endpoint{}, false
	}
	e := Endpoint{Keys: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}, Login: "claude, then /login"}
	e.URL, e.URLFrom = e2.or("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
	dir := env.Getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		dir = filepath.Join(env.Home, ".claude")
	}
	e.KeySet = e2.set(e.Keys...) || helper || fileExists(filepath.Join(dir, ".credentials.json"))
	return e, true
}

// geminiEndpoint: GOOGLE_GEMINI_BASE_URL, a key in GEMINI_API_KEY or
// GOOGLE_API_KEY (or a .env file Gemini CLI reads), or a Google login;
// not read on Vertex AI.
func geminiEndpoint(a config.Agent, root string, env EndpointEnv) (Endpoint, bool) {
	if env.set("GOOGLE_GENAI_USE_VERTEXAI") {
		return Endpoint{}, false
	}
	e := Endpoint{Keys: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, Login: "gemini (sign in with Google)"}
	e.URL, e.URLFrom = env.or("GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com")
	e.KeySet = env.set(e.Keys...) || fileExists(filepath.Join(env.Home, ".gemini", "oauth_creds.json"))
	for _, f := range []string{filepath.Join(root, ".gemini", ".env"), filepath.Join(root, ".env"), filepath.Join(env.Home, ".gemini", ".env"), filepath.Join(env.Home, ".env")} {
		if data, err := os.ReadFile(f); err == nil && (strings.Contains(string(data), "GEMINI_API_KEY=") || strings.Contains(string(data), "GOOGLE_API_KEY=")) {
			e.KeySet = true
		}
	}
	return e, true
}

// opencodeProviders are the providers OpenCode knows without a
// configuration: their API and key variables.
var opencodeProviders = map[string]Endpoint{
	"openai":     {URL: "https://api.openai.com/v1", Keys: []string{"OPENAI_API_KEY"}},
	"anthropic":  {URL: "https://api.anthropic.com", Keys: []string{"ANTHROPIC_API_KEY"}},
	"google":     {URL: "https://generativelanguage.googleapis.com", Keys: []string{"GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"}},
	"openrouter": {URL: "https://openrouter.ai/api/v1", Keys: []string{"OPENROUTER_API_KEY"}},
	"groq":       {URL: "https://api.groq.com/openai/v1", Keys: []string{"GROQ_API_KEY"}},
	"mistral":    {URL: "https://api.mistral.ai/v1", Keys: []string{"MISTRAL_API_KEY"}},
}

// opencodeEndpoint: the provider of [agent] model ("provider/model"),
// its options.baseURL and options.apiKey in OpenCode's configuration
// (OPENCODE_CONFIG_CONTENT, OPENCODE_CONFIG, its JSON files), else what
// OpenCode knows of it, with a key in its variable or `opencode auth
// login`'s file.
func opencodeEndpoint(a config.Agent, root string, env EndpointEnv) (Endpoint, bool) {
	provider, _, ok := strings.Cut(a.Model, "/")
	if !ok {
		return Endpoint{}, false
	}
	e, known := opencodeProviders[provider]
	e.Keys, e.URLFrom, e.Login = slices.Clone(e.Keys), "the default", "opencode auth login"
	docs := [][]byte{[]byte(env.Getenv("OPENCODE_CONFIG_CONTENT"))}
	names := []string{"OPENCODE_CONFIG_CONTENT"}
	for _, f := range opencodeSettingsFiles(env.Home, root) {
		if data, err := os.ReadFile(f); err == nil && f != "" {
			docs, names = append(docs, data), append(names, f)
		}
	}
	configured := false
	for i, d := range docs {
		if !gjson.ValidBytes(d) {
			continue
		}
		p := gjson.GetBytes(d, "provider."+gjson.Escape(provider))
		if !p.Exists() {
			continue
		}
		configured = true
		if u := p.Get("options.baseURL").String(); u != "" {
			e.URL, e.URLFrom = u, names[i]
		}
		if p.Get("options.apiKey").String() != "" {
			e.KeySet = true
		}
	}
	if !known && !configured || e.URL == "" {
		return Endpoint{}, false
	}
	data := env.Getenv("XDG_DATA_HOME")
	if data == "" {
		data = filepath.Join(env.Home, ".local", "share")
	}
	if auth, err := os.ReadFile(filepath.Join(data, "opencode", "auth.json")); err == nil && gjson.GetBytes(auth, gjson.Escape(provider)).Exists() {
		e.KeySet = true
	}
	e.KeySet = e.KeySet || env.set(e.Keys...)
	if configured && !known {
		e.Keys = nil // a provider of the user's: its key, if any, is in the configuration
	}
	return e, true
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
