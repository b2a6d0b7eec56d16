// Package mailer sends the portal's few e-mails (sign-up and password reset
// links) through an SMTP relay, when one is configured. Without one the
// portal shows each link once for a person to pass on, so no e-mail server
// is ever required.
package mailer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// Mailer sends one plain-text message.
type Mailer interface {
	Send(ctx context.Context, to, subject, body string) error
}

// SMTP is a relay reached with the standard library's client: STARTTLS
// whenever the relay offers it, and PLAIN authentication (which net/smtp
// refuses to send unencrypted except to localhost).
type SMTP struct {
	addr, host, from string
	auth             smtp.Auth
	// TLS is the configuration STARTTLS uses (tests trust their own relay).
	TLS *tls.Config
}

// FromURL reads AIRSIDE_SMTP_URL: smtp://[user:password@]host[:port]?from=address
// (port 587 by default).
func FromURL(raw string) (*SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "smtp" || u.Hostname() == "" {
		return nil, errors.New("AIRSIDE_SMTP_URL must look like smtp://user:password@host:587?from=portal@example.com")
	}
	from := u.Query().Get("from")
	if !plausibleAddress(from) {
		return nil, errors.New("AIRSIDE_SMTP_URL needs ?from=an address to send from")
	}
	port := u.Port()
	if port == "" {
		port = "587"
	}
	m := &SMTP{addr: net.JoinHostPort(u.Hostname(), port), host: u.Hostname(), from: from}
	if u.User != nil {
		password, _ := u.User.Password()
		m.auth = smtp.PlainAuth("", u.User.Username(), password, u.Hostname())
	}
	return m, nil
}

// Send delivers a message, giving up when ctx ends (30 s at most).
func (m *SMTP) Send(ctx context.Context, to, subject, body string) error {
	if !plausibleAddress(to) || strings.ContainsAny(subject, "\r\n") {
		return fmt.Errorf("send mail: refused recipient %q or subject", to)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", m.addr)
	if err != nil {
		return fmt.Errorf("send mail: %w", err)
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	c, err := smtp.NewClient(conn, m.host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("send mail: %w", err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		cfg := m.TLS
		if cfg == nil {
			cfg = &tls.Config{ServerName: m.host, MinVersion: tls.VersionTLS12}
		}
		if err := c.StartTLS(cfg); err != nil {
			return fmt.Errorf("send mail: starttls: %w", err)
		}
	}
	if m.auth != nil {
		if err := c.Auth(m.auth); err != nil {
			return fmt.Errorf("send mail: auth: %w", err)
		}
	}
	if err := c.Mail(m.from); err != nil {
		return fmt.Errorf("send mail: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("send mail: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("send mail: %w", err)
	}
	// The data writer ends lines with CRLF and escapes leading dots.
	msg := "From: " + m.from + "\nTo: " + to + "\nSubject: " + subject + "\nDate: " + time.Now().UTC().Format(time.RFC1123Z) +
		"\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n" + body + "\n"
	if _, err := w.Write([]byte(msg)); err != nil {
		return fmt.Errorf("send mail: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("send mail: %w", err)
	}
	return c.Quit()
}

// plausibleAddress is an address with no header-breaking characters.
func plausibleAddress(a string) bool {
	at := strings.LastIndexByte(a, '@')
	return at > 0 && at < len(a)-1 && len(a) <= 254 && !strings.ContainsAny(a, "\r\n<>,; \t")
}
