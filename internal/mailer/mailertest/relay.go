// Package mailertest is an SMTP relay for tests: it speaks just enough SMTP
// (EHLO, AUTH PLAIN, MAIL, RCPT, DATA, QUIT) on loopback and keeps what it
// was sent.
package mailertest

import (
	"bufio"
	"encoding/base64"
	"net"
	"strings"
	"sync"
	"testing"
)

// Message is one message the relay took.
type Message struct {
	From, To string
	// Auth is the decoded AUTH PLAIN response ("\x00user\x00password").
	Auth string
	Data string
}

// Relay is a running test relay.
type Relay struct {
	Addr string
	mu   sync.Mutex
	msgs []Message
	wake chan struct{}
}

// Start runs a relay until the test ends.
func Start(t *testing.T) *Relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Relay{Addr: ln.Addr().String(), wake: make(chan struct{}, 100)}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go r.serve(conn)
		}
	}()
	return r
}

// Messages are the messages taken so far.
func (r *Relay) Messages() []Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Message(nil), r.msgs...)
}

func (r *Relay) serve(conn net.Conn) {
	defer conn.Close()
	in := bufio.NewReader(conn)
	say := func(line string) { conn.Write([]byte(line + "\r\n")) }
	say("220 relay ready")
	var m Message
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0])
		switch verb {
		case "EHLO", "HELO":
			say("250-relay")
			say("250 AUTH PLAIN")
		case "AUTH":
			parts := strings.Fields(line)
			if len(parts) == 3 {
				b, _ := base64.StdEncoding.DecodeString(parts[2])
				m.Auth = string(b)
			}
			say("235 ok")
		case "MAIL":
			m.From = strings.Trim(strings.TrimPrefix(line[5:], "FROM:"), "<> ")
			say("250 ok")
		case "RCPT":
			m.To = strings.Trim(strings.TrimPrefix(line[5:], "TO:"), "<> ")
			say("250 ok")
		case "DATA":
			say("354 go on")
			var data strings.Builder
			for {
				l, err := in.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(strings.TrimPrefix(l, "."))
			}
			m.Data = data.String()
			r.mu.Lock()
			r.msgs = append(r.msgs, m)
			r.mu.Unlock()
			m = Message{}
			say("250 taken")
		case "QUIT":
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}
