package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kindex/kindex/internal/demoenv"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
)

// readmeCommand is one "$ go run ./cmd/kubectl-kquery ..." of this command's README, with
// the output printed under it.
type readmeCommand struct {
	line string   // as printed, after "$ "
	args []string // the command's arguments
	want []string // the output lines; a last line "..." means "and more"
}

// readmeCommands returns the commands of README.md's first block of "$ go run" lines.
func readmeCommands(t *testing.T) []readmeCommand {
	t.Helper()
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "\n```\n$ go run ./cmd/kubectl-kquery ")
	require.True(t, ok, "README.md has no block of commands")
	block, _, ok := strings.Cut("$ go run ./cmd/kubectl-kquery "+after, "\n```")
	require.True(t, ok, "unterminated block")
	var cmds []readmeCommand
	for _, para := range strings.Split(block, "\n\n") {
		lines := strings.Split(strings.TrimSpace(para), "\n")
		line, ok := strings.CutPrefix(lines[0], "$ ")
		require.True(t, ok, "a paragraph that is not a command: %q", para)
		words, ok := testsupport.ShellWords(line)
		require.True(t, ok, "unterminated quote in %q", line)
		require.Equal(t, []string{"go", "run", "./cmd/kubectl-kquery"}, words[:3], line)
		cmds = append(cmds, readmeCommand{line: line, args: words[3:], want: lines[1:]})
	}
	return cmds
}

var ageValue = regexp.MustCompile(`^[0-9]+[smhd]$`)

// normalized makes a line comparable across runs: blanks collapsed (columns are aligned to
// their widest value), ages (97s) replaced by "<age>" and a continue token, which differs
// from one informer to the next, by "<token>".
func normalized(line string) string {
	fields := strings.Fields(line)
	for i, f := range fields {
		switch {
		case ageValue.MatchString(f):
			fields[i] = "<age>"
		case i > 0 && fields[i-1] == "--continue":
			fields[i] = "<token>"
		}
	}
	return strings.Join(fields, " ")
}

// continueToken returns the token of a "next page: --continue TOKEN" line, or "".
func continueToken(out string) string {
	_, after, ok := strings.Cut(out, "next page: --continue ")
	if !ok {
		return ""
	}
	return strings.Fields(after)[0]
}

// The commands the README shows, run against a fresh control plane seeded as `make demo`
// seeds it, print what the README says they print (ages aside): the README cannot drift
// from the command.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A control plane of its own: the README's counts are those of a fresh one.
	local, err := demoenv.StartLocal(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(local.Stop)
	_, err = demoenv.Apply(ctx, local.Config, demoenv.Options{})
	require.NoError(t, err)
	// The README's ConfigMap count includes the one kube-apiserver writes at start
	// (kube-system/kube-apiserver-legacy-service-account-token-tracking); wait for it.
	cs, err := kubernetes.NewForConfig(local.Config)
	require.NoError(t, err)
	testenv.Eventually(t, time.Minute, func() bool {
		_, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "kube-apiserver-legacy-service-account-token-tracking", metav1.GetOptions{})
		return err == nil
	}, "the apiserver's own ConfigMap")
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, demoenv.WriteKubeconfig(kubeconfig, local.Config, "default"))

	cmds := readmeCommands(t)
	require.GreaterOrEqual(t, len(cmds), 7, "the README's commands")
	for _, c := range cmds {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := kquery(t, kubeconfig, c.args...)
			got := strings.Split(strings.TrimRight(r.stdout+r.stderr, "\n"), "\n")
			want := c.want
			if n := len(want); n > 0 && want[n-1] == "..." {
				want = want[:n-1]
				require.GreaterOrEqual(t, len(got), len(want), "$ %s\n%s", c.line, r.stdout+r.stderr)
				got = got[:len(want)]
			}
			for i := range got {
				got[i] = normalized(got[i])
			}
			norm := make([]string, len(want))
			for i := range want {
				norm[i] = normalized(want[i])
			}
			assert.Equal(t, norm, got, "$ %s (exit status %d)", c.line, r.code)
			wantErr := len(want) > 0 && strings.HasPrefix(want[0], "error:")
			assert.Equal(t, wantErr, r.code != 0, "exit status %d", r.code)
			// The token printed is the next page's.
			if token := continueToken(r.stderr); token != "" {
				next := kquery(t, kubeconfig, append(c.args, "--continue", token)...)
				require.Zero(t, next.code, "%s", next.stderr)
				rows := strings.Split(strings.TrimSpace(next.stdout), "\n")
				require.Greater(t, len(rows), 1, "a next page")
				for _, row := range rows[1:] {
					assert.NotContains(t, r.stdout, strings.Fields(row)[0]+" ", "the next page repeats a row")
				}
			}
		})
	}
}
