// Package trafficdriver is the demo's customers: simulated users of a
// gateway sending real requests through it with the official OpenAI Go
// client. Coding agents (a coding client's User-Agent, sessions of many
// turns over a long repeated prefix, tool calls), large one-shot prompts,
// small chats, JSON and image requests, arriving on a daily cycle. Every
// choice comes from one seeded source, so a seed gives the same stream of
// requests; the rate and the run are bounded.
package trafficdriver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/airside/airside/internal/carrierclient"
)

// Config is a driver run.
type Config struct {
	// GatewayURL is the gateway's base (its /v1 is appended).
	GatewayURL string
	// APIKeys are the projects' keys; each customer belongs to one.
	APIKeys []string
	// Models to ask for; empty asks the gateway's /v1/models.
	Models []string
	// Rate is the arrivals per second at the day's peak (at most 50).
	Rate float64
	// Duration bounds the run; 0 runs until ctx ends.
	Duration time.Duration
	// MaxInFlight bounds the requests under way (default 16); arrivals
	// past it are skipped and counted.
	MaxInFlight int
	// MaxArrivals ends the run after this many arrivals (0: no bound).
	MaxArrivals int
	// TurnPause is the longest pause between a coding session's turns (a
	// person reading; default 3 s).
	TurnPause time.Duration
	// Kinds, when set, are the kinds of customer that arrive (of coding,
	// large, chat, json, image, and fresh: moreKinds), in their usual proportions among
	// themselves: a test that needs no capability a market lacks leaves
	// the rest out.
	Kinds []string
	Seed  uint64
	Now   func() time.Time
	Log   *slog.Logger
}

// Stats count what the driver sent and got back.
type Stats struct {
	Sent, OK, Failed, Skipped atomic.Int64
	// ByKind counts requests sent per kind of customer.
	mu     sync.Mutex
	ByKind map[string]int64
}

func (s *Stats) sent(kind string) {
	s.Sent.Add(1)
	s.mu.Lock()
	if s.ByKind == nil {
		s.ByKind = map[string]int64{}
	}
	s.ByKind[kind]++
	s.mu.Unlock()
}

// MaxRate bounds Config.Rate.
const MaxRate = 50

// Kinds of customer, with their share of arrivals.
var kinds = []kind{
	{"coding", 0.30}, {"large", 0.15}, {"chat", 0.37}, {"json", 0.12}, {"image", 0.06},
}

// moreKinds are kinds of customer that arrive only when named (Config.
// Kinds): "fresh" sends a large prompt no one sent before (a document of
// its own, which no carrier's prompt cache holds, where "large" draws one
// of a thousand).
var moreKinds = []kind{{"fresh", 0.15}}

// CodingUserAgent is what the simulated coding agents send (a coding client
// the gateway recognises).
const CodingUserAgent = "claude-cli/1.0.83 (external, cli)"

// Daily is the arrival rate's share of its peak at t: quiet at night UTC,
// busiest mid-afternoon.
func Daily(t time.Time) float64 {
	hour := float64(t.UTC().Hour()) + float64(t.UTC().Minute())/60
	return 0.55 + 0.45*math.Sin((hour-9)/24*2*math.Pi)
}

// Run drives traffic until the duration or ctx ends, counting into stats as
// it goes, and waits for the requests under way.
func Run(ctx context.Context, cfg Config, stats *Stats) error {
	if cfg.Rate <= 0 || cfg.Rate > MaxRate {
		return fmt.Errorf("traffic driver: rate %g: want more than 0 and at most %d a second", cfg.Rate, MaxRate)
	}
	if len(cfg.APIKeys) == 0 {
		return errors.New("traffic driver: no project API keys")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 16
	}
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	clients := make([]openai.Client, len(cfg.APIKeys))
	for i, k := range cfg.APIKeys {
		clients[i] = carrierclient.New(strings.TrimSuffix(cfg.GatewayURL, "/")+"/v1", k, nil, option.WithRequestTimeout(2*time.Minute))
	}
	models := cfg.Models
	if len(models) == 0 {
		page, err := clients[0].Models.List(ctx)
		if err != nil {
			return fmt.Errorf("traffic driver: list the gateway's models: %w", err)
		}
		for _, m := range page.Data {
			models = append(models, m.ID)
		}
		if len(models) == 0 {
			return errors.New("traffic driver: the gateway serves no model yet")
		}
	}
	mix, err := kindsOf(cfg.Kinds)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	slots := make(chan struct{}, cfg.MaxInFlight)
	var wg sync.WaitGroup
	if cfg.TurnPause <= 0 {
		cfg.TurnPause = 3 * time.Second
	}
	for n := 0; ; n++ {
		if cfg.MaxArrivals > 0 && n >= cfg.MaxArrivals {
			wg.Wait()
			return nil
		}
		// Poisson arrivals at the day's rate.
		rate := cfg.Rate * Daily(cfg.Now())
		gap := time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-time.After(gap):
		}
		c := customer{kind: pick(rng, mix), model: models[rng.IntN(len(models))], client: clients[rng.IntN(len(clients))],
			seed: rng.Uint64(), id: n, pause: cfg.TurnPause}
		select {
		case slots <- struct{}{}:
		default:
			stats.Skipped.Add(1)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			c.run(ctx, stats, cfg.Log)
		}()
	}
}

// kind is one kind of customer and its share of arrivals.
type kind struct {
	name  string
	share float64
}

// kindsOf is the arrival mix of the kinds named (all without names), their
// shares scaled to add up to one.
func kindsOf(names []string) ([]kind, error) {
	if len(names) == 0 {
		return kinds, nil
	}
	var out []kind
	total := 0.0
	for _, name := range names {
		all := append(slices.Clip(kinds), moreKinds...)
		i := slices.IndexFunc(all, func(k kind) bool { return k.name == name })
		if i < 0 {
			return nil, fmt.Errorf("traffic driver: no kind of customer %q", name)
		}
		out = append(out, all[i])
		total += all[i].share
	}
	for i := range out {
		out[i].share /= total
	}
	return out, nil
}

func pick(rng *rand.Rand, mix []kind) string {
	x := rng.Float64()
	for _, k := range mix {
		if x < k.share {
			return k.name
		}
		x -= k.share
	}
	return mix[len(mix)-1].name
}

// customer is one arrival: a single request, or a coding session's turns.
type customer struct {
	kind   string
	model  string
	client openai.Client
	seed   uint64
	id     int
	pause  time.Duration
}

// codingPrefix is the coding agent's long repeated prefix: its system
// prompt and the repository it works on (about 6,000 tokens), the same for
// every turn, which is what carriers' prompt caches serve.
var codingPrefix = "You are a careful coding agent working in a Go repository. " +
	strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { /* repository context */ }\n", 300)

// onePixel is a 1x1 PNG, an image part's smallest honest payload.
const onePixel = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

var editTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name: "edit_file", Description: openai.String("Replace text in a file"),
	Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{
		"path": map[string]any{"type": "string"}, "old": map[string]any{"type": "string"}, "new": map[string]any{"type": "string"}},
		"required": []string{"path", "old", "new"}},
})

func (c *customer) run(ctx context.Context, stats *Stats, log *slog.Logger) {
	rng := rand.New(rand.NewPCG(c.seed, 1))
	params := openai.ChatCompletionNewParams{Model: c.model, MaxCompletionTokens: openai.Int(256)}
	var opts []option.RequestOption
	stream := rng.IntN(2) == 0
	switch c.kind {
	case "coding":
		session := fmt.Sprintf("session-%d-%x", c.id, c.seed&0xffff)
		opts = append(opts, option.WithHeader("User-Agent", CodingUserAgent), option.WithHeader("X-Session-Id", session))
		params.Tools = []openai.ChatCompletionToolUnionParam{editTool}
		params.Messages = []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(codingPrefix)}
		turns := 4 + rng.IntN(9)
		for turn := range turns {
			params.Messages = append(params.Messages, openai.UserMessage(fmt.Sprintf("Step %d: fix the failing test in handler_%d.go.", turn, rng.IntN(50))))
			if !c.send(ctx, stats, log, params, true, opts) {
				return
			}
			params.Messages = append(params.Messages, openai.AssistantMessage(fmt.Sprintf("Edited handler_%d.go.", turn)))
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(float64(c.pause) * (0.15 + 0.85*rng.Float64()))):
			}
		}
		return
	case "large":
		params.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage(
			"Summarise this document:\n" + strings.Repeat(fmt.Sprintf("Paragraph %d of a long report on carrier routing. ", rng.IntN(1000)), 1600))}
		stream = false
	case "fresh":
		params.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage(
			"Summarise this document:\n" + strings.Repeat(fmt.Sprintf("Paragraph %s-%d-%x of a long report on carrier routing. ", c.model, c.id, rng.Uint64()), 1600))}
		stream = false
	case "json":
		params.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Give the answer as a JSON object with a key answer.")}
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	case "image":
		params.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("What colour is this pixel?"),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: onePixel})})}
	default:
		params.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage(fmt.Sprintf("What is %d plus %d?", rng.IntN(100), rng.IntN(100)))}
	}
	c.send(ctx, stats, log, params, stream, opts)
}

// send makes one request and counts it; false once ctx has ended.
func (c *customer) send(ctx context.Context, stats *Stats, log *slog.Logger, params openai.ChatCompletionNewParams, stream bool, opts []option.RequestOption) bool {
	if ctx.Err() != nil {
		return false
	}
	stats.sent(c.kind)
	var err error
	if stream {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		s := c.client.Chat.Completions.NewStreaming(ctx, params, opts...)
		for s.Next() {
		}
		err = s.Err()
		s.Close()
	} else {
		_, err = c.client.Chat.Completions.New(ctx, params, opts...)
	}
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		stats.Failed.Add(1)
		log.Debug("traffic driver: request failed", "kind", c.kind, "model", c.model, "err", err)
		return true
	}
	stats.OK.Add(1)
	return true
}
