package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requestLine is a request's log line, as the portal and the gateway write
// them.
var requestLine = regexp.MustCompile(`(?m)^(time=|\{"time")`)

// TestTheDemosConsoleStaysQuiet: `airside demo` (what `make run` starts:
// the portal, the gateway and simulated customers, each a process of the
// built binary) prints the logins, the URLs and where its logs go, and
// nothing else while customers' requests flow; the request lines land in
// the log file. Ctrl-C stops every process.
func TestTheDemosConsoleStaysQuiet(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "airside")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	work := t.TempDir()
	portal, gateway := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "demo", "--addr", portal, "--gateway-addr", gateway, "--rate", "20",
		"--database", "sqlite:data/airside.db")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "AIRSIDE_DEMO_LOG=") // the flag's default: data/demo.log
	// The console is a file the demo writes and the test reads.
	consolePath := filepath.Join(t.TempDir(), "console")
	consoleFile, err := os.Create(consolePath)
	if err != nil {
		t.Fatal(err)
	}
	defer consoleFile.Close()
	cmd.Stdout, cmd.Stderr = consoleFile, consoleFile
	console := consoleText(consolePath)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
		}
	})
	logPath := filepath.Join(work, "data", "demo.log")
	// The demo itself waits up to 5 minutes for the portal to be ready (a
	// first start seeds and migrates): the test waits as long.
	bannerBy := time.Now().Add(5 * time.Minute)
	for !strings.Contains(console.String(), "Press Ctrl-C to stop.") {
		if time.Now().After(bannerBy) {
			t.Fatalf("no banner after 5 minutes:\n%s", console.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The portal's request lines and the gateway's own in the log.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		data, _ := os.ReadFile(logPath)
		if len(requestLine.FindAll(data, -1)) >= 20 && strings.Contains(string(data), "airside gateway listening") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no request lines in data/demo.log after 5 minutes:\n%.3000s\nconsole:\n%s", data, console.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	out := console.String()
	for _, want := range []string{"admin@nebula.example", "Airside is running", "Logs (every request, the gateway, the simulated customers): data/demo.log"} {
		if !strings.Contains(out, want) {
			t.Errorf("the console lacks %q:\n%s", want, out)
		}
	}
	if n := len(requestLine.FindAllString(out, -1)); n > 0 {
		t.Errorf("the console carries %d log lines:\n%s", n, out)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the demo after Ctrl-C: %v\n%s", err, console.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the demo did not stop within a minute of Ctrl-C")
	}
}

// consoleText reads what was written to the console file so far.
type consoleText string

func (c consoleText) String() string {
	data, _ := os.ReadFile(string(c))
	return string(data)
}
