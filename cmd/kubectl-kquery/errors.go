package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kindex/kindex/discovery"
)

// report prints err as kubectl words its errors: "error: ..." for the command line and the
// client, "Error from server (Reason): ..." for what the apiserver answered; and, where it
// helps, the argument with a caret under the problem, names to try, candidates.
// reportAllButLast reports every error of errs but the last on w and returns the last (nil
// if there is none), for run to report with exit status 1, as kubectl ends on its last.
func reportAllButLast(w io.Writer, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	if len(errs) > 1 { // kubectl lists its client's errors among others without "error: "
		for _, err := range errs {
			var ine *invalidNameError
			if errors.As(err, &ine) {
				ine.among = true
			}
		}
	}
	for _, err := range errs[:len(errs)-1] {
		report(w, err)
	}
	return errs[len(errs)-1]
}

func report(w io.Writer, err error) {
	var (
		ae  *argError
		ue  *usageError
		ure *unknownResourceError
		amb *ambiguousError
		kce *kubeconfigError
		ine *invalidNameError
	)
	switch {
	case errors.As(err, &ine) && ine.among:
		fmt.Fprintln(w, ine.Error())
	case errors.As(err, &ae):
		fmt.Fprint(w, formatArgError(ae))
	case errors.As(err, &ue):
		fmt.Fprintf(w, "error: %s\nSee 'kubectl kquery --help' for usage.\n", boundLines(ue.msg))
	case errors.As(err, &ure):
		fmt.Fprintf(w, "error: %s\n", ure.Error())
		if len(ure.Suggest) > 0 {
			fmt.Fprintln(w, "Did you mean:")
			writeResources(w, ure.Suggest)
		}
	case errors.As(err, &amb):
		fmt.Fprintf(w, "error: %s:\n", amb.Error())
		writeResources(w, amb.Candidates)
	case errors.As(err, &kce):
		fmt.Fprintf(w, "error: %s\n", kce.Error())
	default:
		fmt.Fprintln(w, boundLines(standardMessage(err)))
	}
}

// writeResources lists resources in aligned columns: the name to type, the kind and
// version, the short names.
func writeResources(w io.Writer, rs []discovery.Resource) {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	for _, r := range rs {
		short := ""
		if len(r.ShortNames) > 0 {
			short = "short: " + strings.Join(r.ShortNames, ",")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", qualified(r), r.GVK.Kind, r.GVR.GroupVersion(), short)
	}
	_ = tw.Flush()
}

// standardMessage is kubectl's wording: the server's status with its reason, a connection
// failure, or the error as it is.
func standardMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		msg := s.Message
		if msg == "" {
			msg = err.Error()
		}
		switch {
		case s.Reason == metav1.StatusReasonUnauthorized:
			return fmt.Sprintf("error: You must be logged in to the server (%s)", msg)
		case s.Reason != "":
			return fmt.Sprintf("Error from server (%s): %s", s.Reason, msg)
		default:
			return fmt.Sprintf("Error from server: %s", msg)
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return fmt.Sprintf("Unable to connect to the server: %v", ue.Err)
	}
	return "error: " + err.Error()
}

// formatArgError shows the argument with a caret under the byte where it went wrong:
//
//	error: --where: =~ (regular expression match) is not supported; use ...
//	  --where size=~big
//	               ^
//
// An argument longer than maxEcho bytes is shown as the maxEcho bytes around that byte, with
// "..." where it was cut, and the message says where in the whole argument the byte is.
func formatArgError(e *argError) string {
	off := min(max(e.Offset, 0), len(e.Arg))
	shown, col := window(e.Arg, off)
	line := e.Flag + " " + shown
	if strings.HasSuffix(e.Flag, "=") {
		line = e.Flag + shown
	}
	col += len(line) - len(shown)
	clean := strings.Map(func(r rune) rune { // control characters would move the caret
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, line)
	caret := strings.Repeat(" ", utf8.RuneCountInString(line[:col])) + "^"
	msg := e.Msg
	if len(shown) < len(e.Arg) {
		msg += fmt.Sprintf(" (at byte %d of %d)", off, len(e.Arg))
	}
	s := fmt.Sprintf("error: %s: %s\n  %s\n  %s\n", strings.TrimSuffix(e.Flag, "="), msg, clean, caret)
	if e.Hint != "" {
		s += e.Hint + "\n"
	}
	return s
}

// maxEcho is how many bytes of an argument a message quotes: a message about an argument of
// a megabyte is a few lines long all the same.
const maxEcho = 200

// clip returns s, or, when s is longer than maxEcho bytes, its start and its end with the
// number of bytes left out between them.
func clip(s string) string { return elide(s, maxEcho) }

// elide returns s, or, when s is longer than n bytes, its first 3n/4 and last n/4 bytes
// (whole characters) with the number of bytes left out between them.
func elide(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := runeStart(s, n*3/4)
	tail := runeStart(s, len(s)-n/4)
	return fmt.Sprintf("%s...(%d bytes)...%s", s[:head], tail-head, s[tail:])
}

// window returns the part of arg a message shows around the byte off, with "..." where it
// was cut, and where off is in it.
func window(arg string, off int) (shown string, col int) {
	if len(arg) <= maxEcho {
		return arg, off
	}
	start := max(off-maxEcho/2, 0)
	end := min(start+maxEcho, len(arg))
	start = runeStart(arg, max(end-maxEcho, 0))
	end = runeStart(arg, end)
	shown, col = arg[start:end], off-start
	if start > 0 {
		shown, col = "..."+shown, col+3
	}
	if end < len(arg) {
		shown += "..."
	}
	return shown, col
}

// runeStart moves i back to the start of the UTF-8 sequence it is in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// maxLine is the longest line report prints of a message kquery did not word itself (the
// server's, a library's), which may quote a whole argument.
const maxLine = 1024

// boundLines shortens each line of s longer than maxLine to its start and its end.
func boundLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = elide(l, maxLine)
	}
	return strings.Join(lines, "\n")
}

// withServerStatus returns err, or, when err is an answer of the server whose Status body
// client-go did not decode (its message is then "unknown": client-go's discovery reads /api's
// body raw and drops the Status of a refusal, such as a user's who may not impersonate with
// --as), the server's own Status, asked for again where discovery starts, so that the message
// names the user, the verb and what was refused as the server said it.
func withServerStatus(ctx context.Context, o *options, err error) error {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || !undecodedStatus(se.ErrStatus) {
		return err
	}
	cfg, cerr := restConfig(o)
	if cerr != nil {
		return err
	}
	rc := rest.CopyConfig(cfg)
	rc.GroupVersion = &schema.GroupVersion{}
	rc.APIPath = "/"
	rc.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	httpClient, herr := sameHostClient(rc)
	if herr != nil {
		return err
	}
	client, cerr := rest.RESTClientForConfigAndClient(rc, httpClient)
	if cerr != nil {
		return err
	}
	again := client.Get().AbsPath("/api").Do(ctx).Error()
	var st apierrors.APIStatus
	if errors.As(again, &st) && st.Status().Code == se.ErrStatus.Code && !undecodedStatus(st.Status()) && st.Status().Message != "" {
		return again
	}
	return err
}

// undecodedStatus says whether s is client-go's stand-in for a server's answer it could not
// read (rest's newUnstructuredResponseError).
func undecodedStatus(s metav1.Status) bool {
	if s.Details == nil {
		return false
	}
	for _, c := range s.Details.Causes {
		if c.Type == metav1.CauseTypeUnexpectedServerResponse {
			return true
		}
	}
	return false
}

// kubeconfigError is a kubeconfig that is not there.
type kubeconfigError struct{ msg string }

func (e *kubeconfigError) Error() string { return e.msg }

// invalidNameError is a name asked for that cannot be a segment of a URL path ("." or "..",
// one with "/" or "%"), which kubectl's client refuses before asking the server.
type invalidNameError struct {
	Name  string
	Msgs  []string
	among bool // reported with other errors: kubectl prints it without "error: "
}

func (e *invalidNameError) Error() string {
	return fmt.Sprintf("invalid resource name %q: %v", clip(e.Name), e.Msgs)
}

// notFoundError is an object asked for by name that the cache does not hold, in kubectl's
// words, with close names that it does hold.
func notFoundError(t *target, name string, close []string) error {
	err := apierrors.NewNotFound(t.Res.GVR.GroupResource(), clip(name))
	if len(close) > 0 {
		err.ErrStatus.Message += "; did you mean " + strings.Join(close, ", ") + "?"
	}
	return err
}
