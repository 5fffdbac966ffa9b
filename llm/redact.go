package llm

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Redacted replaces every secret the Redactor finds.
const Redacted = "[REDACTED]"

// MinSecretLen is the shortest environment value the Redactor hides. Shorter
// values ("1", "yes", "dev") occur everywhere in a debugging session —
// register values, line numbers, words — and replacing them would destroy
// the evidence while protecting nothing worth protecting.
const MinSecretLen = 4

// secretNames are the parts of an environment variable's name that mark its
// value as a secret, upper case.
var secretNames = []string{"TOKEN", "KEY", "SECRET", "PASSWORD"}

// Redactor hides secrets before anything leaves the process: by default the
// values of environment variables (from the recording's header env) whose
// NAMES contain TOKEN, KEY, SECRET or PASSWORD (case-insensitive), wherever
// those values appear in any text, plus the user's regular expressions from
// the config.
//
// A recorded value shows up in more shapes than its raw bytes, so each
// secret is also looked for C-escaped (as strace-style syscall arguments and
// gdb strings print quotes, backslashes and controls), as hex bytes (memory
// dumps: "68756e74", "0x68 0x75 0x6e 0x74"), and cut short before a "..."
// (syscall buffers and long strings are truncated for display, which would
// otherwise leak the secret's beginning).
//
// A nil *Redactor redacts nothing. A Redactor is safe for concurrent use.
type Redactor struct {
	secrets  []string         // raw and escaped forms, longest first
	hexForms []*regexp.Regexp // hex dumps of each secret
	patterns []*regexp.Regexp // the user's
}

// NewRedactor builds a redactor from an environment ("NAME=value" strings,
// as in the recording's header) and user regular expressions (Go syntax).
// An invalid pattern is an error naming it.
func NewRedactor(env []string, patterns []string) (*Redactor, error) {
	r := &Redactor{}
	seen := map[string]bool{}
	add := func(s string) {
		if len(s) >= MinSecretLen && !seen[s] {
			seen[s] = true
			r.secrets = append(r.secrets, s)
		}
	}
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !secretName(name) || len(value) < MinSecretLen {
			continue
		}
		add(value)
		add(cEscape(value))
		hexRe, err := hexPattern(value)
		if err != nil {
			return nil, fmt.Errorf("llm: redact %s: %w", name, err)
		}
		r.hexForms = append(r.hexForms, hexRe)
	}
	// Longest first, so that a secret containing another one goes whole.
	sort.SliceStable(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("llm: redact pattern %q: %w", p, err)
		}
		r.patterns = append(r.patterns, re)
	}
	return r, nil
}

// secretName says whether an environment variable's name marks a secret.
func secretName(name string) bool {
	up := strings.ToUpper(name)
	for _, s := range secretNames {
		if strings.Contains(up, s) {
			return true
		}
	}
	return false
}

// Redact replaces every secret in s with "[REDACTED]".
func (r *Redactor) Redact(s string) string {
	if r == nil || s == "" {
		return s
	}
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, Redacted)
	}
	for _, sec := range r.secrets {
		s = redactTruncated(s, sec)
	}
	for _, re := range r.hexForms {
		s = re.ReplaceAllLiteralString(s, Redacted)
	}
	for _, re := range r.patterns {
		s = re.ReplaceAllLiteralString(s, Redacted)
	}
	return s
}

// redactTruncated hides a beginning of sec that ends where the text was cut
// for display (`"...` or `...`): a write of "token=" + secret shows only the
// first 32 bytes, which may hold part of the secret.
func redactTruncated(s, sec string) string {
	for _, mark := range []string{`"...`, `...`} {
		from := 0
		for {
			i := strings.Index(s[from:], mark)
			if i < 0 {
				break
			}
			i += from
			// The longest prefix of sec that ends right before the mark.
			for k := len(sec) - 1; k >= MinSecretLen; k-- {
				if strings.HasSuffix(s[:i], sec[:k]) {
					s = s[:i-k] + Redacted + s[i:]
					i += len(Redacted) - k
					break
				}
			}
			from = i + len(mark)
		}
	}
	return s
}

// cEscape is how strace and gdb print a string's bytes between quotes.
func cEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < ' ' || c >= 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// hexPattern matches the bytes of s written in hex, contiguous or one by
// one ("0x68 0x75", "68:75", "68, 75"), in either case.
func hexPattern(s string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`(?i)(?:0x)?`)
	for i := 0; i < len(s); i++ {
		if i > 0 {
			b.WriteString(`(?:[\s,:]*(?:0x)?)?`)
		}
		b.WriteString(hex.EncodeToString([]byte{s[i]}))
	}
	return regexp.Compile(b.String())
}
