package jsonpath

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestRandomExpressionsMatchClientGo generates expressions from the part
// of the grammar where kindex and client-go must agree, evaluates them on
// the fixtures with both, and compares the outputs wherever client-go
// succeeds. (Where client-go fails, kindex's rules apply; see doc.go.)
func TestRandomExpressionsMatchClientGo(t *testing.T) {
	keys := []string{"metadata", "name", "namespace", "labels", "spec", "containers", "image", "ports",
		"containerPort", "status", "conditions", "type", "items", "capacity", "cpu", "addresses", "address",
		"versions", "served", "storage", "names", "shortNames", "data", "weight", "tags", "meta", "ok",
		"mixed", "matrix", "history", "phase", "restartCount", "ready", "state", "env", "value", "kind", "missing"}
	lits := []string{`"Ready"`, `"True"`, `"web"`, `'a'`, `"v1"`, `0`, `1`, `2`, `3`, `8080`, `-1`, `true`, `false`, `1.5`}
	ops := []string{"==", "!=", "<", "<=", ">", ">="}
	fixtures := []string{"pod", "deployment", "service", "configmap", "crd", "widget", "nodes"}
	objs := map[string]any{}
	for _, f := range fixtures {
		_, objs[f] = fixture(t, f)
	}
	r := rand.New(rand.NewPCG(7, 11))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	var segment func(depth int) string
	segment = func(depth int) string {
		switch n := r.IntN(20); {
		case n < 9:
			return "." + pick(keys)
		case n < 11:
			return "[*]"
		case n < 13:
			return fmt.Sprintf("[%d]", r.IntN(7)-3)
		case n < 14:
			return fmt.Sprintf("[%d:%d]", r.IntN(3), r.IntN(4))
		case n < 15:
			return fmt.Sprintf("[%d,%d]", r.IntN(3), r.IntN(3))
		case n < 16:
			return fmt.Sprintf("['%s','%s']", pick(keys), pick(keys))
		case n < 17:
			return ".." + pick(keys)
		default:
			if depth > 1 {
				return "." + pick(keys)
			}
			left := "@." + pick(keys)
			if r.IntN(3) == 0 {
				left += "." + pick(keys)
			}
			if r.IntN(4) == 0 {
				return "[?(" + left + ")]"
			}
			return "[?(" + left + pick(ops) + pick(lits) + ")]"
		}
	}
	path := func(depth int) string {
		var b strings.Builder
		for i := r.IntN(5) + 1; i > 0; i-- {
			b.WriteString(segment(depth))
		}
		return b.String()
	}
	compared, agreed, truncated := 0, 0, 0
	for i := 0; i < 8000; i++ {
		fix := pick(fixtures)
		obj := objs[fix]
		var expr string
		switch {
		case i%2 == 0:
			expr = "{" + guidedPath(r, obj) + "}"
		case r.IntN(5) == 0:
			expr = "{" + path(0) + "}/{" + path(0) + "}"
		default:
			expr = "{" + path(0) + "}"
		}
		p, err := Compile(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		got, err := p.ExecuteString(obj)
		if err != nil {
			t.Fatalf("%s on %s: %v", expr, fix, err)
		}
		want, _, cgErr := runClientGo(expr, obj)
		if cgErr != nil {
			continue
		}
		compared++
		switch { // client-go visits map members in random order
		case strings.Contains(expr, "..") && strings.Contains(expr, "}/{"):
			got, want = sortedRunes(got), sortedRunes(want)
		case strings.Contains(expr, ".."):
			got, want = sortedWords(got), sortedWords(want)
		}
		if got != want && truncatedByClientGo(expr, got, want) {
			truncated++
			continue
		}
		if got != want {
			t.Errorf("%s on %s:\nkindex    %q\nclient-go %q", expr, fix, got, want)
			continue
		}
		if got != "" {
			agreed++
		}
	}
	t.Logf("compared %d expressions where client-go succeeds, %d with non-empty output; client-go truncated %d", compared, agreed, truncated)
	if compared < 3000 || agreed < 2000 {
		t.Errorf("too few meaningful comparisons: %d, %d", compared, agreed)
	}
}

// escapeKey writes a key as a dotted field both libraries read the same
// way, or returns false.
func escapeKey(k string) (string, bool) {
	if k == "" || strings.ContainsAny(k, "\\!<>=()\"'") {
		return "", false
	}
	var b strings.Builder
	b.WriteByte('.')
	for _, c := range k {
		if strings.ContainsRune(" \t\n\r.,[]$@{}*", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String(), true
}

// literal writes v as a filter literal, or returns false.
func literal(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		if strings.ContainsAny(t, "\"\\()'") {
			return "", false
		}
		return `"` + t + `"`, true
	case int64:
		return fmt.Sprint(t), true
	case bool:
		return fmt.Sprint(t), true
	}
	return "", false
}

// guidedPath generates a path by walking obj, so that most paths select
// something.
func guidedPath(r *rand.Rand, obj any) string {
	var b strings.Builder
	cur := obj
	for step := 0; step < 6; step++ {
		switch t := cur.(type) {
		case map[string]any:
			if len(t) == 0 {
				return b.String() + ".x"
			}
			ks := make([]string, 0, len(t))
			for k := range t {
				ks = append(ks, k)
			}
			slices.Sort(ks)
			k := ks[r.IntN(len(ks))]
			ek, ok := escapeKey(k)
			if !ok {
				continue
			}
			if r.IntN(8) == 0 {
				b.WriteString(".." + ek[1:])
				return b.String()
			}
			b.WriteString(ek)
			cur = t[k]
		case []any:
			if len(t) == 0 {
				b.WriteString("[*]")
				return b.String()
			}
			i := r.IntN(len(t))
			switch r.IntN(5) {
			case 0:
				fmt.Fprintf(&b, "[%d]", i)
			case 1:
				fmt.Fprintf(&b, "[%d]", i-len(t))
			case 2:
				b.WriteString("[*]")
			case 3:
				fmt.Fprintf(&b, "[%d:]", i)
			default:
				m, ok := t[i].(map[string]any)
				if !ok || len(m) == 0 {
					b.WriteString("[*]")
					break
				}
				ks := make([]string, 0, len(m))
				for k := range m {
					ks = append(ks, k)
				}
				slices.Sort(ks)
				k := ks[r.IntN(len(ks))]
				ek, ok1 := escapeKey(k)
				lit, ok2 := literal(m[k])
				switch {
				case !ok1:
					b.WriteString("[*]")
				case !ok2 || r.IntN(4) == 0:
					b.WriteString("[?(@" + ek + ")]")
				default:
					op := []string{"==", "==", "!=", "<", ">="}[r.IntN(5)]
					b.WriteString("[?(@" + ek + op + lit + ")]")
				}
			}
			cur = t[i]
		default:
			return b.String()
		}
	}
	return b.String()
}

// truncatedByClientGo recognizes client-go's bug where a slice or [*]
// that selects nothing from one array stops the evaluation of the arrays
// after it (see the clientGoCases): client-go's words are then a proper
// subset of kindex's (a prefix, for a template without ".." and one
// action).
func truncatedByClientGo(expr, got, want string) bool {
	if !strings.Contains(expr, "[*]") && !strings.Contains(expr, ":") {
		return false
	}
	g, w := strings.Fields(got), strings.Fields(want)
	if len(w) >= len(g) {
		return false
	}
	count := map[string]int{}
	for _, x := range g {
		count[x]++
	}
	for _, x := range w {
		if count[x]--; count[x] < 0 {
			return false
		}
	}
	return true
}

func sortedRunes(s string) string {
	r := []rune(s)
	slices.Sort(r)
	return string(r)
}
