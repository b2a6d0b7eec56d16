package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/airside/airside/internal/fakecarrier"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/workflow"
)

// secretBox builds the box that seals carriers' API keys from
// AIRSIDE_SECRET_KEY (and AIRSIDE_SECRET_KEY_OLD during a rotation). The
// demo, with no key set, keeps a generated one in data/secret.key.
func secretBox(demoMode bool) (*secret.Box, error) {
	var primary []byte
	var err error
	switch text := os.Getenv("AIRSIDE_SECRET_KEY"); {
	case text != "":
		if primary, err = secret.ParseKey(text); err != nil {
			return nil, fmt.Errorf("AIRSIDE_SECRET_KEY: %w", err)
		}
	case demoMode:
		if primary, err = secret.LoadOrCreate("data/secret.key"); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("AIRSIDE_SECRET_KEY is not set: it seals carriers' API keys; make one with: openssl rand -base64 32")
	}
	var older [][]byte
	for _, text := range strings.Split(os.Getenv("AIRSIDE_SECRET_KEY_OLD"), ",") {
		if strings.TrimSpace(text) == "" {
			continue
		}
		k, err := secret.ParseKey(text)
		if err != nil {
			return nil, fmt.Errorf("AIRSIDE_SECRET_KEY_OLD: %w", err)
		}
		older = append(older, k)
	}
	return secret.New(primary, older...)
}

func cmdRotateSecretKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rotate-secret-key", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := databaseFlag(fs)
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	box, err := secretBox(false)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, *dbURL, true)
	if err != nil {
		return err
	}
	defer st.Close()
	endpoints := &workflow.Endpoints{Store: st, Secrets: box}
	n, err := st.Reseal(ctx, endpoints.Reseal)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "re-sealed %d endpoint keys with key %s\n", n, box.Primary())
	return nil
}

func cmdFakeCarrier(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("fake-carrier", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9001", "listen address")
	models := fs.String("models", "kimi-k2.5,deepseek-v3.2,deepseek-v4-flash,glm-5,gpt-oss-120b", "comma-separated model names served")
	capabilities := fs.String("capabilities", "", "comma-separated flags served: tools,vision,audio_input,json_output,json_schema,reasoning,reasoning_budget,web_search")
	ttft := fs.Duration("ttft", 300*time.Millisecond, "time to first token")
	tps := fs.Float64("tokens-per-second", 80, "streaming pace")
	errorRate := fs.Float64("error-rate", 0, "share of chat requests answered 500 or 429")
	cache := fs.Bool("cache", false, "report cached tokens for a repeated long prefix")
	dialect := fs.String("dialect", "openai", "openai or deepseek")
	key := fs.String("key", "", "API key required as a bearer token (none: any)")
	breakSchema := fs.Bool("break-schema", false, "answer JSON that violates the requested schema")
	if err := fs.Parse(args); err != nil {
		return exitError(2)
	}
	if *dialect != string(fakecarrier.DialectOpenAI) && *dialect != string(fakecarrier.DialectDeepSeek) {
		return fmt.Errorf("--dialect: want openai or deepseek, not %q", *dialect)
	}
	cfg := fakecarrier.Config{Models: splitList(*models), Capabilities: splitList(*capabilities), TTFT: *ttft,
		TokensPerSecond: *tps, ErrorRate: *errorRate, Cache: *cache, Dialect: fakecarrier.Dialect(*dialect), APIKey: *key,
		BreakSchema: *breakSchema}
	srv := &http.Server{Addr: *addr, Handler: fakecarrier.New(cfg), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(stderr, "fake carrier on http://%s/v1 serving %s\n", *addr, strings.Join(cfg.Models, ", "))
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
