package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	env := []string{
		"PATH=/usr/bin:/bin",
		"DEPLOY_SECRET=hunter2-very-secret",
		"my_api_key=sk-abc123",
		"Db_Password=pa\"ss\\wd",
		"GITHUB_TOKEN=ghp",      // too short to redact
		"HOME=/home/someone",    // not a secret's name
		"KEYBOARD=us-intl-alt",  // "KEY" in the name: redacted too
		"SESSION_TOKEN=sk-abc1", // not cut to sk-abc123's prefix
		"NOEQUALS",
	}
	r, err := NewRedactor(env, []string{`postgres://[^@\s"]*@`, `(?i)bearer [a-z0-9._-]+`})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{"plain hunter2-very-secret text", "plain [REDACTED] text"},
		{`write(1, "secret=hunter2-very-secret\n", 27) = 27`, `write(1, "secret=[REDACTED]\n", 27) = 27`},
		{"key sk-abc123 and sk-abc1", "key [REDACTED] and [REDACTED]"},
		{`escaped "pa\"ss\\wd"`, `escaped "[REDACTED]"`},
		{`raw pa"ss\wd`, `raw [REDACTED]`},
		{"ghp stays, /home/someone stays", "ghp stays, /home/someone stays"},
		{"layout us-intl-alt", "layout [REDACTED]"},
		// Truncated for display: the beginning of the secret goes too.
		{`write(1, "a long prefix to pad 24:hunter2-"..., 44) = 44`, `write(1, "a long prefix to pad 24:[REDACTED]"..., 44) = 44`},
		{`name = "hunter2-very-se"...`, `name = "[REDACTED]"...`},
		{`short "hun"...`, `short "hun"...`},
		// Memory dumps.
		{"68756e746572322d766572792d736563726574", "[REDACTED]"},
		{"0x68 0x75 0x6e 0x74 0x65 0x72 0x32 0x2d 0x76 0x65 0x72 0x79 0x2d 0x73 0x65 0x63 0x72 0x65 0x74 end", "[REDACTED] end"},
		{"73:6B:2D:61:62:63:31:32:33", "[REDACTED]"},
		// The user's patterns.
		{"db=postgres://admin:pw1234@db.internal/app", "db=[REDACTED]db.internal/app"},
		{"Authorization: Bearer abc.def-123", "Authorization: [REDACTED]"},
		{"", ""},
	} {
		if got := r.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	var nilR *Redactor
	if got := nilR.Redact("hunter2-very-secret"); got != "hunter2-very-secret" {
		t.Errorf("nil redactor changed the text: %q", got)
	}
	if _, err := NewRedactor(nil, []string{"a(b"}); err == nil || !strings.Contains(err.Error(), `"a(b"`) {
		t.Errorf("bad pattern: err = %v, want one naming the pattern", err)
	}
}

// captureServer is an OpenAI-compatible server that keeps the request
// bodies it gets and answers with a fixed text.
func captureServer(t *testing.T, answer string) (*httptest.Server, *[]string) {
	t.Helper()
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": answer}}}})
	}))
	t.Cleanup(srv.Close)
	return srv, &bodies
}

// TestRedactRecording: the secrets of a recorded program's environment,
// which it also wrote, kept in memory and in registers, never reach the
// provider; neither does what the user's pattern matches.
func TestRedactRecording(t *testing.T) {
	const secret = "hunter2-very-secret"
	env := []string{"PATH=/usr/bin:/bin", "DEPLOY_SECRET=" + secret, "DATABASE_URL=postgres://admin:pw1234@db.internal/app"}
	trace := recordC(t, "testdata/secret.c", env)
	for _, c := range []struct {
		name     string
		patterns []string
		leaks    []string // what must not be sent
		default_ bool     // Build without a redactor
	}{
		{name: "environment and pattern", patterns: []string{`postgres://[^@\s"]*@`}, leaks: []string{"hunter2", "very-secret", "pw1234", "admin:", "'w'"}},
		{name: "default redactor", default_: true, leaks: []string{"hunter2", "very-secret"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openTrace(t, trace, "continue")
			opts := WindowOptions{Budget: 100000}
			if !c.default_ {
				r, err := NewRedactor(s.Header().Env, c.patterns)
				if err != nil {
					t.Fatal(err)
				}
				opts.Redact = r
			}
			w, err := Build(s, opts)
			if err != nil {
				t.Fatal(err)
			}
			// The evidence must have had the secret before redaction, or
			// the test proves nothing: the writes and the locals.
			for _, want := range []string{`write(1, "secret=[REDACTED]\n"`, `pad 24:[REDACTED]"...`, `secret = 0x`} {
				if !strings.Contains(w.Render(), want) {
					t.Errorf("window lacks %q:\n%s", want, w.Render())
				}
			}
			srv, bodies := captureServer(t, "it leaks nothing [stop]")
			p, err := New(Config{Provider: "openai", BaseURL: srv.URL, Model: "m"}, srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			answer, err := Ask(context.Background(), p, w, "Does "+secret+" leak through postgres://admin:pw1234@db?", "", nil)
			if err != nil || answer != "it leaks nothing [stop]" {
				t.Fatalf("Ask = %q, %v", answer, err)
			}
			if len(*bodies) != 1 {
				t.Fatalf("%d requests", len(*bodies))
			}
			body := (*bodies)[0]
			// The body is JSON: compare the decoded text too, where escapes
			// are gone.
			var req struct {
				Messages []struct{ Content string } `json:"messages"`
			}
			if err := json.Unmarshal([]byte(body), &req); err != nil {
				t.Fatal(err)
			}
			var decoded strings.Builder
			for _, m := range req.Messages {
				decoded.WriteString(m.Content)
			}
			for _, text := range []string{body, decoded.String()} {
				for _, leak := range c.leaks {
					if strings.Contains(text, leak) {
						i := strings.Index(text, leak)
						t.Errorf("%q sent: …%s…", leak, text[max(0, i-200):min(len(text), i+100)])
					}
				}
				if !strings.Contains(text, Redacted) {
					t.Errorf("no %s in the request", Redacted)
				}
			}
		})
	}
}
