package fakemodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The Gemini API (POST /v1beta/models/MODEL:generateContent and
// :streamGenerateContent, server-sent events with alt=sse, :countTokens), as Gemini CLI calls it
// with GOOGLE_GEMINI_BASE_URL. A tool result is a "functionResponse" part.
// A request for JSON (generationConfig.responseMimeType
// "application/json": the CLI's next-speaker check and model router) is
// answered with an object that says the user speaks next.

type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			FunctionResponse *struct {
				Name     string `json:"name"`
				Response any    `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType string `json:"responseMimeType"`
	} `json:"generationConfig"`
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	method := path[strings.LastIndex(path, ":")+1:]
	if method == "countTokens" {
		s.record(Request{API: "gemini", Path: path, Reply: "count"})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"totalTokens": 10}`))
		return
	}
	if method != "generateContent" && method != "streamGenerateContent" {
		s.record(Request{API: "gemini", Path: path, Reply: "error: 404"})
		http.Error(w, "fakemodel: no Gemini method "+method+" (it serves generateContent, streamGenerateContent, countTokens)", http.StatusNotFound)
		return
	}
	var req geminiRequest
	if !s.readJSON(w, r, "gemini", &req) {
		return
	}
	rec := Request{API: "gemini", Path: path, Streamed: method == "streamGenerateContent" && r.URL.Query().Get("alt") == "sse"}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			rec.Tools = append(rec.Tools, f.Name)
		}
	}
	var part map[string]any
	if req.GenerationConfig.ResponseMimeType == "application/json" {
		rec.Reply = "json"
		s.record(rec)
		part = map[string]any{"text": `{"reasoning": "The model has answered.", "next_speaker": "user", "model_choice": "flash"}`}
	} else {
		var results []string
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if p.FunctionResponse != nil {
					results = append(results, textOf(p.FunctionResponse.Response))
				}
			}
		}
		d := s.decide(rec, results)
		switch {
		case d.call != "":
			part = map[string]any{"functionCall": map[string]any{"name": d.call, "args": s.script.Args}}
		case d.answer != "":
			part = map[string]any{"text": d.answer}
		default:
			part = map[string]any{"text": d.text}
		}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "fake-model",
	}
	if method == "generateContent" {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	if r.URL.Query().Get("alt") != "sse" {
		// Without alt=sse the stream is one JSON array of responses.
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode([]any{resp})
		return
	}
	startSSE(w).send("", resp)
}
