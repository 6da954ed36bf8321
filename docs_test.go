package kindex_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/internal/testsupport"
)

// docFiles are the READMEs a new user reads, relative to the repository's root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "bench/README.md", "cmd/kubectl-kquery/README.md", "crcache/README.md", "examples/README.md"}
	for _, pattern := range []string{"examples/*/README.md", "crcache/examples/*/README.md"} {
		more, err := filepath.Glob(pattern)
		require.NoError(t, err)
		files = append(files, more...)
	}
	for _, f := range files {
		_, err := os.Stat(f)
		require.NoError(t, err)
	}
	return files
}

// codeText returns the text of a Markdown file a reader would paste: the lines of its fenced
// code blocks and its inline code spans, with the lines a trailing backslash continues
// joined to them.
func codeText(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	var out []string
	inBlock := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			if n := len(out); n > 0 && strings.HasSuffix(out[n-1], "\\") {
				out[n-1] = strings.TrimSuffix(out[n-1], "\\") + " " + strings.TrimSpace(line)
				continue
			}
			out = append(out, line)
			continue
		}
		for _, span := range inlineCode.FindAllString(line, -1) {
			out = append(out, strings.Trim(span, "`"))
		}
	}
	return out
}

var inlineCode = regexp.MustCompile("`[^`]+`")

// goRun is one "go run ./PKG ARGS..." of a README, or one "kubectl kquery ARGS...", the
// plugin's command ./cmd/kubectl-kquery.
type goRun struct {
	where string // file: the command
	dir   string // the module directory the command runs in: "." or "crcache"
	pkg   string // ./PKG
	sub   string // the subcommand, for kquery's refs
	flags []string
}

// key names the program and subcommand whose flags r passes.
func (r goRun) key() string { return strings.TrimSpace(filepath.Join(r.dir, r.pkg) + " " + r.sub) }

// goRuns returns the "go run ./..." and "kubectl kquery" commands of line, with the flags
// each passes.
func goRuns(where, line string) []goRun {
	dir := "."
	if strings.Contains(line, "cd crcache &&") {
		dir = "crcache"
	}
	var runs []goRun
	for rest := line; ; {
		i, j := strings.Index(rest, "go run ./"), strings.Index(rest, "kubectl kquery ")
		switch {
		case i >= 0 && (j < 0 || i < j):
			rest = rest[i+len("go run "):]
		case j >= 0:
			rest = "./cmd/kubectl-kquery " + rest[j+len("kubectl kquery "):]
		default:
			return runs
		}
		end := strings.IndexAny(rest, "`)&|;#\"")
		if end < 0 {
			end = len(rest)
		}
		words, _ := testsupport.ShellWords(rest[:end])
		r := goRun{where: where + ": " + strings.TrimSpace(line), dir: dir, pkg: strings.TrimSuffix(words[0], "/")}
		if r.pkg == "./cmd/kubectl-kquery" && len(words) > 1 && words[1] == "refs" {
			r.sub = "refs"
		}
		for _, w := range words[1:] {
			if len(w) > 1 && w[0] == '-' && (w[1] == '-' || w[1] >= 'a' && w[1] <= 'z' || w[1] >= 'A' && w[1] <= 'Z') {
				name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
				r.flags = append(r.flags, name)
			}
		}
		runs = append(runs, r)
		rest = rest[end:]
	}
}

// Every "go run ./PKG -flag ..." and "kubectl kquery -flag ..." the READMEs show names a
// program of the repository that has each of those flags: a command pasted from a README
// does not fail on a package moved or a flag renamed.
func TestREADMEGoRunCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every program the READMEs run")
	}
	var runs []goRun
	for _, f := range docFiles(t) {
		for _, line := range codeText(t, f) {
			runs = append(runs, goRuns(f, line)...)
		}
	}
	require.NotEmpty(t, runs)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	goTool := testsupport.GoTool(t)
	bin := t.TempDir()
	help := map[string]string{}  // program and subcommand: its -h output
	built := map[string]string{} // program: its executable
	for _, r := range runs {
		if _, ok := help[r.key()]; ok {
			continue
		}
		prog := filepath.Join(r.dir, r.pkg)
		exe, ok := built[prog]
		if !ok {
			exe = filepath.Join(bin, strings.NewReplacer("/", "_", ".", "_").Replace(prog))
			build := exec.CommandContext(ctx, goTool, "build", "-o", exe, r.pkg)
			build.Dir = r.dir
			out, err := build.CombinedOutput()
			require.NoError(t, err, "%s: go build %s in %s:\n%s", r.where, r.pkg, r.dir, out)
			built[prog] = exe
		}
		// -h prints the flags (the flag package's usage, or cobra's help); its exit status
		// differs between the two and does not matter here.
		args := []string{"-h"}
		if r.sub != "" {
			args = []string{r.sub, "-h"}
		}
		out, _ := exec.CommandContext(ctx, exe, args...).CombinedOutput()
		help[r.key()] = string(out)
	}
	for _, r := range runs {
		h := help[r.key()]
		for _, f := range r.flags {
			if f == "h" || f == "help" {
				continue
			}
			defined := regexp.MustCompile(`(?m)(^|[\s,])--?` + regexp.QuoteMeta(f) + `([\s,=]|$)`)
			assert.True(t, defined.MatchString(h), "%s: %s has no flag -%s", r.where, r.key(), f)
		}
	}
}

// Every `make TARGET` the READMEs show is a target of the Makefile.
func TestREADMEMakeTargets(t *testing.T) {
	b, err := os.ReadFile("Makefile")
	require.NoError(t, err)
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`).FindAllStringSubmatch(string(b), -1) {
		targets[m[1]] = true
	}
	var mentioned []string
	makeTarget := regexp.MustCompile(`(?:^|[\s;(&])make ([a-z][a-z0-9-]*)`)
	for _, f := range docFiles(t) {
		for _, line := range codeText(t, f) {
			for _, m := range makeTarget.FindAllStringSubmatch(line, -1) {
				mentioned = append(mentioned, m[1])
				assert.True(t, targets[m[1]], "%s: make %s: no such target (%s)", f, m[1], strings.TrimSpace(line))
			}
		}
	}
	sort.Strings(mentioned)
	assert.Contains(t, mentioned, "demo")
	assert.Contains(t, mentioned, "test")
}
