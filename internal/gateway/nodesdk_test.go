package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/airside/airside/internal/nodetest"
)

// nodeSDKDir holds the Node SDK script and its pinned package.
const nodeSDKDir = "testdata/nodesdk"

// TestTheOpenAINodeSDKLoopsThroughTheGateway: the official OpenAI Node
// SDK's tool loop (runTools, plain and streamed) and its streaming helper
// against the reference gateway and a fake carrier that calls the tool
// until the conversation carries its result: the loop ends after one call
// with the carrier's answer, and the stream ends with usage, as they do
// against OpenAI.
func TestTheOpenAINodeSDKLoopsThroughTheGateway(t *testing.T) {
	work := nodetest.Workdir(t, nodeSDKDir, "sdk-loop.mjs", "package.json")
	h := newHarness(t, carrierSpec{slug: "a", input: "1", capabilities: []string{"tools"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, "node", "sdk-loop.mjs")
	run.Dir = work
	run.Env = append(os.Environ(), "GATEWAY_URL="+h.srv.URL, "API_KEY="+projectKey)
	run.Stderr = os.Stderr
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	type step struct {
		Step, Content, Finish   string
		Calls, Messages, Deltas int
		Chunks                  int
		Usage                   *struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	steps := map[string]step{}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		var s step
		if err := json.Unmarshal(lines.Bytes(), &s); err != nil {
			t.Fatalf("the script printed %q", lines.Text())
		}
		steps[s.Step] = s
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("the SDK script failed: %v (steps %+v)", err, steps)
	}
	loop, streamed, stream := steps["tool loop"], steps["streamed tool loop"], steps["stream"]
	// user, assistant's tool call, the tool's result, the answer.
	if loop.Calls != 1 || loop.Finish != "stop" || loop.Content == "" || loop.Messages != 4 {
		t.Errorf("the tool loop %+v: want one call, then the carrier's answer", loop)
	}
	if streamed.Calls != 2 || streamed.Finish != "stop" || streamed.Content == "" || streamed.Deltas == 0 {
		t.Errorf("the streamed tool loop %+v", streamed)
	}
	if stream.Chunks == 0 || stream.Finish != "stop" || stream.Content == "" || stream.Usage == nil || stream.Usage.CompletionTokens == 0 {
		t.Errorf("the stream %+v: want content and usage", stream)
	}
	if got := h.carriers["a"].Chats(); got != 5 {
		t.Errorf("the carrier answered %d requests, want 5 (two tool loops of two, one stream)", got)
	}
}
