package alerting

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airside/airside/internal/netguard"
)

// TestDeliveryProblemsInPlainWords: a failed delivery is explained by its
// step, naming the receiver's host at most: never the resolver's address or
// a Go type.
func TestDeliveryProblemsInPlainWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"unknown name", &net.DNSError{Err: "no such host", Name: "hooks.nebula.example", Server: "10.96.0.10:53", IsNotFound: true}, "hooks.nebula.example) does not resolve"},
		{"resolver down", &net.DNSError{Err: "i/o timeout", Name: "hooks.nebula.example", Server: "10.96.0.10:53", IsTimeout: true}, "could not be looked up"},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, "refused the connection"},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "connection to the receiver failed (read)"},
		{"timeout", fmt.Errorf("Post %q: %w", "https://hooks.example", context.DeadlineExceeded), "did not answer in time"},
		{"certificate", x509.HostnameError{Host: "hooks.example", Certificate: &x509.Certificate{}}, "TLS certificate"},
		{"private address", fmt.Errorf("dial: %w", netguard.ErrRefused), "private or reserved"},
		{"no webhook", errNoWebhook, "No webhook is configured"},
		{"anything else", fmt.Errorf("http: something *url.Error-ish"), "failed before the receiver answered"},
	} {
		got := deliveryProblem(tc.err)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want it to say %q", tc.name, got, tc.want)
		}
		for _, leak := range []string{"10.96.0.10", "*net.", "syscall", "url.Error"} {
			if strings.Contains(got, leak) {
				t.Errorf("%s: %q shows %q", tc.name, got, leak)
			}
		}
	}
}

// TestStandardWebhooksSignature: the signature of the Standard Webhooks
// specification's own example, and a delivery's headers verify as its
// reference verifiers do.
func TestStandardWebhooksSignature(t *testing.T) {
	at := time.Unix(1614265330, 0)
	got, err := StandardSignature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", at, []byte(`{"test": 2432232314}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("signature %s, want the spec's %s", got, want)
	}
	if _, err := StandardSignature("whsec_!!!", "msg_1", at, nil); err == nil {
		t.Error("a secret that is not base64 signed")
	}
}

func TestMailRetryWait(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Minute, 2: 2 * time.Minute, 3: 4 * time.Minute, 7: time.Hour, 30: time.Hour} {
		if got := MailRetryWait(n); got != want {
			t.Errorf("MailRetryWait(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestWebhookIDsTellNothingOfTheVolume: a delivery's webhook-id is stable
// for one key (retries, and every portal process, name it alike) but is not
// its row number, and ids of consecutive deliveries share no order (they
// were msg_1, msg_2, ...: a carrier could read the portal's volume).
func TestWebhookIDsTellNothingOfTheVolume(t *testing.T) {
	key, other := []byte("0123456789abcdef0123456789abcdef"), []byte("fedcba9876543210fedcba9876543210")
	seen := map[string]bool{}
	ascending := 0
	prev := ""
	for id := int64(1); id <= 200; id++ {
		got := StandardMessageID(key, id)
		if got != StandardMessageID(key, id) {
			t.Fatalf("delivery %d: two ids under one key", id)
		}
		if got == StandardMessageID(other, id) {
			t.Errorf("delivery %d: the same id under another key", id)
		}
		if strings.Contains(got, strconv.FormatInt(id, 10)) && len(got) < 10 || seen[got] {
			t.Errorf("delivery %d: id %q names its row or repeats", id, got)
		}
		if !strings.HasPrefix(got, "msg_") || len(got) != len("msg_")+32 {
			t.Errorf("delivery %d: id %q is not msg_ and 32 characters", id, got)
		}
		seen[got] = true
		if got > prev {
			ascending++
		}
		prev = got
	}
	// Random order rises about half the time; row numbers always.
	if ascending > 150 {
		t.Errorf("%d of 200 consecutive ids rose: they follow the row numbers", ascending)
	}
}
