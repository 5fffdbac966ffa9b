package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// exchange is what a fake server saw of one request.
type exchange struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any
}

// fakeAPI serves one canned response (status, content type, body) and
// records the request.
func fakeAPI(t *testing.T, status int, contentType, body string) (*httptest.Server, *exchange) {
	t.Helper()
	ex := &exchange{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ex.Method, ex.Path, ex.Header = r.Method, r.URL.Path, r.Header.Clone()
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &ex.Body); err != nil {
			t.Errorf("request body is not JSON: %v\n%s", err, data)
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, ex
}

// sseBody joins events as a server sends them.
func sseBody(events ...string) string { return strings.Join(events, "\n\n") + "\n\n" }

func openAIChunk(s string) string {
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": s}, "finish_reason": nil}}})
	return "data: " + string(b)
}

func anthropicDelta(s string) string {
	b, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": s}})
	return "event: content_block_delta\ndata: " + string(b)
}

var baseRequest = Request{System: "be brief", Messages: []Message{{Role: "user", Content: "why?"}}}

func TestProviders(t *testing.T) {
	openAIOK := `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"because [ev:3]"},"finish_reason":"stop"}]}`
	anthropicOK := `{"id":"msg","type":"message","role":"assistant","content":[{"type":"text","text":"because "},{"type":"text","text":"[ev:3]"}],"stop_reason":"end_turn"}`
	for _, c := range []struct {
		name        string
		config      Config
		req         func(Request) Request
		status      int
		contentType string
		body        string
		// The request the server must see.
		path     string
		headers  map[string]string // "" means absent
		wantBody map[string]any
		// The result.
		want    string
		deltas  []string
		wantErr string
	}{
		{
			name: "openai", config: Config{Provider: "openai", APIKey: "sk-1", Model: "gpt-x"},
			status: 200, contentType: "application/json", body: openAIOK,
			path:    "/v1/chat/completions",
			headers: map[string]string{"Authorization": "Bearer sk-1", "Content-Type": "application/json", "Accept": ""},
			wantBody: map[string]any{"model": "gpt-x", "stream": false, "messages": []any{
				map[string]any{"role": "system", "content": "be brief"}, map[string]any{"role": "user", "content": "why?"}}},
			want: "because [ev:3]", deltas: []string{"because [ev:3]"},
		},
		{
			name: "openai stream, model and max tokens of the request", config: Config{Provider: "openai", APIKey: "sk-1", Model: "gpt-x"},
			req:    func(r Request) Request { r.Stream, r.Model, r.MaxTokens = true, "gpt-y", 100; return r },
			status: 200, contentType: "text/event-stream",
			body:    sseBody(openAIChunk("bec"), openAIChunk("ause"), `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, "data: [DONE]"),
			path:    "/v1/chat/completions",
			headers: map[string]string{"Authorization": "Bearer sk-1", "Accept": "text/event-stream"},
			wantBody: map[string]any{"model": "gpt-y", "stream": true, "max_tokens": float64(100), "messages": []any{
				map[string]any{"role": "system", "content": "be brief"}, map[string]any{"role": "user", "content": "why?"}}},
			want: "because", deltas: []string{"bec", "ause"},
		},
		{
			name: "local server without a key", config: Config{Provider: "openai", Model: "qwen"},
			status: 200, contentType: "application/json", body: openAIOK,
			path: "/v1/chat/completions", headers: map[string]string{"Authorization": ""},
			want: "because [ev:3]", deltas: []string{"because [ev:3]"},
		},
		{
			name: "openai 401", config: Config{Provider: "openai", APIKey: "bad", Model: "m"},
			status: 401, contentType: "application/json",
			body:    `{"error":{"message":"Incorrect API key provided: bad.","type":"invalid_request_error","code":"invalid_api_key"}}`,
			wantErr: "llm: openai: 401: Incorrect API key provided: bad.",
		},
		{
			name: "openai error inside the stream", config: Config{Provider: "openai", Model: "m"},
			req:    func(r Request) Request { r.Stream = true; return r },
			status: 200, contentType: "text/event-stream",
			body:    sseBody(openAIChunk("part"), `data: {"error":{"message":"context length exceeded"}}`),
			want:    "part",
			deltas:  []string{"part"},
			wantErr: "llm: openai: context length exceeded",
		},
		{
			name: "openai stream cut short", config: Config{Provider: "openai", Model: "m"},
			req:    func(r Request) Request { r.Stream = true; return r },
			status: 200, contentType: "text/event-stream", body: sseBody(openAIChunk("part")),
			want: "part", deltas: []string{"part"}, wantErr: "llm: openai: the stream ended before the answer did",
		},
		{
			name: "plain text error", config: Config{Provider: "openai", Model: "m"},
			status: 502, contentType: "text/plain", body: "upstream\nunavailable\n",
			wantErr: "llm: openai: 502: upstream unavailable",
		},
		{
			name: "empty error", config: Config{Provider: "openai", Model: "m"},
			status: 500, contentType: "text/plain", body: "",
			wantErr: "llm: openai: 500: internal server error",
		},
		{
			name: "ollama's error", config: Config{Provider: "openai", Model: "nope"},
			status: 404, contentType: "application/json", body: `{"error":"model \"nope\" not found, try pulling it first"}`,
			wantErr: `llm: openai: 404: model "nope" not found, try pulling it first`,
		},
		{
			name: "no choices", config: Config{Provider: "openai", Model: "m"},
			status: 200, contentType: "application/json", body: `{"choices":[]}`,
			wantErr: "llm: openai: no choices in the response",
		},
		{
			name: "anthropic", config: Config{Provider: "anthropic", APIKey: "ak-1", Model: "claude-x"},
			status: 200, contentType: "application/json", body: anthropicOK,
			path: "/v1/messages",
			headers: map[string]string{"X-Api-Key": "ak-1", "Anthropic-Version": "2023-06-01", "Content-Type": "application/json",
				"Authorization": ""},
			wantBody: map[string]any{"model": "claude-x", "max_tokens": float64(DefaultMaxTokens), "system": "be brief", "stream": false,
				"messages": []any{map[string]any{"role": "user", "content": "why?"}}},
			want: "because [ev:3]", deltas: []string{"because [ev:3]"},
		},
		{
			name: "anthropic stream", config: Config{Provider: "anthropic", APIKey: "ak-1", Model: "claude-x"},
			req:    func(r Request) Request { r.Stream, r.MaxTokens = true, 50; return r },
			status: 200, contentType: "text/event-stream",
			body: sseBody(
				`event: message_start`+"\n"+`data: {"type":"message_start","message":{"id":"msg","content":[]}}`,
				`event: content_block_start`+"\n"+`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`event: ping`+"\n"+`data: {"type": "ping"}`,
				anthropicDelta("bec"), anthropicDelta("ause"),
				`event: content_block_stop`+"\n"+`data: {"type":"content_block_stop","index":0}`,
				`event: message_delta`+"\n"+`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"}}`,
				`event: message_stop`+"\n"+`data: {"type":"message_stop"}`),
			path:    "/v1/messages",
			headers: map[string]string{"X-Api-Key": "ak-1", "Anthropic-Version": "2023-06-01", "Accept": "text/event-stream"},
			wantBody: map[string]any{"model": "claude-x", "max_tokens": float64(50), "system": "be brief", "stream": true,
				"messages": []any{map[string]any{"role": "user", "content": "why?"}}},
			want: "because", deltas: []string{"bec", "ause"},
		},
		{
			name: "anthropic 401", config: Config{Provider: "anthropic", APIKey: "bad"},
			status: 401, contentType: "application/json",
			body:    `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
			wantErr: "llm: anthropic: 401: invalid x-api-key",
		},
		{
			name: "anthropic overloaded in the stream", config: Config{Provider: "anthropic", APIKey: "k"},
			req:    func(r Request) Request { r.Stream = true; return r },
			status: 200, contentType: "text/event-stream",
			body:    sseBody(anthropicDelta("par"), `event: error`+"\n"+`data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			want:    "par",
			deltas:  []string{"par"},
			wantErr: "llm: anthropic: Overloaded",
		},
		{
			name: "anthropic stream cut short", config: Config{Provider: "anthropic", APIKey: "k"},
			req:    func(r Request) Request { r.Stream = true; return r },
			status: 200, contentType: "text/event-stream", body: sseBody(anthropicDelta("par")),
			want: "par", deltas: []string{"par"}, wantErr: "llm: anthropic: the stream ended before the answer did",
		},
		{
			name: "anthropic default model", config: Config{Provider: "anthropic", APIKey: "k"},
			status: 200, contentType: "application/json", body: anthropicOK,
			wantBody: map[string]any{"model": DefaultAnthropicModel, "max_tokens": float64(DefaultMaxTokens), "system": "be brief", "stream": false,
				"messages": []any{map[string]any{"role": "user", "content": "why?"}}},
			want: "because [ev:3]", deltas: []string{"because [ev:3]"},
		},
		{
			name: "no model for a local server", config: Config{Provider: "openai"},
			wantErr: "llm: openai: no model: set REWIND_LLM_MODEL or model in the [llm] table of config.toml",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, ex := fakeAPI(t, c.status, c.contentType, c.body)
			cfg := c.config
			cfg.BaseURL = srv.URL
			if cfg.Provider == "openai" {
				cfg.BaseURL += "/v1"
			}
			p, err := New(cfg, srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != cfg.Provider {
				t.Errorf("Name() = %q", p.Name())
			}
			req := baseRequest
			if c.req != nil {
				req = c.req(req)
			}
			var deltas []string
			got, err := p.Complete(context.Background(), req, func(d string) { deltas = append(deltas, d) })
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Errorf("err = %v, want %s", err, c.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("answer %q, want %q", got, c.want)
			}
			if !reflect.DeepEqual(deltas, c.deltas) {
				t.Errorf("deltas %q, want %q", deltas, c.deltas)
			}
			if c.path != "" && (ex.Path != c.path || ex.Method != http.MethodPost) {
				t.Errorf("request %s %s, want POST %s", ex.Method, ex.Path, c.path)
			}
			for k, v := range c.headers {
				if got := ex.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if c.wantBody != nil && !reflect.DeepEqual(ex.Body, c.wantBody) {
				t.Errorf("body\n got %v\nwant %v", ex.Body, c.wantBody)
			}
		})
	}
}

// TestCancel: cancelling the context ends a stream that the server keeps
// open, with the text so far and the context's error.
func TestCancel(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				if provider == "openai" {
					fmt.Fprint(w, openAIChunk("first")+"\n\n")
				} else {
					fmt.Fprint(w, anthropicDelta("first")+"\n\n")
				}
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}))
			defer srv.Close()
			p, err := New(Config{Provider: provider, BaseURL: srv.URL, Model: "m", APIKey: "k"}, srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got, err := p.Complete(ctx, Request{Messages: []Message{{Role: "user", Content: "q"}}, Stream: true}, func(string) { cancel() })
			if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "llm: "+provider+": ") {
				t.Errorf("err = %v, want a cancellation", err)
			}
			if got != "first" {
				t.Errorf("answer %q, want the text so far", got)
			}
		})
	}
	// Cancelled before the request: no panic, the context's error.
	p, err := New(Config{Provider: "openai", BaseURL: "http://127.0.0.1:1", Model: "m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Complete(ctx, baseRequest, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestNew(t *testing.T) {
	for _, c := range []struct {
		name      string
		config    Config
		provider  string // "" for an error
		noProv    bool   // the error is ErrNoProvider
		errSubstr string
	}{
		{name: "nothing", config: Config{}, noProv: true, errSubstr: "REWIND_LLM_PROVIDER"},
		{name: "openai without a key", config: Config{Provider: "openai"}, noProv: true, errSubstr: "openai needs an API key"},
		{name: "anthropic without a key", config: Config{Provider: "anthropic"}, noProv: true, errSubstr: "ANTHROPIC_API_KEY"},
		{name: "openai", config: Config{Provider: "openai", APIKey: "k"}, provider: "openai"},
		{name: "case", config: Config{Provider: "OpenAI", APIKey: "k"}, provider: "openai"},
		{name: "local openai", config: Config{Provider: "openai", BaseURL: "http://localhost:11434/v1"}, provider: "openai"},
		{name: "anthropic", config: Config{Provider: "anthropic", APIKey: "k"}, provider: "anthropic"},
		{name: "unknown", config: Config{Provider: "gemini", APIKey: "k"}, errSubstr: `unknown provider "gemini"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := New(c.config, nil)
			if c.provider != "" {
				if err != nil || p.Name() != c.provider {
					t.Fatalf("New = %v, %v; want %s", p, err, c.provider)
				}
				return
			}
			if err == nil {
				t.Fatalf("New = %v, want an error", p.Name())
			}
			if errors.Is(err, ErrNoProvider) != c.noProv || !strings.Contains(err.Error(), c.errSubstr) {
				t.Errorf("err = %v; want ErrNoProvider %v, containing %q", err, c.noProv, c.errSubstr)
			}
			if c.noProv {
				// The message says how to set one up.
				for _, want := range []string{"REWIND_LLM_API_KEY", "OPENAI_API_KEY", "REWIND_LLM_BASE_URL", "[llm]", "config.toml"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("err lacks %q: %v", want, err)
					}
				}
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	for _, c := range []struct {
		name string
		base Config
		env  map[string]string
		want Config
	}{
		{name: "nothing", want: Config{}},
		{name: "base kept", base: Config{Provider: "anthropic", Model: "m", APIKey: "k", Budget: 3, Redact: []string{"x"}},
			want: Config{Provider: "anthropic", Model: "m", APIKey: "k", Budget: 3, Redact: []string{"x"}}},
		{name: "env overrides",
			base: Config{Provider: "anthropic", Model: "m", APIKey: "k", BaseURL: "http://a"},
			env: map[string]string{"REWIND_LLM_PROVIDER": "OpenAI", "REWIND_LLM_MODEL": "n", "REWIND_LLM_API_KEY": "k2",
				"REWIND_LLM_BASE_URL": "http://b", "OPENAI_API_KEY": "other"},
			want: Config{Provider: "openai", Model: "n", APIKey: "k2", BaseURL: "http://b"}},
		{name: "openai key fallback", base: Config{Provider: "openai"},
			env:  map[string]string{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"},
			want: Config{Provider: "openai", APIKey: "sk-o"}},
		{name: "anthropic key fallback", env: map[string]string{"REWIND_LLM_PROVIDER": "anthropic", "OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"},
			want: Config{Provider: "anthropic", APIKey: "sk-a"}},
		{name: "config key beats fallback", base: Config{Provider: "openai", APIKey: "cfg"}, env: map[string]string{"OPENAI_API_KEY": "sk-o"},
			want: Config{Provider: "openai", APIKey: "cfg"}},
		{name: "only an openai key", env: map[string]string{"OPENAI_API_KEY": "sk-o"}, want: Config{Provider: "openai", APIKey: "sk-o"}},
		{name: "only an anthropic key", env: map[string]string{"ANTHROPIC_API_KEY": "sk-a"}, want: Config{Provider: "anthropic", APIKey: "sk-a"}},
		{name: "both keys: no guess", env: map[string]string{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"}, want: Config{}},
		{name: "a base URL means openai", env: map[string]string{"REWIND_LLM_BASE_URL": "http://localhost:8080/v1", "ANTHROPIC_API_KEY": "sk-a"},
			want: Config{Provider: "openai", BaseURL: "http://localhost:8080/v1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ConfigFromEnv(c.base, func(k string) string { return c.env[k] })
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
