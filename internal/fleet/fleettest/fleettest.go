// Package fleettest gives tests the Redis a fleet of gateways shares: the
// machine's (AIRSIDE_TEST_REDIS_URL, default redis://127.0.0.1:6379/0), and
// a key prefix of each test's own whose keys go when the test ends.
package fleettest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/airside/airside/internal/fleet"
)

// Redis is a client of the test Redis: with CI=true a missing one fails,
// else the test is skipped.
func Redis(t testing.TB) *redis.Client {
	t.Helper()
	url := os.Getenv("AIRSIDE_TEST_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	client, err := fleet.Dial(ctx, url)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis at %s is required with CI=true: %v", url, err)
		}
		t.Skipf("Redis not reachable at %s (%v); set CI=true to make this a failure", url, err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// Prefix is a key prefix of the test's own, its keys deleted when the test
// ends.
func Prefix(t testing.TB, client *redis.Client) string {
	prefix := fmt.Sprintf("airside-test:%d:", time.Now().UnixNano())
	t.Cleanup(func() {
		ctx := context.Background()
		keys := client.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for keys.Next(ctx) {
			client.Del(ctx, keys.Val())
		}
	})
	return prefix
}

// States are n replicas' shared state on one prefix of the test's own (n
// nils when shared is false: each replica keeps its own).
func States(t testing.TB, client *redis.Client, n int, shared bool) []*fleet.State {
	out := make([]*fleet.State, n)
	if !shared {
		return out
	}
	prefix := Prefix(t, client)
	for i := range out {
		out[i] = &fleet.State{Client: client, Prefix: prefix, Timeout: time.Second}
	}
	return out
}
