module github.com/treeloop/treeloop

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0
	github.com/bmatcuk/doublestar/v4 v4.10.0
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/fzipp/gocyclo v0.6.0
	github.com/go-json-experiment/json v1.27.2
	github.com/joshdk/go-junit v1.0.0
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/posener/complete v1.2.3
	github.com/rogpeppe/go-internal v1.16.0
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1
	github.com/tidwall/gjson v1.20.1
	github.com/tidwall/sjson v1.2.7
	github.com/willabides/kongplete v0.4.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.42.0
)

require (
	github.com/hashicorp/errwrap v1.1.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/riywo/loginshell v0.0.0-20200815045211-7d26008be1ab // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.0 // indirect
)

require golang.org/x/tools v0.26.0 // indirect
