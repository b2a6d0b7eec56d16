package mailer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/airside/airside/internal/mailer"
	"github.com/airside/airside/internal/mailer/mailertest"
)

func TestFromURL(t *testing.T) {
	for _, bad := range []string{"", "http://relay", "smtp://relay", "smtp://relay?from=nobody", "smtp://relay?from=a@b\r\nBcc:x@y"} {
		if _, err := mailer.FromURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := mailer.FromURL("smtp://user:secret@relay.example:2525?from=portal@example.com"); err != nil {
		t.Error(err)
	}
}

// TestSendDeliversToTheRelay: a message reaches the relay with its headers,
// the credentials, and the body intact (a line starting with a dot too).
func TestSendDeliversToTheRelay(t *testing.T) {
	relay := mailertest.Start(t)
	m, err := mailer.FromURL("smtp://portal:s3cret@" + relay.Addr + "?from=portal@airside.example")
	if err != nil {
		t.Fatal(err)
	}
	body := "Set your password here:\nhttps://airside.example/reset/abc\n.a line with a dot"
	if err := m.Send(context.Background(), "ada@example.com", "Your password reset link", body); err != nil {
		t.Fatal(err)
	}
	msgs := relay.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages at the relay, want 1", len(msgs))
	}
	got := msgs[0]
	if got.From != "portal@airside.example" || got.To != "ada@example.com" || got.Auth != "\x00portal\x00s3cret" {
		t.Errorf("envelope %+v", got)
	}
	for _, want := range []string{"Subject: Your password reset link\r\n", "To: ada@example.com\r\n", "https://airside.example/reset/abc\r\n.a line with a dot"} {
		if !strings.Contains(got.Data, want) {
			t.Errorf("message lacks %q:\n%s", want, got.Data)
		}
	}
	if err := m.Send(context.Background(), "ada@example.com\r\nBcc: eve@example.com", "x", "y"); err == nil {
		t.Error("a recipient with a header break was sent")
	}
}
