package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// errNoResult is returned when a child exits without writing a result line.
var errNoResult = errors.New("child wrote no result")

// childRun is the outcome of one child process.
type childRun struct {
	m            *Measurement
	notSupported bool
	err          error
}

// runChild starts exe as a child that measures req.Subject, and waits for its result.
func runChild(ctx context.Context, exe string, req childRequest) childRun {
	in, err := json.Marshal(req)
	if err != nil {
		return childRun{err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, req.Timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdin = bytes.NewReader(in)
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()

	res, parseErr := parseResult(stdout.Bytes())
	switch {
	case parseErr != nil && runErr != nil:
		return childRun{err: fmt.Errorf("child for %s: %w; stderr tail:\n%s", req.Subject, runErr, stderr)}
	case parseErr != nil:
		return childRun{err: fmt.Errorf("child for %s: %w; stderr tail:\n%s", req.Subject, parseErr, stderr)}
	case res.Error != "":
		return childRun{notSupported: res.NotSupported, err: errors.New(res.Error)}
	case runErr != nil:
		return childRun{err: fmt.Errorf("child for %s: %w after its result; stderr tail:\n%s", req.Subject, runErr, stderr)}
	}
	return childRun{m: res.Measurement}
}

func parseResult(stdout []byte) (childResult, error) {
	var res childResult
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	found := false
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), resultPrefix); ok {
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				return res, fmt.Errorf("decoding the child result: %w", err)
			}
			found = true
		}
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	if !found {
		return res, errNoResult
	}
	if res.Error == "" && res.Measurement == nil {
		return res, errNoResult
	}
	return res, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }
