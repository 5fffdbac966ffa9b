// Package llm is the backend of the LLM pane: it gathers the evidence of
// the current moment of a replay into a window of cited items, hides
// secrets, sends the window and a question to a language model (OpenAI's
// chat completions, which Ollama, llama.cpp and vLLM also serve, or
// Anthropic's messages), and finds the citations in the answer.
package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Message is one turn of a conversation; Role is "system", "user" or
// "assistant".
type Message struct{ Role, Content string }

// Request is what a provider sends. An empty Model is the provider's
// configured one; MaxTokens 0 is the provider's default.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	MaxTokens int
	Stream    bool
}

// Provider is a language model API.
type Provider interface {
	// Name is "openai" or "anthropic", for messages.
	Name() string
	// Complete sends the request and returns the whole answer. With
	// req.Stream it reads server-sent events and gives each piece of text
	// to onDelta as it comes; without, onDelta gets the whole text once.
	// onDelta may be nil. On an error after some text arrived, the text so
	// far is returned with the error.
	Complete(ctx context.Context, req Request, onDelta func(string)) (string, error)
}

// Config selects and sets up a provider: the [llm] table of config.toml,
// overlaid with the environment by ConfigFromEnv.
//
//	[llm]
//	provider = "openai"                   # openai or anthropic
//	base_url = "http://localhost:11434/v1" # Ollama, llama.cpp, vLLM…
//	model = "qwen2.5-coder:7b"
//	api_key = "…"                         # better in the environment
//	budget = 8000                         # tokens of evidence per question
//	redact = ["(?i)bearer [a-z0-9._-]+"]  # more secrets to hide
type Config struct {
	Provider string   `toml:"provider"`
	BaseURL  string   `toml:"base_url"`
	Model    string   `toml:"model"`
	APIKey   string   `toml:"api_key"`
	Budget   int      `toml:"budget"`
	Redact   []string `toml:"redact"`
}

// Default endpoints and models. The models are only a starting point for
// the hosted APIs; a local server needs its own model named.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultOpenAIModel      = "gpt-4o-mini"
	DefaultAnthropicModel   = "claude-sonnet-4-5"
	// DefaultMaxTokens bounds an answer when the request does not:
	// Anthropic requires a bound, and an explanation rarely needs more.
	DefaultMaxTokens = 2048
)

// ErrNoProvider is returned by New when no provider is configured; its
// message (through the wrapping error) explains how to set one up.
var ErrNoProvider = errors.New("llm: no provider configured")

// setupHelp is appended to ErrNoProvider.
const setupHelp = `set REWIND_LLM_PROVIDER (openai or anthropic) and REWIND_LLM_API_KEY ` +
	`(or OPENAI_API_KEY / ANTHROPIC_API_KEY), optionally REWIND_LLM_MODEL and REWIND_LLM_BASE_URL ` +
	`(a local server such as Ollama: REWIND_LLM_BASE_URL=http://localhost:11434/v1, no key needed); ` +
	`or provider, api_key, model, base_url in the [llm] table of config.toml`

// noProvider wraps ErrNoProvider with why and the setup help.
func noProvider(why string) error {
	return fmt.Errorf("%w: %s; %s", ErrNoProvider, why, setupHelp)
}

// ConfigFromEnv overlays REWIND_LLM_PROVIDER (openai|anthropic),
// REWIND_LLM_BASE_URL, REWIND_LLM_MODEL and REWIND_LLM_API_KEY on a base
// config. Without a key, the key is the provider's usual variable:
// OPENAI_API_KEY or ANTHROPIC_API_KEY. Without a provider, a base URL means
// an OpenAI-compatible server, and a key in exactly one of the usual
// variables means that provider (with both, the choice is left to the
// user: New then reports no provider).
func ConfigFromEnv(base Config, getenv func(string) string) Config {
	c := base
	set := func(dst *string, name string) {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			*dst = v
		}
	}
	set(&c.Provider, "REWIND_LLM_PROVIDER")
	set(&c.BaseURL, "REWIND_LLM_BASE_URL")
	set(&c.Model, "REWIND_LLM_MODEL")
	set(&c.APIKey, "REWIND_LLM_API_KEY")
	c.Provider = strings.ToLower(c.Provider)
	openaiKey, anthropicKey := strings.TrimSpace(getenv("OPENAI_API_KEY")), strings.TrimSpace(getenv("ANTHROPIC_API_KEY"))
	if c.Provider == "" {
		switch {
		case c.BaseURL != "":
			c.Provider = "openai"
		case openaiKey != "" && anthropicKey == "":
			c.Provider = "openai"
		case anthropicKey != "" && openaiKey == "":
			c.Provider = "anthropic"
		}
	}
	if c.APIKey == "" {
		switch c.Provider {
		case "openai":
			c.APIKey = openaiKey
		case "anthropic":
			c.APIKey = anthropicKey
		}
	}
	return c
}

// New returns the configured provider, or ErrNoProvider (wrapped, with how
// to set one up) when none is: no provider, or a hosted API without a key.
// A server at another base URL (Ollama, llama.cpp, vLLM through "openai")
// needs no key. client nil is a client without a timeout: answers stream
// for as long as they take, and the context cancels them.
func New(c Config, client *http.Client) (Provider, error) {
	if client == nil {
		client = &http.Client{}
	}
	base := strings.TrimRight(strings.TrimSpace(c.BaseURL), "/")
	switch strings.ToLower(c.Provider) {
	case "":
		return nil, noProvider("no provider")
	case "openai":
		if base == "" {
			base = DefaultOpenAIBaseURL
		}
		model := c.Model
		if base == DefaultOpenAIBaseURL {
			if c.APIKey == "" {
				return nil, noProvider("openai needs an API key")
			}
			if model == "" {
				model = DefaultOpenAIModel
			}
		}
		return &openAI{api{name: "openai", base: base, key: c.APIKey, model: model, client: client}}, nil
	case "anthropic":
		if base == "" {
			base = DefaultAnthropicBaseURL
		}
		if base == DefaultAnthropicBaseURL && c.APIKey == "" {
			return nil, noProvider("anthropic needs an API key")
		}
		model := c.Model
		if model == "" {
			model = DefaultAnthropicModel
		}
		return &anthropic{api{name: "anthropic", base: base, key: c.APIKey, model: model, client: client}}, nil
	default:
		return nil, fmt.Errorf("llm: unknown provider %q (openai or anthropic; local servers use openai with a base URL)", c.Provider)
	}
}

// api is what both providers share: where, who, and the HTTP exchange.
type api struct {
	name, base, key, model string
	client                 *http.Client
}

// Name is the provider's name.
func (a *api) Name() string { return a.name }

// errorf makes the one-line errors of a provider: "llm: openai: …".
func (a *api) errorf(format string, args ...any) error {
	return fmt.Errorf("llm: "+a.name+": "+format, args...)
}

// modelFor is the request's model or the configured one.
func (a *api) modelFor(req Request) (string, error) {
	if req.Model != "" {
		return req.Model, nil
	}
	if a.model != "" {
		return a.model, nil
	}
	return "", a.errorf("no model: set REWIND_LLM_MODEL or model in the [llm] table of config.toml")
}

// post sends a JSON body and returns the response of a successful status;
// any other status is an error with the API's message.
func (a *api) post(ctx context.Context, url string, body any, header http.Header) (*http.Response, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, a.errorf("encoding the request: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return nil, a.errorf("%w", err)
	}
	hr.Header = header
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("User-Agent", "rewind")
	resp, err := a.client.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, a.errorf("%w", ctx.Err())
		}
		return nil, a.errorf("%w", err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, a.errorf("%d: %s", resp.StatusCode, apiMessage(msg, resp.StatusCode))
	}
	return resp, nil
}

// apiMessage finds the error message in an error response: OpenAI's and
// Anthropic's {"error":{"message":…}}, the {"error":"…"} or {"message":…}
// of other servers, else the body's first line, else the status text.
func apiMessage(body []byte, status int) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var flat string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			return oneLine(nested.Message)
		case json.Unmarshal(v.Error, &flat) == nil && flat != "":
			return oneLine(flat)
		case v.Message != "":
			return oneLine(v.Message)
		case v.Detail != nil:
			return oneLine(fmt.Sprint(v.Detail))
		}
	}
	if s := oneLine(string(body)); s != "" {
		return s
	}
	if t := http.StatusText(status); t != "" {
		return strings.ToLower(t)
	}
	return "HTTP status " + strconv.Itoa(status)
}

// oneLine keeps a message to one short line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// sse reads server-sent events and gives each event's type (the "event:"
// field, "" if none) and data to f, until f returns false or the stream
// ends. Data lines of one event are joined with newlines, as the spec says.
func sse(r io.Reader, f func(event, data string) (more bool, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var event string
	var data []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if len(data) > 0 {
				more, err := f(event, strings.Join(data, "\n"))
				if err != nil || !more {
					return err
				}
			}
			event, data = "", nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			data = append(data, value)
		}
	}
	if err := sc.Err(); err != nil {
		return &readError{err}
	}
	if len(data) > 0 {
		_, err := f(event, strings.Join(data, "\n"))
		return err
	}
	return nil
}

// header starts the headers of a request: name: value authenticates it
// (left out without a key), and a streamed request asks for events.
func (a *api) header(stream bool, name, value string) http.Header {
	h := http.Header{}
	if a.key != "" {
		h.Set(name, value)
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	return h
}

// whole is the text of an answer that came in one response, which
// onDelta gets as one piece.
func whole(text string, onDelta func(string)) string {
	if onDelta != nil && text != "" {
		onDelta(text)
	}
	return text
}

// answer is a streamed answer as it comes.
type answer struct {
	text     strings.Builder
	onDelta  func(string)
	complete bool // the stream said the answer is whole
}

// add appends a piece of the answer and hands it to onDelta.
func (ans *answer) add(d string) {
	if d == "" {
		return
	}
	ans.text.WriteString(d)
	if ans.onDelta != nil {
		ans.onDelta(d)
	}
}

// streamed reads an answer streamed as server-sent events. event reads
// one event: it adds the text the event brings, marks the answer complete
// when the event says so, and returns whether to read on.
func (a *api) streamed(ctx context.Context, resp *http.Response, onDelta func(string), event func(ans *answer, event, data string) (bool, error)) (string, error) {
	defer resp.Body.Close()
	ans := &answer{onDelta: onDelta}
	err := sse(resp.Body, func(name, data string) (bool, error) {
		return event(ans, name, data)
	})
	return ans.text.String(), a.streamEnd(ctx, err, ans.complete)
}

// readError is a stream that could not be read, as opposed to an event
// that said something went wrong.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// streamEnd is the error of a finished stream: nil when it ended as it
// should, the context's error if it was cancelled, the read error, the
// event's own error, or a premature end.
func (a *api) streamEnd(ctx context.Context, err error, complete bool) error {
	var re *readError
	switch {
	case ctx.Err() != nil && (err != nil || !complete):
		return a.errorf("%w", ctx.Err())
	case errors.As(err, &re):
		return a.errorf("reading the stream: %w", re.err)
	case err != nil:
		return err
	case !complete:
		return a.errorf("the stream ended before the answer did")
	}
	return nil
}

// readJSON decodes a non-streamed response.
func (a *api) readJSON(ctx context.Context, resp *http.Response, v any) error {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		if ctx.Err() != nil {
			return a.errorf("%w", ctx.Err())
		}
		return a.errorf("reading the response: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return a.errorf("bad response: %w", err)
	}
	return nil
}
