package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rewind-debugger/rewind/debugger"
)

// toolWhy explains the recording's failure in one call.
const toolWhy = "why"

// WhyInput is the input of why.
type WhyInput struct {
	Links int `json:"links,omitempty" jsonschema:"the most links to follow back from the failure (default 12)"`
}

// addWhyTool registers why.
func (sv *server) addWhyTool(srv *mcp.Server) {
	addTool(srv, sv, &mcp.Tool{Name: toolWhy, Annotations: annotations("Explain the failure", false),
		Description: `Explains the recording's failure in one call: finds it (a fault, a failed assert, an abort whose message names a value, a non-zero exit after a message on stderr) and follows the bad value back through the registers and memory writes that carried it, stopping at the first suspicious write: out of bounds (the writing instruction ran past the end of another member), use after free, into a returned stack frame, or a data race (another thread holding no mutex). ` +
			`Returns failure (kind, description, place, stack), chain (newest first: kind, what, value, old, moment, function/file/line, source, instruction, note, suspicion), suspect (index of the suspicious link, -1 if none) and verdict. Each moment goes with goto; the session is left at the failure.`,
		InputSchema: inputSchema[WhyInput](func(p map[string]*jsonschema.Schema) {
			p["links"].Minimum = ptr(1.0)
			p["links"].Default = json.RawMessage(`12`)
		}),
	}, sv.why)
}

func (sv *server) why(_ context.Context, in WhyInput) (*debugger.Why, string, error) {
	w, err := sv.s.Why(in.Links)
	if err != nil {
		return nil, "", err
	}
	return w, w.Text(), nil
}
