package main

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airside/airside/internal/secret"
)

// dockerfile is what TestDockerfileBuildAndEntrypoint reads of the image
// recipe: the build stage's go build command, and the final stage's ENV,
// ENTRYPOINT, CMD and HEALTHCHECK.
type dockerfile struct {
	build       string
	env         map[string]string
	entrypoint  []string
	cmd         []string
	healthcheck []string
	volume      string
	user        string
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	f, err := os.Open("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := dockerfile{env: map[string]string{}}
	exec := func(rest string) []string { // the exec form, a JSON array
		var out []string
		if err := json.Unmarshal([]byte(rest), &out); err != nil {
			t.Fatalf("not the exec form: %s", rest)
		}
		return out
	}
	scan := bufio.NewScanner(f)
	for scan.Scan() {
		line := strings.TrimSpace(scan.Text())
		word, rest, _ := strings.Cut(line, " ")
		switch word {
		case "RUN":
			if strings.Contains(rest, "go build") {
				d.build = rest
			}
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				k, v, _ := strings.Cut(kv, "=")
				d.env[k] = v
			}
		case "ENTRYPOINT":
			d.entrypoint = exec(rest)
		case "CMD":
			d.cmd = exec(rest)
		case "VOLUME":
			d.volume = rest
		case "USER":
			d.user = rest
		case "HEALTHCHECK":
			_, after, ok := strings.Cut(rest, "CMD ")
			if !ok {
				t.Fatalf("HEALTHCHECK without CMD: %s", rest)
			}
			d.healthcheck = exec(after)
		}
	}
	if d.build == "" || len(d.entrypoint) != 1 || len(d.cmd) == 0 || len(d.healthcheck) == 0 || d.volume == "" {
		t.Fatalf("the Dockerfile lacks a go build, ENTRYPOINT, CMD, HEALTHCHECK or VOLUME: %+v", d)
	}
	return d
}

// TestDockerfileBuildAndEntrypoint runs the image's recipe without Docker:
// the build stage's exact go build command (a static binary: no ELF
// interpreter), then the binary as the image starts it (ENTRYPOINT and
// CMD, with the image's ENV pointed at a temporary volume), until the
// image's HEALTHCHECK passes; SIGTERM then ends it cleanly. The database
// is written on the volume, the only place the image lets it write.
func TestDockerfileBuildAndEntrypoint(t *testing.T) {
	d := readDockerfile(t)
	// Kubernetes' runAsNonRoot refuses a USER it cannot see is not root: a
	// name is not enough, the uid (and gid) must be numbers, and not 0.
	if !regexp.MustCompile(`^[1-9][0-9]*(:[1-9][0-9]*)?$`).MatchString(d.user) {
		t.Errorf("USER %q: want a numeric, non-root uid[:gid]", d.user)
	}
	out := filepath.Join(t.TempDir(), "airside")
	// The command as the image's shell runs it, writing to a temporary
	// file instead of the build stage's /out.
	command := regexp.MustCompile(`-o \S+`).ReplaceAllString(d.build, "-o "+out)
	if !strings.Contains(command, "go build") || !strings.Contains(command, "CGO_ENABLED=0") {
		t.Fatalf("the build command is not a static go build: %s", d.build)
	}
	build := exec.Command("sh", "-c", command)
	build.Dir = "../.."
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", command, err, msg)
	}
	bin, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range bin.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary needs a dynamic loader: the slim image would not run it")
		}
	}
	bin.Close()

	volume := t.TempDir()
	addr := freeAddr(t)
	runEnv := []string{"HOME=" + volume, "PATH=" + os.Getenv("PATH"), "AIRSIDE_SECRET_KEY=" + secret.NewKey(),
		"AIRSIDE_BASE_URL=http://" + addr, "AIRSIDE_LOG_LEVEL=warn"}
	for k, v := range d.env {
		v = strings.ReplaceAll(v, d.volume, volume)
		if k == "AIRSIDE_ADDR" {
			v = addr
		}
		runEnv = append(runEnv, k+"="+v)
	}
	if !strings.Contains(strings.Join(runEnv, " "), "sqlite:"+volume) {
		t.Fatalf("the image's database is not on its volume: %v", d.env)
	}
	serve := exec.Command(out, d.cmd...) // ENTRYPOINT is the binary itself
	serve.Dir, serve.Env = volume, runEnv
	serve.Stdout, serve.Stderr = os.Stderr, os.Stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	defer func() {
		if serve.ProcessState == nil {
			serve.Process.Kill()
		}
	}()
	healthy := func() bool {
		check := exec.Command(out, d.healthcheck[1:]...)
		check.Env = runEnv
		return check.Run() == nil
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !healthy() {
		select {
		case err := <-exited:
			t.Fatalf("the entrypoint exited before it was healthy: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the image's HEALTHCHECK never passed")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(volume, "airside.db")); err != nil {
		t.Errorf("no database on the volume: %v", err)
	}
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("SIGTERM: the process ended with %v, want a clean exit", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("SIGTERM did not end the process within a minute")
	}
	if healthy() {
		t.Error("the HEALTHCHECK passes with the process gone")
	}
}

func TestHealthzURL(t *testing.T) {
	for addr, want := range map[string]string{
		":8080":            "http://127.0.0.1:8080/healthz",
		"0.0.0.0:9000":     "http://127.0.0.1:9000/healthz",
		"[::]:8080":        "http://127.0.0.1:8080/healthz",
		"10.0.0.5:8080":    "http://10.0.0.5:8080/healthz",
		"portal.lan:8080":  "http://portal.lan:8080/healthz",
		"[2001:db8::1]:80": "http://[2001:db8::1]:80/healthz",
	} {
		if got := healthzURL(addr); got != want {
			t.Errorf("healthzURL(%q) = %q, want %q", addr, got, want)
		}
	}
}
