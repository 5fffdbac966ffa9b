package llm

import (
	"context"
	"encoding/json"
	"strings"
)

// openAI speaks the chat completions API, which OpenAI and most local
// servers (Ollama, llama.cpp's server, vLLM) implement.
type openAI struct{ api }

type openAIMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openAIRequest struct {
	Model     string          `json:"model"`
	Messages  []openAIMessage `json:"messages"`
	Stream    bool            `json:"stream"`
	MaxTokens int             `json:"max_tokens,omitempty"`
}

// openAIError is the error object of a response or of a stream chunk.
type openAIError struct {
	Message string `json:"message"`
}

type openAIResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Error *openAIError `json:"error"`
}

// Complete posts to {base}/chat/completions. The system prompt is the
// first message, as the API wants it; max_tokens is left to the server
// when the request does not set it, since local servers differ on limits.
func (p *openAI) Complete(ctx context.Context, req Request, onDelta func(string)) (string, error) {
	model, err := p.modelFor(req)
	if err != nil {
		return "", err
	}
	body := openAIRequest{Model: model, Stream: req.Stream, MaxTokens: req.MaxTokens}
	if req.System != "" {
		body.Messages = append(body.Messages, openAIMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, openAIMessage{Role: m.Role, Content: m.Content})
	}
	resp, err := p.post(ctx, p.base+"/chat/completions", body, p.header(req.Stream, "Authorization", "Bearer "+p.key))
	if err != nil {
		return "", err
	}
	if !req.Stream {
		var r openAIResponse
		if err := p.readJSON(ctx, resp, &r); err != nil {
			return "", err
		}
		if r.Error != nil {
			return "", p.errorf("%s", oneLine(r.Error.Message))
		}
		if len(r.Choices) == 0 {
			return "", p.errorf("no choices in the response")
		}
		return whole(r.Choices[0].Message.Content, onDelta), nil
	}
	return p.streamed(ctx, resp, onDelta, func(ans *answer, _, data string) (bool, error) {
		if strings.TrimSpace(data) == "[DONE]" {
			ans.complete = true
			return false, nil
		}
		var chunk openAIResponse
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return false, p.errorf("bad stream chunk: %w", err)
		}
		if chunk.Error != nil {
			return false, p.errorf("%s", oneLine(chunk.Error.Message))
		}
		if len(chunk.Choices) == 0 {
			return true, nil
		}
		ans.add(chunk.Choices[0].Delta.Content)
		// Some servers close the stream after the last choice without
		// sending [DONE]; the finish reason says the answer is whole.
		if chunk.Choices[0].FinishReason != nil {
			ans.complete = true
		}
		return true, nil
	})
}
