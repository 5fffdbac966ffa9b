package llm

import (
	"context"
	"encoding/json"
	"strings"
)

// anthropicVersion is the Messages API version the requests are written
// for.
const anthropicVersion = "2023-06-01"

// anthropic speaks Anthropic's Messages API.
type anthropic struct{ api }

type anthropicRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	System    string          `json:"system,omitempty"`
	Messages  []openAIMessage `json:"messages"`
	Stream    bool            `json:"stream"`
}

type anthropicResponse struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// anthropicEvent is one streamed event; Type repeats the SSE event name.
type anthropicEvent struct {
	Type  string `json:"type"`
	Delta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
	Error *openAIError `json:"error"`
}

// Complete posts to {base}/v1/messages. The API takes the system prompt
// apart from the messages and requires max_tokens.
func (p *anthropic) Complete(ctx context.Context, req Request, onDelta func(string)) (string, error) {
	model, err := p.modelFor(req)
	if err != nil {
		return "", err
	}
	body := anthropicRequest{Model: model, MaxTokens: req.MaxTokens, System: req.System, Stream: req.Stream, Messages: []openAIMessage{}}
	if body.MaxTokens <= 0 {
		body.MaxTokens = DefaultMaxTokens
	}
	for _, m := range req.Messages {
		if m.Role == "system" {
			// Messages have no system role here: it joins the system prompt.
			body.System = strings.TrimSpace(body.System + "\n\n" + m.Content)
			continue
		}
		body.Messages = append(body.Messages, openAIMessage{Role: m.Role, Content: m.Content})
	}
	h := p.header(req.Stream, "x-api-key", p.key)
	h.Set("anthropic-version", anthropicVersion)
	// A base URL that already names the version ("…/v1") is taken as is.
	url := p.base + "/v1/messages"
	if strings.HasSuffix(p.base, "/v1") {
		url = p.base + "/messages"
	}
	resp, err := p.post(ctx, url, body, h)
	if err != nil {
		return "", err
	}
	if !req.Stream {
		var r anthropicResponse
		if err := p.readJSON(ctx, resp, &r); err != nil {
			return "", err
		}
		var out strings.Builder
		for _, c := range r.Content {
			if c.Type == "text" || c.Type == "" {
				out.WriteString(c.Text)
			}
		}
		if len(r.Content) == 0 {
			return "", p.errorf("no content in the response")
		}
		return whole(out.String(), onDelta), nil
	}
	return p.streamed(ctx, resp, onDelta, func(ans *answer, event, data string) (bool, error) {
		var ev anthropicEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return false, p.errorf("bad stream event: %w", err)
		}
		if ev.Type == "" {
			ev.Type = event
		}
		switch ev.Type {
		case "content_block_delta":
			if d := ev.Delta.Text; ev.Delta.Type == "text_delta" || (ev.Delta.Type == "" && d != "") {
				ans.add(d)
			}
		case "message_stop":
			ans.complete = true
			return false, nil
		case "error":
			msg := "stream error"
			if ev.Error != nil && ev.Error.Message != "" {
				msg = oneLine(ev.Error.Message)
			}
			return false, p.errorf("%s", msg)
		}
		return true, nil
	})
}
