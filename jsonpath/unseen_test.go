package jsonpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	k8sjson "k8s.io/apimachinery/pkg/util/json"
	k8sjsonpath "k8s.io/client-go/util/jsonpath"
)

// cgOut is what client-go does with an expression on an object.
type cgOut struct {
	out     string
	results [][]reflect.Value
	err     error
	parse   bool // the error is Parse's
	panic   bool // the error is a panic
}

// runCG runs client-go's util/jsonpath, turning panics into errors.
func runCG(expr string, obj any, allow bool) (o cgOut) {
	defer func() {
		if r := recover(); r != nil {
			o.err = fmt.Errorf("panic: %v", r)
			o.panic = true
		}
	}()
	j := k8sjsonpath.New("p").AllowMissingKeys(allow)
	if err := j.Parse(expr); err != nil {
		o.err, o.parse = err, true
		return o
	}
	var b bytes.Buffer
	if err := j.Execute(&b, obj); err != nil {
		o.err = err
		return o
	}
	o.out = b.String()
	j = k8sjsonpath.New("p").AllowMissingKeys(allow)
	_ = j.Parse(expr)
	o.results, o.err = j.FindResults(obj)
	return o
}

// probeGen generates expressions, mostly guided by an object so that
// they select something.
type probeGen struct {
	r *rand.Rand
}

func (g *probeGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

var probeHandmade = []string{
	`{@}`, `{$}`, `{.*}`, `{[*]}`, `{..*}`, `{ @ }`, `{$.*}`, `{@[*]}`, `{.ints}`, `{.floats}`, `{.strs}`, `{.objs}`, `{.nested}`, `{.nested[*]}`, `{.nested[*][*]}`, `{.nested[*][0]}`,
	`{.ints[?(@>0)]}`, `{.ints[?(@ >= 0)]}`, `{.ints[?(@<7)]}`, `{.ints[?(@!=3)]}`, `{.ints[?(@==-1)]}`, `{.ints[?(@==9007199254740993)]}`, `{.ints[?(@==9007199254740992)]}`,
	`{.ints[?(@>=-9223372036854775808)]}`, `{.ints[?(@>9223372036854775807)]}`, `{.ints[?(-1<@)]}`, `{.ints[?(0==@)]}`, `{.ints[?(@==-0)]}`, `{.ints[?(@==+7)]}`,
	`{.strs[?(@<"b")]}`, `{.strs[?(@>'a')]}`, `{.strs[?(@=="")]}`, `{.strs[?(@=='')]}`, `{.strs[?(@!='')]}`, `{.strs[?(@=="a'b")]}`, `{.strs[?(@=='a\'b')]}`, `{.strs[?(@=="x\"y")]}`, `{.strs[?(@=='x"y')]}`,
	`{.strs[?(@=="a\b")]}`, `{.strs[?(@=='a\b')]}`, `{.strs[?(@=="é")]}`, `{.strs[?(@=="é")]}`, `{.strs[?(@>"9")]}`, `{.strs[?(@<"10")]}`, `{.strs[?(@ == "B")]}`, `{.strs[?(@<="B")]}`,
	`{.floats[?(@>1.0)]}`, `{.floats[?(@==0.1)]}`, `{.floats[?(@<0.0)]}`, `{.floats[?(@==-0.0)]}`, `{.floats[?(@==0.0)]}`, `{.floats[?(@>=2.0)]}`, `{.floats[?(@<=-0.0025)]}`, `{.floats[?(@==1000000000000000000000.0)]}`,
	`{.bools[?(@==true)]}`, `{.bools[?(@!=true)]}`, `{.bools[?(@)]}`, `{.bools[?(@==false)]}`, `{.nulls[?(@)]}`,
	`{.objs[?(@.n==@.m)].s}`, `{.objs[?(@.n!=@.m)].s}`, `{.objs[?(@.n<@.m)].s}`, `{.objs[?(@.n>@.m)].s}`, `{.objs[?(@.s==@.t)].n}`, `{.objs[?(@.s<@.t)].n}`, `{.objs[?(@.s>=@.t)].n}`,
	`{.objs[?(@.f==@.g)].n}`, `{.objs[?(@.f<@.g)].n}`, `{.objs[?(@.f>@.g)].n}`, `{.objs[?(@.b==@.c)].n}`, `{.objs[?(@.b!=@.c)].n}`, `{.objs[?(@.b==true)].n}`, `{.objs[?(@.b)].n}`, `{.objs[?(@.zz)].n}`,
	`{.objs[?(@.f==-0.0)].n}`, `{.objs[?(@.g==0.30000000000000004)].n}`, `{.objs[?(@.n>=9223372036854775807)].s}`, `{.objs[?(@.s=="")].n}`, `{.objs[?(@.s=='x"y')].n}`, `{.objs[?( @.n == 1 )].s}`,
	`{.objs[*].f}`, `{.objs[*].g}`, `{.objs[*]['n','s']}`, `{.objs[0,2]['f','g']}`, `{.objs[-1:]['n','m']}`, `{.objs[?(@.b==true)]['s','t']}`, `{.objs[1:3:2].n}`, `{.objs[::3].n}`, `{.objs[-3:-1].n}`,
	`{.maps[*].a}`, `{.maps[*].a.x}`, `{.maps[?(@.a.x==2)].a}`, `{.maps[?(@.a.x)].a.x}`, `{.mixedTypes}`, `{.mixedTypes[*]}`, `{.mixedTypes[6]}`, `{.mixedTypes[5]}`, `{.mixedTypes[4]}`,
	`{range .objs[*]}{.n}:{.s}{"\n"}{end}`, `{range .objs[*]}[{range @['n','m']}{@},{end}]{end}`, `{range .nested[*]}({range @[*]}<{@}>{end}){end}`, `{range .maps[*]}{range .a}{.x}{end};{end}`,
	`{range .ints[?(@>0)]}{@}{" "}{end}`, `{range .strs[*]}'{@}'{end}`, `{range .floats[*]}{@};{end}`, `{range .objs[?(@.b)]}{$.s}{end}`, `{range .maps}{@}{end}`, `{range .ints[0:2]}{range $.strs[0:1]}{@}{end}{end}`,
	`x{.ints[0]}y{.strs[1]}z{'lit'}{"\t"}{1.5}{-0}{true}`, `{"a"}`, `{'text'}`, `{1}`, `{-0.0}`, `{5.0}`, `{1.25}`, `{9223372036854775808}`, `{+3}`, `{007}`, `{"é\u00e9\x41\u2028"}`, `{'{}'}`, `{"}"}`,
	`{.items[*].metadata.name}`, `{range .items[*]}{.metadata.name}{range .spec.containers[*]}[{.name}:{.image}]{end};{end}`, `{.items[*].spec.containers[?(@.name=="c1")].image}`,
	`{.items[?(@.status.phase=="Running")].metadata.name}`, `{.items[?(@.metadata.namespace=="a")].metadata.labels}`, `{range .items[*]}{.metadata.name}{"\t"}{.status.phase}{"\n"}{end}`,
	`{.spec.groups[*].rules[*].alert}`, `{.spec.groups[*].rules[?(@.for=="15m")].labels.severity}`, `{range .spec.groups[*]}{.name}:{range .rules[*]}{.alert}{.record},{end}|{end}`,
	`{.spec.groups[?(@.name=="node.rules")].rules[*].expr}`, `{.spec.groups[*].interval}`, `{.spec.groups[-1].rules}`, `{.spec.groups[2].rules[*].x}`,
	`{.status.conditions[?(@.type=="Ready")].message}`, `{.status.conditions[?(@.observedGeneration==3)].type}`, `{.status.conditions[?(@.observedGeneration<3)].type}`, `{.spec.dnsNames[*]}`, `{.spec.dnsNames[-1]}`,
	`{.spec.dnsNames[?(@=="*.api.example.com")]}`, `{.spec.issuerRef}`, `{.spec.privateKey.size}`, `{.status.revision}`, `{.metadata.labels.app\.kubernetes\.io/managed-by}`,
	`{.status.resources[?(@.status=="OutOfSync")].name}`, `{.status.resources[*].health.status}`, `{.status.resources[?(@.health.status!="Healthy")].health.message}`, `{.spec.source.helm.parameters[?(@.name=="image.tag")].value}`,
	`{.spec.syncPolicy.automated}`, `{.spec.syncPolicy.retry.backoff.factor}`, `{.status.operationState}`, `{.status.history[-1].revision}`, `{.spec.source.helm.parameters[?(@.forceString==true)].name}`,
	`{.status.images[*].sizeBytes}`, `{.status.images[*].names[0]}`, `{.status.images[?(@.sizeBytes>100000000)].names[*]}`, `{.status.images[*].names}`, `{.status.daemonEndpoints.kubeletEndpoint.Port}`,
	`{.status.addresses[?(@.type=="InternalIP")].address}`, `{.spec.taints[?(@.effect=="NoSchedule")].key}`, `{.spec.podCIDRs[1]}`, `{.status.volumesInUse}`, `{.status.volumesAttached}`, `{.metadata.labels.node-role\.kubernetes\.io/worker}`,
	`{.spec.versions[*].schema.openAPIV3Schema.properties.spec.properties.ratio}`, `{.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.mode.enum}`, `{.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.mode.default}`,
	`{.spec.versions[0].additionalPrinterColumns[?(@.priority==1)].jsonPath}`, `{.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.mode.enum[?(@=="a'b")]}`, `{.spec.versions[0].schema.openAPIV3Schema.required}`,
	`{.floats}`, `{.bigs}`, `{.ints}`, `{.floats[*]}`, `{.bigs[*]}`, `{.negzero} {.negzerof} {.onef} {.fivef} {.half}`, `{.pairs}`, `{.vals}`, `{.vals[*].v}`, `{.list}`, `{.list[*]}`, `{.html}`, `{.ctrl}`, `{.uni}`, `{.lone}`, `{.esc}`,
	`{ range .objs[*] }{ .n }{ end }`, `{range .objs[*] }{.n}{end }`, `{.vals[?(@.v)].v}`, `{.objs[?(true)].n}`, `{.objs[?(1==1)].n}`, `{.objs[?("a"<@.s)].n}`, `{.objs[?(0.5<=@.g)].n}`,
	`{['']}`, `{.a['']}`, `{['[0]']}`, `{[' sp ']}`, `{.\ sp\ }`, `{.ключ}`, `{['ключ']}`, `{.é}`, `{.é}`, `{.\$}`, `{.\@}`, `{.\{x\}}`, `{.1}`, `{['1']}`, `{.-1}`, `{['-1']}`, `{.true}`, `{.null}`, `{['true','null']}`,
	`{.items[*].tags}`, `{.items[*].n}`, `{.items[?(@.n==2)].name}`, `{.items[?(@.tags)].name}`, `{.items[4].tags}`, `{.emptyList}`, `{.emptyMap}`, `{.emptyStr}`, `{.nul}`, `{[.nul]}`, `{.m}`, `{.nest..x}`, `{.nest.x.x.x[*].x}`,
	`{.a.b}{.a.c.d}`, `{.a}`, `{['a']['c']['d']}`, `{["a"]}`, `{.m['k1','k2']}`, `{.m.k3.k4}`, `{range .m}{.k1}{end}`, `{range .nul}x{end}y`, `{range .emptyList[*]}x{end}y`, `{range .emptyMap}<{@}>{end}`,
}

var probeLits = []string{`1`, `1.0`, `-1`, `-0`, `0`, `1.5`, `+1`, `"1"`, `'1'`, `"a'b"`, `'a\'b'`, `"x\"y"`, `'x"y'`,
	`"a\\b"`, `''`, `""`, `true`, `false`, `"B"`, `"a"`, `'x'`, `9223372036854775807`, `9223372036854775808`, `5.0`, `2.5`,
	`"Ready"`, `"True"`, `2`, `3`, `0.5`, `-2.25`, `1000`, `"v1"`, `"c1"`, `"Healthy"`, `12`, `29`, `"29"`, `256`, `"ECDSA"`}
var probeOps = []string{"==", "!=", "<", "<=", ">", ">=", " == ", " != ", " <", "> ", "=="}
var probeKeys = []string{"a", "b", "v", "n", "name", "status", "type", "kind", "metadata", "spec", "items", "tags", "rules",
	"groups", "labels", "conditions", "images", "names", "sizeBytes", "x", "y", "value", "health", "resources", "containers",
	"image", "ready", "restartCount", "phase", "severity", "alert", "expr", "properties", "default", "minimum", "enum",
	"pairs", "vals", "ints", "floats", "list", "m", "k1", "k3", "k4", "nest", "missing", "", "*", "..", "[0]", "1", "-1",
	"true", "null", "a.b", "a\\b", "a'b", " sp ", "ключ", "é", "$", "@", "{x}", "ratio", "revision", "id", "history"}

// name spells key k as a dotted field (kubectl's escapes) or a quoted
// bracket key (sometimes "*" as the wildcard .*).
func (g *probeGen) name(k string) string {
	useBracket := g.r.IntN(4) == 0
	if k == "" || strings.ContainsAny(k, "\"'\\") {
		useBracket = true
	}
	if !useBracket {
		var b strings.Builder
		b.WriteByte('.')
		for _, c := range k {
			if strings.ContainsRune(" \t.,[]$@{}*", c) {
				b.WriteByte('\\')
			}
			b.WriteRune(c)
		}
		if k == "*" && g.r.IntN(2) == 0 {
			return ".*" // a wildcard
		}
		return b.String()
	}
	q := byte('\'')
	if g.r.IntN(5) == 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteString("[")
	b.WriteByte(q)
	for _, c := range k {
		if c == rune(q) || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	b.WriteByte(q)
	b.WriteString("]")
	return b.String()
}

func (g *probeGen) filter(cur any, depth int) string {
	sp := func() string {
		if g.r.IntN(6) == 0 {
			return " "
		}
		return ""
	}
	operand := func() string {
		switch n := g.r.IntN(10); {
		case n < 5:
			// a path relative to the element, guided if possible
			if l, ok := cur.([]any); ok && len(l) > 0 {
				return "@" + g.guided(l[g.r.IntN(len(l))], 2, depth+1)
			}
			return "@" + g.random(2, depth+1)
		case n < 6:
			return "@"
		case n < 7:
			return "@" + g.random(2, depth+1)
		default:
			return g.pick(probeLits)
		}
	}
	var f string
	switch n := g.r.IntN(10); {
	case n < 2:
		f = operand() // existence
	case n < 4:
		left := operand()
		right := operand()
		f = left + g.pick(probeOps) + right
	case n < 5:
		f = g.pick(probeLits) + g.pick(probeOps) + operand()
	default:
		f = operand() + g.pick(probeOps) + g.pick(probeLits)
	}
	return "[?(" + sp() + f + sp() + ")]"
}

func (g *probeGen) slice() string {
	v := func() string {
		switch g.r.IntN(4) {
		case 0:
			return ""
		case 1:
			return fmt.Sprint(-g.r.IntN(5))
		}
		return fmt.Sprint(g.r.IntN(6))
	}
	switch g.r.IntN(4) {
	case 0:
		return "[" + v() + ":" + v() + "]"
	case 1:
		return "[" + v() + ":" + v() + ":" + fmt.Sprint(g.r.IntN(4)) + "]"
	case 2:
		return "[" + v() + ":" + v() + ":]"
	}
	return "[" + fmt.Sprint(g.r.IntN(12)-6) + "]"
}

func (g *probeGen) union(cur any) string {
	var parts []string
	for i := g.r.IntN(3) + 2; i > 0; i-- {
		switch g.r.IntN(5) {
		case 0:
			parts = append(parts, fmt.Sprint(g.r.IntN(6)-2))
		case 1:
			parts = append(parts, fmt.Sprintf("%d:%d", g.r.IntN(3), g.r.IntN(4)))
		case 2:
			parts = append(parts, "*")
		default:
			k := g.pick(probeKeys)
			if m, ok := cur.(map[string]any); ok && len(m) > 0 && g.r.IntN(2) == 0 {
				k = g.pick(sortedKeys(m))
			}
			if strings.ContainsAny(k, "'\\,]") {
				k = "x"
			}
			parts = append(parts, "'"+k+"'")
		}
	}
	sep := ","
	if g.r.IntN(4) == 0 {
		sep = ", "
	}
	return "[" + strings.Join(parts, sep) + "]"
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// guided walks cur, writing up to n segments that mostly select something.
func (g *probeGen) guided(cur any, n, depth int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch t := cur.(type) {
		case map[string]any:
			if len(t) == 0 || g.r.IntN(12) == 0 {
				b.WriteString(g.name(g.pick(probeKeys)))
				return b.String()
			}
			switch g.r.IntN(14) {
			case 0:
				b.WriteString(".*")
				return b.String()
			case 1:
				b.WriteString("..")
				if g.r.IntN(2) == 0 {
					b.WriteString(g.name(g.pick(sortedKeys(t)))[1:])
				}
				return b.String()
			case 2:
				b.WriteString(g.union(t))
				return b.String()
			case 3:
				b.WriteString("[*]")
				return b.String()
			}
			k := g.pick(sortedKeys(t))
			nm := g.name(k)
			if nm == ".*" {
				return b.String() + nm
			}
			b.WriteString(nm)
			cur = t[k]
		case []any:
			if len(t) == 0 {
				b.WriteString(g.pick([]string{"[*]", "[0]", "[-1]", "[:]", "[0:0]", ".*"}))
				return b.String()
			}
			switch g.r.IntN(8) {
			case 0:
				b.WriteString("[*]")
				cur = t[g.r.IntN(len(t))]
			case 1:
				b.WriteString(g.slice())
				cur = t[g.r.IntN(len(t))]
			case 2, 3:
				if depth < 3 {
					b.WriteString(g.filter(t, depth))
					cur = t[g.r.IntN(len(t))]
				} else {
					b.WriteString("[*]")
				}
			case 4:
				b.WriteString(g.union(t))
				return b.String()
			case 5:
				b.WriteString(".*")
				cur = t[g.r.IntN(len(t))]
			default:
				i := g.r.IntN(len(t))
				if g.r.IntN(3) == 0 {
					fmt.Fprintf(&b, "[%d]", i-len(t))
				} else {
					fmt.Fprintf(&b, "[%d]", i)
				}
				cur = t[i]
			}
		default:
			if g.r.IntN(3) == 0 {
				b.WriteString(g.pick([]string{".x", "[0]", "[*]", ".*", "[?(@)]"}))
			}
			return b.String()
		}
	}
	return b.String()
}

// random writes up to n segments without looking at data.
func (g *probeGen) random(n, depth int) string {
	var b strings.Builder
	for i := g.r.IntN(n) + 1; i > 0; i-- {
		switch k := g.r.IntN(16); {
		case k < 8:
			b.WriteString(g.name(g.pick(probeKeys)))
		case k < 9:
			b.WriteString("[*]")
		case k < 10:
			b.WriteString(".*")
		case k < 11:
			b.WriteString(g.slice())
		case k < 12:
			b.WriteString(g.union(nil))
		case k < 13:
			b.WriteString("..")
			if g.r.IntN(3) == 0 {
				b.WriteString(g.pick([]string{"-1", "'x'", `"y"`, "+2", "-.5", "_x", "é", "1", "[ 0 ]", "[-0]", "[::]", "[:]", "[0:]", "@", "$", " ", "[?(@)]", "[?(@.x)]", "['x']"}))
			} else {
				b.WriteString(g.name(g.pick(probeKeys))[1:])
			}
		default:
			if depth < 3 {
				b.WriteString(g.filter(nil, depth))
			} else {
				b.WriteString(".a")
			}
		}
	}
	return b.String()
}

func (g *probeGen) path(obj any) string {
	prefix := g.pick([]string{"", "", "", "$", "@"})
	var p string
	if g.r.IntN(4) == 0 {
		p = g.random(4, 0)
	} else {
		p = g.guided(obj, 2+g.r.IntN(5), 0)
	}
	if p == "" {
		if prefix == "" {
			return "@"
		}
		return prefix
	}
	if !strings.HasPrefix(p, ".") && !strings.HasPrefix(p, "[") {
		p = "." + p
	}
	return prefix + p
}

var probeTexts = []string{"", "", "-", " ", "\n", "x=", "}", ":", "\t", "[", "]", "(", ")", "é", "'", "\""}
var probeBlockLits = []string{`{'text'}`, `{"a"}`, `{"\t"}`, `{"\n"}`, `{'a\'b'}`, `{"x\"y"}`, `{1}`, `{1.5}`, `{-0}`, `{true}`, `{false}`, `{"é\u00e9"}`, `{'{}'}`, `{5.0}`, `{+3}`, `{""}`}

func (g *probeGen) template(obj any, depth int) string {
	var b strings.Builder
	for i := g.r.IntN(4) + 1; i > 0; i-- {
		b.WriteString(g.pick(probeTexts))
		switch n := g.r.IntN(10); {
		case n < 5:
			sp := ""
			if g.r.IntN(8) == 0 {
				sp = " "
			}
			b.WriteString("{" + sp + g.path(obj) + sp + "}")
		case n < 7:
			b.WriteString(g.pick(probeBlockLits))
		case n < 9 && depth < 3:
			// a range over something in obj, with a body guided by an item
			rp := g.path(obj)
			b.WriteString("{range " + rp + "}")
			item := obj
			if p, err := Compile("{" + rp + "}"); err == nil {
				if vs, err := p.Eval(obj); err == nil && len(vs) > 0 {
					item = vs[g.r.IntN(len(vs))].Interface()
				}
			}
			b.WriteString(g.template(item, depth+1))
			b.WriteString("{end}")
		default:
			b.WriteString("{" + g.path(obj) + "}")
		}
	}
	b.WriteString(g.pick(probeTexts))
	return b.String()
}

// Where client-go succeeds but prints something else, documentedDiff
// names the difference of doc.go that explains it, or returns "".
var (
	// a quoted key (or union item) with a dot or *: client-go reads a path
	quotedPath = regexp.MustCompile(`[\[,]\s*['"][^\]'"]*(\.|\*)[^\]]*['"]`)
	// a quoted key with $, @ or a space, which client-go skips
	quotedSkipped = regexp.MustCompile(`[\[,]\s*['"][^\]'"]*[$@ ][^\]]*['"]`)
	// a descent followed by nothing: client-go also yields strings
	descentAlone = regexp.MustCompile(`\.\.($|[}\s,)\]])`)
	// an existence filter whose operand indexes or wildcards: client-go
	// counts a failing operand as existing
	existsIndexed = regexp.MustCompile(`\[\?\(\s*@[^=!<>)]*[\[*][^=!<>)]*\)\]`)
	// a range over a wildcard or descent, which may visit the bytes of
	// strings in client-go
	// a filter operand with a wildcard or descent, which may compare the
	// bytes of strings in client-go
	filterWild = regexp.MustCompile(`\[\?\([^)]*(\*|\.\.)`)
	// a slice or [*], which may select nothing from an array, and stop
	// client-go
	emptySelector = regexp.MustCompile(`[\[,]\s*\*|:`)
	rangeWild     = regexp.MustCompile(`\{range (\\.|[^}\\])*(\*|\.\.)`)
)

// With checked, the differences about strings were checked value by
// value (see probeOne) and explain nothing more.
// sameAsClientGo compares kindex's output mine for expr on o with client-go's (c): what each
// prints (client-go prints <no value> for a null current node), in any order where
// client-go visits map members in random order (unordered: a wildcard or a descent), and
// then the values with their kinds. It returns whether they agree and the outputs to
// report: the values where only they differ.
func sameAsClientGo(t *testing.T, p *Path, expr string, o any, c cgOut, mine string) (same bool, got, want string, unordered bool) {
	t.Helper()
	want = strings.ReplaceAll(c.out, "<no value>", "null")
	g2, w2 := mine, want
	unordered = strings.Contains(expr, "*") || strings.Contains(expr, "..")
	if unordered {
		if p.IsTemplate() {
			g2, w2 = sortedRunes(g2), sortedRunes(w2)
		} else {
			g2, w2 = sortedWords(g2), sortedWords(w2)
		}
	}
	if g2 == w2 && !p.IsTemplate() && len(c.results) == 1 {
		vs, _ := p.Eval(o)
		var cg []Value
		for _, rv := range c.results[0] {
			v, ok := valueOf(cgInterface(rv))
			if !ok {
				t.Fatalf("%s: client-go result of type %T", expr, cgInterface(rv))
			}
			cg = append(cg, v)
		}
		a, b := show(vs), show(cg)
		if unordered {
			slices.Sort(a)
			slices.Sort(b)
		}
		if !slices.Equal(a, b) {
			return false, strings.Join(a, " "), strings.Join(b, " "), unordered
		}
	}
	return g2 == w2, mine, want, unordered
}

// explained reports whether kindex's output mine for expr on o differs from client-go's
// want (c) as doc.go documents, and counts it so: client-go's values without the bytes of
// strings (and, after a final descent, without strings) must be kindex's, or the
// difference one documentedDiff knows.
func (st *probeStats) explained(p *Path, expr string, o any, c cgOut, mine, want string) bool {
	descentEnd := strings.HasSuffix(expr, "..}")
	checked := !p.IsTemplate() && len(c.results) == 1 && len(p.nodes[0].exprs) == 1 && (descentEnd || hasByteResults(c.results))
	if checked {
		vs, _ := p.Eval(o)
		var cg []string
		for _, rv := range c.results[0] {
			x := cgInterface(rv)
			if _, isByte := x.(uint8); isByte {
				continue
			}
			if _, isString := x.(string); isString && descentEnd {
				continue
			}
			v, _ := valueOf(x)
			cg = append(cg, v.Kind().String()+":"+v.String())
		}
		a := show(vs)
		slices.Sort(a)
		slices.Sort(cg)
		if slices.Equal(a, cg) {
			st.documented++
			st.docKinds["wildcards and descent do not enter strings (checked)"]++
			return true
		}
	}
	if why := documentedDiff(expr, mine, want, c, checked); why != "" {
		st.documented++
		st.docKinds[why]++
		return true
	}
	return false
}

func documentedDiff(expr, mine, want string, c cgOut, checked bool) string {
	switch {
	case quotedPath.MatchString(expr):
		return "a quoted key with . or * is a key"
	case quotedSkipped.MatchString(expr):
		return "a quoted key with $, @ or a space is a key"
	case strings.Contains(expr, `\\`):
		return "a backslash escapes the next character"
	case !checked && hasByteResults(c.results):
		return "wildcards and descent do not enter strings"
	case !checked && descentAlone.MatchString(expr):
		return "descent yields objects and arrays only"
	case truncatedByClientGo(expr, mine, want), emptySelector.MatchString(expr) && subRunes(want, mine):
		return "an empty [*] or slice does not stop the evaluation"
	case existsIndexed.MatchString(expr):
		return "a failing existence operand does not exist"
	case rangeWild.MatchString(expr):
		return "wildcards and descent do not enter strings (in a range)"
	case filterWild.MatchString(expr):
		return "wildcards and descent do not enter strings (in a filter)"
	}
	return ""
}

// rejectedOnPurpose matches the messages of the syntax kindex rejects
// where client-go succeeds (see doc.go and TestSyntaxDifferences).
var rejectedOnPurpose = regexp.MustCompile(`slice step must be positive|a name after '\.\.' cannot start|unexpected '[$@]'|unexpected '[.\[]', expected (',' or '}'|one of ==|a comparison operator)`)

func hasByteResults(rs [][]reflect.Value) bool {
	for _, g := range rs {
		for _, v := range g {
			if v.Kind() == reflect.Interface && !v.IsNil() {
				v = v.Elem()
			}
			if v.Kind() == reflect.Uint8 {
				return true
			}
		}
	}
	return false
}

type probeStats struct {
	cases, kxReject, cgParse, cgErr, cgPanic, strictOK int
	compared, nonEmpty, documented, mismatch, internal int
	docKinds                                           map[string]int
	failures                                           []string
}

func (s *probeStats) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if len(msg) > 1500 {
		msg = msg[:1500] + "…"
	}
	if len(s.failures) < 30 {
		s.failures = append(s.failures, msg)
	}
}

// TestUnseenObjectsMatchClientGo compares kindex with client-go on
// resources and expressions written for no other test: realistic objects
// (a cert-manager Certificate, an Argo CD Application, a PrometheusRule, a
// Node, a CRD schema, a List) and adversarial ones (odd keys, numbers at
// the edges of int64 and float64, escapes), with hand-written expressions
// and a generator unlike TestRandomExpressionsMatchClientGo's: templates
// of text, literals and nested {range} blocks, filters comparing two paths
// or a literal with a path, tricky literals, unions mixing keys, indexes,
// slices and *, negative and empty slices, descent followed by anything,
// white space, and keys spelled every way. Each case runs on the object
// decoded with int64 numbers and with float64 numbers (json.Unmarshal),
// and on its raw JSON re-encoded several ways (indented, every character
// of keys and strings escaped, every key preceded by a duplicate); where
// client-go succeeds, kindex must print the same or differ as doc.go
// says. JSONPATH_PROBE_CASES and JSONPATH_PROBE_SEED run more or other
// generated cases.
func TestUnseenObjectsMatchClientGo(t *testing.T) {
	n, seed := 2000, uint64(1)
	fmt.Sscan(os.Getenv("JSONPATH_PROBE_CASES"), &n)
	fmt.Sscan(os.Getenv("JSONPATH_PROBE_SEED"), &seed)
	names, objs, objsF := decodeDocs(t, probeDocs)
	st := &probeStats{docKinds: map[string]int{}}
	for _, name := range names {
		for _, expr := range probeHandmade {
			probeOne(t, st, name, expr, objs[name], objsF[name], []byte(probeDocs[name]))
		}
	}
	g := &probeGen{r: rand.New(rand.NewPCG(seed, 99))}
	for i := 0; i < n; i++ {
		name := g.pick(names)
		expr := "{" + g.path(objs[name]) + "}"
		if g.r.IntN(3) == 0 {
			expr = g.template(objs[name], 0)
		}
		probeOne(t, st, name, expr, objs[name], objsF[name], []byte(probeDocs[name]))
	}
	t.Logf("%d cases: kindex rejects %d; client-go fails to parse %d, fails %d times, panics %d times, succeeds %d times with AllowMissingKeys(false); compared %d outputs (%d non-empty): %d differences documented (%v), %d not",
		st.cases, st.kxReject, st.cgParse, st.cgErr, st.cgPanic, st.strictOK, st.compared, st.nonEmpty, st.documented, st.docKinds, st.mismatch)
	for _, f := range st.failures {
		t.Error(f)
	}
	if st.compared < st.cases || st.nonEmpty < st.compared/4 {
		t.Errorf("too few meaningful comparisons: %d of %d cases, %d non-empty", st.compared, st.cases, st.nonEmpty)
	}
}

func probeOne(t *testing.T, st *probeStats, name, expr string, obj, objF any, raw []byte) {
	st.cases++
	p, err := Compile(expr)
	if err != nil {
		st.kxReject++
		if c := runCG(expr, obj, true); c.err == nil && !rejectedOnPurpose.MatchString(err.Error()) {
			st.fail("%s on %s: kindex rejects it (%v); client-go prints %q", expr, name, err, c.out)
		}
		return
	}
	got, err := p.ExecuteString(obj)
	if err != nil {
		st.internal++
		st.fail("%s on %s: %v", expr, name, err)
		return
	}
	// The raw document, indexed or not, and re-encoded: the same output as
	// its decoding.
	docs := []any{JSON(raw), IndexedJSON{Doc: raw, Spans: BuildSpans(nil, raw, 0)}}
	for v := 1; v <= 3; v++ {
		docs = append(docs, JSON(probeVariant(name, v)))
	}
	for i, in := range docs {
		want := got
		if i >= 2 {
			want, _ = p.ExecuteString(probeDecoded(name, i-1))
		}
		j, err := p.ExecuteString(in)
		if errors.Is(err, ErrBudgetExceeded) {
			continue // raw JSON costs more steps (see DefaultMaxSteps)
		}
		if err != nil || j != want {
			st.internal++
			st.fail("%s on %s (%T %d): error %v: %q; decoded: %q", expr, name, in, i, err, j, want)
		}
	}
	// The object projected on Fields gives the same output.
	if pr, err := p.ExecuteString(projectFields(obj, p.Fields())); err != nil || pr != got {
		st.internal++
		st.fail("%s on %s: on the object projected on %q: %q, %v; on the object: %q", expr, name, p.Fields(), pr, err, got)
	}
	if !p.IsTemplate() {
		evalAll(t, p, obj, raw) // every evaluator and entry point alike
		vs, err1 := p.Eval(obj)
		js, err2 := p.Eval(JSON(raw))
		if err1 != nil || err2 != nil || joined(vs) != joined(js) {
			st.internal++
			st.fail("%s on %s: Eval on JSON %q, %v; on the object %q, %v", expr, name, joined(js), err2, joined(vs), err1)
		}
	}
	for i, o := range []any{obj, objF} {
		mine := got
		if i == 1 {
			if mine, err = p.ExecuteString(objF); err != nil {
				st.internal++
				st.fail("%s on %s (float64 numbers): %v", expr, name, err)
				continue
			}
		}
		c := runCG(expr, o, true)
		switch {
		case c.panic:
			st.cgPanic++
			continue
		case c.parse:
			st.cgParse++
			return
		case c.err != nil:
			st.cgErr++
			continue
		}
		if i == 0 {
			// Where client-go succeeds with AllowMissingKeys(false), it
			// prints what it prints with true (maps in random order), unless
			// a slice or [*] that selects nothing stops it: then what it
			// printed depends on the order it visited a map in ({.*[:-2]}).
			if c2 := runCG(expr, o, false); c2.err == nil {
				st.strictOK++
				if sortedRunes(c2.out) != sortedRunes(c.out) && !existsIndexed.MatchString(expr) && !strings.Contains(expr, "[?(") &&
					!emptySelector.MatchString(expr) {
					st.fail("%s on %s: client-go prints %q with AllowMissingKeys(false), %q with true", expr, name, c2.out, c.out)
				}
			}
		}
		st.compared++
		if mine != "" {
			st.nonEmpty++
		}
		same, mine, want, _ := sameAsClientGo(t, p, expr, o, c, mine)
		if same {
			if want != c.out {
				st.documented++
				st.docKinds["null prints as null where it is the current node"]++
			}
			continue
		}
		if st.explained(p, expr, o, c, mine, want) {
			continue
		}
		st.mismatch++
		decoding := "int64"
		if i == 1 {
			decoding = "float64"
		}
		st.fail("%s on %s (%s numbers):\nkindex    %q\nclient-go %q", expr, name, decoding, mine, want)
	}
}

var probeVariants = map[string][]byte{}

var probeDecodings = map[string]any{}

// probeDecoded returns the decoding of probeVariant(name, kind) (which
// differs from the document's: encoding/json writes 1.0 as 1, an int).
func probeDecoded(name string, kind int) any {
	k := fmt.Sprint(name, kind)
	if x, ok := probeDecodings[k]; ok {
		return x
	}
	var x any
	if err := k8sjson.Unmarshal(probeVariant(name, kind), &x); err != nil {
		panic(err)
	}
	probeDecodings[k] = x
	return x
}

// probeVariant re-encodes a probe document: 1 indented by encoding/json,
// 2 with every character of keys and strings escaped as \uXXXX, 3 with
// every member preceded by a duplicate of its key holding other values.
func probeVariant(name string, kind int) []byte {
	k := fmt.Sprint(name, kind)
	if b, ok := probeVariants[k]; ok {
		return b
	}
	var obj any
	if err := k8sjson.Unmarshal([]byte(probeDocs[name]), &obj); err != nil {
		panic(err)
	}
	var b []byte
	switch kind {
	case 1:
		b, _ = json.MarshalIndent(obj, " ", "\t")
	default:
		b = escEncode(nil, obj, kind == 3)
	}
	probeVariants[k] = b
	return b
}

func escString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		if r > 0xffff {
			r1, r2 := utf16Pair(r)
			b = fmt.Appendf(b, "\\u%04x\\u%04X", r1, r2)
			continue
		}
		b = fmt.Appendf(b, "\\u%04x", r)
	}
	return append(b, '"')
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

func escEncode(b []byte, x any, dup bool) []byte {
	switch t := x.(type) {
	case map[string]any:
		b = append(b, "{ "...)
		first := true
		for _, k := range sortedKeys(t) {
			if !first {
				b = append(b, " ,\n"...)
			}
			first = false
			if dup {
				b = escString(b, k)
				b = append(b, `: {"x":[1,{"y":"}"}]} , `...)
				b = escString(b, k)
				b = append(b, `:"dup\"]" , `...)
			}
			b = escString(b, k)
			b = append(b, " : "...)
			b = escEncode(b, t[k], dup)
		}
		return append(b, " }"...)
	case []any:
		b = append(b, "[ "...)
		for i, e := range t {
			if i > 0 {
				b = append(b, " , "...)
			}
			b = escEncode(b, e, dup)
		}
		return append(b, " ]"...)
	case string:
		return escString(b, t)
	case float64:
		return strconv.AppendFloat(b, t, 'E', -1, 64)
	}
	j, _ := json.Marshal(x)
	return append(b, j...)
}

// subRunes reports whether the runes of a are a proper sub-multiset of b's.
func subRunes(a, b string) bool {
	if len(a) >= len(b) {
		return false
	}
	count := map[rune]int{}
	for _, r := range b {
		count[r]++
	}
	for _, r := range a {
		if count[r]--; count[r] < 0 {
			return false
		}
	}
	return true
}

// cgInterface is the value of a client-go result (nil for the invalid
// Value of a null current node).
func cgInterface(rv reflect.Value) any {
	if !rv.IsValid() {
		return nil
	}
	return rv.Interface()
}

// projectFields keeps of obj only the key paths fields (see Path.Fields).
func projectFields(obj any, fields [][]string) any {
	out := map[string]any{}
	for _, f := range fields {
		if len(f) == 0 {
			return obj
		}
		src, dst := obj, out
		for i, k := range f {
			m, ok := src.(map[string]any)
			if !ok {
				break
			}
			v, ok := m[k]
			if !ok {
				break
			}
			if i == len(f)-1 {
				dst[k] = v
				break
			}
			if _, isMap := v.(map[string]any); !isMap {
				break // fields of anything else select nothing
			}
			next, ok := dst[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				dst[k] = next
			}
			src, dst = v, next
		}
	}
	return out
}
