package ui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/rewind-debugger/rewind/keymaps"
	"github.com/rewind-debugger/rewind/llm"
	"github.com/rewind-debugger/rewind/themes"
)

// Config is ~/.config/rewind/config.toml (XDG_CONFIG_HOME honoured):
//
//	theme = "auto"        # auto (by the terminal's background), dark, light, high-contrast
//	keys = "default"      # default, vim, emacs
//	layout = "default"    # small, medium, large, wide, or a spec: "source*2 | locals / console"
//	[bindings]            # overrides by action name
//	step = ["s", "f7"]
//	[llm]                 # the LLM pane's provider (REWIND_LLM_* override)
//	provider = "openai"   # or anthropic; base_url, model, api_key, budget, redact
type Config struct {
	Theme    string              `toml:"theme"`
	Keys     string              `toml:"keys"`
	Layout   string              `toml:"layout"`
	Bindings map[string][]string `toml:"bindings"`
	LLM      llm.Config          `toml:"llm"`
}

// ConfigPath is where the config file is looked for.
func ConfigPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "rewind", "config.toml")
}

// LoadConfig reads and validates the config file; a missing file is the
// defaults. Errors name the file and the problem in one line.
func LoadConfig(path string) (*Config, error) {
	c := &Config{}
	if path == "" {
		return c, nil
	}
	md, err := toml.DecodeFile(path, c)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %s", path, strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if und := md.Undecoded(); len(und) > 0 {
		var names []string
		for _, k := range und {
			names = append(names, k.String())
		}
		sort.Strings(names)
		return nil, fmt.Errorf("config %s: unknown setting %s", path, strings.Join(names, ", "))
	}
	if _, ok := themes.ByName(c.Theme, true); !ok {
		return nil, fmt.Errorf("config %s: unknown theme %q (auto, %s)", path, c.Theme, strings.Join(themes.Names, ", "))
	}
	if _, err := ParseLayout(c.Layout); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	for _, re := range c.LLM.Redact {
		if _, err := regexp.Compile(re); err != nil {
			return nil, fmt.Errorf("config %s: llm.redact %q: %v", path, re, err)
		}
	}
	if p := strings.ToLower(c.LLM.Provider); p != "" && p != "openai" && p != "anthropic" {
		return nil, fmt.Errorf("config %s: llm.provider %q: openai or anthropic", path, p)
	}
	if _, err := keymaps.New(c.Keys, c.Bindings); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}
