package a2a

import (
	"testing"
	"time"
)

// sendMessageBody is a typical SendMessage params object as a v1.0 client
// sends it.
var sendMessageBody = []byte(`{"message":{"messageId":"9f5a2c1e-8b7d-4c3a-9e1f-2a3b4c5d6e7f","role":"ROLE_USER","parts":[{"text":"Summarise the attached report and list the three main risks, in order of severity."},{"url":"https://files.example.com/reports/q3.pdf","mediaType":"application/pdf","filename":"q3.pdf"}],"contextId":"0b6c1a2d-3e4f-5a6b-7c8d-9e0f1a2b3c4d","metadata":{"traceId":"abc123"}},"configuration":{"acceptedOutputModes":["text/plain","application/json"],"historyLength":10,"returnImmediately":false}}`)

// sendMessageBodySnake is the same request with the snake_case keys the
// conformance kit sends.
var sendMessageBodySnake = []byte(`{"message":{"message_id":"9f5a2c1e-8b7d-4c3a-9e1f-2a3b4c5d6e7f","role":"ROLE_USER","parts":[{"text":"Summarise the attached report and list the three main risks, in order of severity."},{"url":"https://files.example.com/reports/q3.pdf","media_type":"application/pdf","filename":"q3.pdf"}],"context_id":"0b6c1a2d-3e4f-5a6b-7c8d-9e0f1a2b3c4d","metadata":{"trace_id":"abc123"}},"configuration":{"accepted_output_modes":["text/plain","application/json"],"history_length":10,"return_immediately":false}}`)

func BenchmarkDecodeSendMessage(b *testing.B) {
	for _, c := range []struct {
		name string
		body []byte
	}{{"camelCase", sendMessageBody}, {"snake_case", sendMessageBodySnake}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				var r SendMessageRequest
				if err := Unmarshal(c.body, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchTask is a completed task with a short history and one artifact.
func benchTask() *Task {
	ts := &Timestamp{Time: time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)}
	user := Message{MessageID: "m1", ContextID: "c1", TaskID: "t1", Role: RoleUser, Parts: []Part{TextPart("Summarise the attached report and list the three main risks.")}}
	agent := Message{MessageID: "m2", ContextID: "c1", TaskID: "t1", Role: RoleAgent, Parts: []Part{TextPart("Working on it.")}}
	return &Task{
		ID: "t1", ContextID: "c1",
		Status:    TaskStatus{State: TaskStateCompleted, Timestamp: ts},
		History:   []Message{user, agent},
		Artifacts: []Artifact{{ArtifactID: "a1", Name: "summary", Parts: []Part{TextPart("1. Liquidity. 2. Supplier concentration. 3. Regulatory change."), DataPart(map[string]any{"risks": 3})}}},
		Metadata:  map[string]any{"source": "bench"},
	}
}

func BenchmarkEncodeTask(b *testing.B) {
	t := benchTask()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(t); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeStreamResponse(b *testing.B) {
	ev := &StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{
		TaskID: "t1", ContextID: "c1",
		Status: TaskStatus{State: TaskStateWorking, Timestamp: &Timestamp{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
			Message: &Message{MessageID: "m3", Role: RoleAgent, Parts: []Part{TextPart("Reading page 4 of 12")}}},
	}}
	id := []byte(`"req-1"`)
	b.Run("envelope", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := EncodeResult(id, ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Marshal(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
}
