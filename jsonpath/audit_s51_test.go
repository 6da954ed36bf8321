package jsonpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	k8sjson "k8s.io/apimachinery/pkg/util/json"
)

// s51Docs are objects no other comparison test uses: annotation and label keys with dots,
// slashes and the characters filters and brackets treat specially, short arrays, numbers
// written every way JSON allows, long and non-ASCII strings, duplicate keys, nested arrays
// only, and deep mixed nesting.
var s51Docs = map[string]string{
	"s51-annot": `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"default",
"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}\n","a.b/c-d_e":"x1","x/y.z":"x2","foo.bar":"fb","foo":"plainfoo","prometheus.io/port":"9090","prometheus.io/scrape":"true","k:v":"colon","a,b":"comma","a]b":"bracket","a=b":"eq","a(b)":"paren","a!b":"bang","a<b":"lt","-1":"minus","0":"zero","true":"t","null":"n","1e3":"exp"},
"labels":{"app.kubernetes.io/name":"web","app.kubernetes.io/instance":"web-prod","app":"web","foo.bar":"dotted"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","controller":true,"blockOwnerDeletion":true}]},
"foo":{"bar":"nestedfoobar","baz":{"qux":[1,2]}},
"spec":{"containers":[{"name":"a","image":"nginx","env":[{"name":"X","value":"1"},{"name":"Y","value":""},{"name":"Z"}],"ports":[{"containerPort":80},{"containerPort":443,"name":"https"}]}]},
"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"},{"type":"PodScheduled","status":"True"},{"type":"Initialized","status":"False","reason":null}]}}`,

	"s51-short": `{"e":[],"one":[1],"two":["a","b"],"three":[10,20,30],"s":"hello","m":{"b":2,"a":1,"c":3},"em":{},"n":null,"t":true,"z":0,
"lol":[[],[1],[1,2],[1,2,3]],"los":["","x","xy"],"lom":[{},{"a":1},{"a":[]},{"a":[1,2]},{"a":null}]}`,

	"s51-nums": `{"exp":1e3,"expf":1.5e3,"expneg":1e-3,"bigE":1E+2,"pct":100e-2,"one0":1.0,"negz":-0,"negzf":-0.0,"negzexp":-0e0,"p1":0.1,"p2":0.2,"p3":0.30000000000000004,
"e21":1e21,"e20":1e20,"e22":1e22,"big":123456789012345678,"js":9007199254740993,"min":-9223372036854775808,"max":9223372036854775807,"over":9223372036854775808,"under":-9223372036854775809,
"fmax":1.7976931348623157e308,"den":5e-324,"e7":1e-7,"e6":0.000001,"e5":0.00001,"huge":100000000000000000000000,"frac":12345.678,
"sexp":"1e3","sone":"1","strue":"true","snull":"null","t":true,"f":false,"nul":null,
"list":[1e3,1000,"1000",1000.0,1.0e3,-0,0,-0.0,true,"true",null,"null",1.5,"1.5",1e21,9223372036854775807,9223372036854775808,-1,0.1],
"objs":[{"v":1e3},{"v":1000},{"v":"1000"},{"v":-0},{"v":-0.0},{"v":true},{"v":null},{"v":1.0},{"v":1},{"v":"1"},{"v":1e21},{"v":0.1},{"v":9223372036854775807},{"v":-9223372036854775808},{"w":1}]}`,

	"s51-text": `{"long":"` + strings.Repeat("abcdefghij", 3000) + `","uni":"日本語テキスト 🚀 ñ é e\u0301","html":"<b>&amp;</b> \u003c","ctrl":"\u0000\u001f\u007f\u0080\u00ff","sur":"\ud83d\ude80","bs":"a\\b\\\\c","q":"it's \"q\"","nl":"line1\nline2\r\n","tab":"\t",
"keys":{"日本":"jp","🚀":"rocket","a b":"space","a\tb":"tabkey","a\\b":"bskey","a'b":"sq","a\"b":"dq","{x}":"brace","[y]":"brk","é":"e1","e\u0301":"e2","":"empty"},
"arr":["日本","🚀","<>&","\u2028\u2029",""],"maps":[{"k":"<>&"},{"k":"\u2028"},{"k":"日本"}]}`,

	"s51-dups": `{"a":{"x":1},"a":{"y":2},"b":[1,2],"b":[3],"c":"first","d":{"e":{"f":1,"f":2},"e":{"g":3}},"list":[{"k":1,"k":2},{"k":"s","k":null},{"k":[1],"j":0,"k":{"z":1}}],"c":"last"}`,

	"s51-arrays": `[[1,[2,[3]]],[[]],[[[4,5]]],[],[["a","b"],["c"]],[[null],[true,false]]]`,

	"s51-deep": `{"a":{"a":{"a":{"a":[{"a":1,"b":[{"a":2}]},{"c":{"a":[3,{"a":4}]}}]}}},"x":[{"y":[{"z":1},{"z":2}]},{"y":[]},{"y":[{"z":3}]},{}],
"items":[{"metadata":{"name":"n1","labels":{"k":"v"}},"status":{"phase":"Running"}},{"metadata":{"name":"n2"},"status":{"phase":"Pending"}},{"metadata":{"name":"n3"},"status":{}},{"metadata":{},"status":{"phase":"Failed"}}]}`,
}

// s51Exprs are run on every s51Docs object.
var s51Exprs = []string{
	// quoted keys
	`{.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']}`,
	`{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`,
	`{.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]}`,
	`{.metadata.annotations['a.b/c-d_e']}`, `{.metadata.annotations.a\.b/c-d_e}`, `{.metadata.annotations['x/y.z']}`,
	`{.metadata.annotations['foo.bar']}`, `{.metadata.annotations.foo\.bar}`, `{.metadata.annotations.foo}`, `{['foo.bar']}`, `{['foo.baz']}`, `{['foo.baz.qux']}`, `{['foo.baz.qux'][1]}`,
	`{.metadata.annotations['prometheus.io/port']}`, `{.metadata.annotations.prometheus\.io/port}`,
	`{.metadata.annotations.k:v}`, `{.metadata.annotations['k:v']}`, `{.metadata.annotations['a=b']}`, `{.metadata.annotations.a=b}`, `{.metadata.annotations['a(b)']}`, `{.metadata.annotations.a(b)}`, `{.metadata.annotations.a!b}`, `{.metadata.annotations.a<b}`,
	`{.metadata.annotations['-1']}`, `{.metadata.annotations.-1}`, `{.metadata.annotations.0}`, `{.metadata.annotations['0']}`, `{.metadata.annotations[0]}`, `{.metadata.annotations.true}`, `{.metadata.annotations.null}`, `{.metadata.annotations.1e3}`, `{.metadata.annotations['1e3']}`,
	`{.metadata.annotations['a,b']}`, `{.metadata.annotations.a\,b}`, `{.metadata.annotations['a]b']}`, `{.metadata.annotations.a\]b}`,
	`{.metadata.labels['app.kubernetes.io/name','app']}`, `{.metadata.labels['app','foo.bar']}`, `{.metadata.labels['foo.bar']}`, `{.metadata.labels.foo\.bar}`,
	`{.metadata.ownerReferences[?(@.controller==true)]['kind','name']}`, `{.metadata.ownerReferences[*]['kind']}`, `{.metadata.ownerReferences[0]['kind','name','missing']}`,
	`{.spec.containers[*].env[?(@.value=="")].name}`, `{.spec.containers[*].env[?(@.value)].name}`, `{.spec.containers[*].env[?(@.value!="1")].name}`, `{.spec.containers[*].env[?(@.value>"")].name}`,
	`{.spec.containers[*].ports[?(@.name)].containerPort}`, `{.spec.containers[*].ports[?(@.name=="https")].containerPort}`, `{.spec.containers[0].ports[-1:]}`,
	`{.status.conditions[?(@.reason)].type}`, `{.status.conditions[?(@.status=="True")]['type']}`,
	`{.keys['日本']}`, `{.keys.日本}`, `{.keys['🚀']}`, `{.keys.🚀}`, `{.keys['a b']}`, `{.keys.a\ b}`, `{.keys["a\tb"]}`, `{.keys['a\'b']}`, `{.keys["a'b"]}`, `{.keys['a"b']}`, `{.keys["a\"b"]}`, `{.keys.a"b}`, `{.keys.a'b}`,
	`{.keys['{x}']}`, `{.keys.\{x\}}`, `{.keys['[y]']}`, `{.keys.\[y\]}`, `{.keys['é']}`, `{.keys.é}`, `{.keys['']}`, `{.keys}`, `{.keys.*}`, `{.keys[*]}`,
	`{['long']}`, `{.long}`, `{.uni}`, `{.html}`, `{.ctrl}`, `{.sur}`, `{.bs}`, `{.q}`, `{.nl}`, `{.tab}`, `{.arr}`, `{.arr[*]}`, `{.maps}`, `{.maps[*].k}`, `{@}`, `{$}`, `{.arr[-2:]}`,
	`{range .arr[*]}[{@}]{end}`, `{range .maps[*]}{.k}|{@}{"\n"}{end}`,
	// slices on short things
	`{.e[0]}`, `{.e[-1]}`, `{.e[:]}`, `{.e[::2]}`, `{.e[-1:]}`, `{.e[0:0]}`, `{.e[*]}`,
	`{.one[0]}`, `{.one[-1]}`, `{.one[-1:]}`, `{.one[:-1]}`, `{.one[0:1]}`, `{.one[0:1:5]}`, `{.one[::3]}`, `{.one[-1:1]}`, `{.one[1:1]}`, `{.one[1:]}`, `{.one[:1]}`, `{.one[0:]}`, `{.one[-0]}`, `{.one[-0:]}`,
	`{.two[-2]}`, `{.two[-2:]}`, `{.two[-2:-1]}`, `{.two[1:2]}`, `{.two[::1]}`, `{.two[0::2]}`, `{.two[1::2]}`, `{.two[:-1]}`, `{.two[-1:2]}`, `{.two[0:2:2]}`, `{.two[:2:3]}`,
	`{.three[-3:]}`, `{.three[-3::2]}`, `{.three[::2]}`, `{.three[1::]}`, `{.three[::]}`, `{.three[:]}`, `{.three[0,-1]}`, `{.three[-1,0,1]}`, `{.three[2,2]}`, `{.three[0:1,2:3]}`, `{.three[:1,-1:]}`, `{.three[01]}`, `{.three[-01]}`, `{.three[0:02]}`,
	`{.s[0]}`, `{.s[0:2]}`, `{.s[*]}`, `{.s[-1:]}`, `{.m[0]}`, `{.m[0:1]}`, `{.m[*]}`, `{.m[:]}`, `{.em[*]}`, `{.em}`, `{.e}`, `{.n[*]}`, `{.t[0]}`, `{.z[:]}`,
	`{.lol[*][0]}`, `{.lol[*][-1]}`, `{.lol[*][1:]}`, `{.lol[1:][0]}`, `{.lol[-1][-2:]}`, `{.lol[?(@[1])]}`, `{.lol[?(@[0]==1)]}`, `{.lol[?(@[-1]==2)]}`,
	`{.los[?(@)]}`, `{.los[?(@=="")]}`, `{.los[?(@>"")]}`, `{.lom[?(@.a)]}`, `{.lom[?(@.a[0])]}`, `{.lom[*].a}`, `{.lom[*].a[*]}`, `{.lom[?(@.a!=1)]}`,
	`{range .lol[*]}{range @[*]}{@},{end};{end}`, `{range .lom[*]}<{.a}>{end}`, `{range .m}{@}{end}`, `{range .m.*}{@}{end}`, `{range .em}{@}{end}`, `{range .e}{@}{end}`, `{range .e[*]}{@}{end}`,
	// numbers
	`{.exp} {.expf} {.expneg} {.bigE} {.pct} {.one0} {.negz} {.negzf} {.negzexp}`, `{.p1} {.p2} {.p3}`, `{.e21} {.e20} {.e22}`, `{.big} {.js} {.min} {.max} {.over} {.under}`,
	`{.fmax} {.den} {.e7} {.e6} {.e5} {.huge} {.frac}`, `{.list}`, `{.list[*]}`, `{.objs}`, `{.objs[*].v}`, `{range .list[*]}{@};{end}`,
	`{.list[?(@==1000)]}`, `{.list[?(@=="1000")]}`, `{.list[?(@==-0)]}`, `{.list[?(@==0)]}`, `{.list[?(@==true)]}`, `{.list[?(@=="true")]}`, `{.list[?(@=="null")]}`, `{.list[?(@>999)]}`, `{.list[?(@<0)]}`,
	`{.list[?(@==9223372036854775807)]}`, `{.list[?(@==9223372036854775808)]}`, `{.list[?(@>=9223372036854775807)]}`, `{.list[?(@==-1)]}`, `{.list[?(@!=-1)]}`, `{.list[?(@==1.5)]}`, `{.list[?(@==0.1)]}`,
	`{.objs[?(@.v==1000)].v}`, `{.objs[?(@.v=="1000")].v}`, `{.objs[?(@.v==1)].v}`, `{.objs[?(@.v==-0)].v}`, `{.objs[?(@.v==0)].v}`, `{.objs[?(@.v)].v}`, `{.objs[?(@.v==true)].v}`, `{.objs[?(@.v!=true)].v}`,
	`{.objs[?(@.v>1)].v}`, `{.objs[?(@.v<1)].v}`, `{.objs[?(@.v>=1)].v}`, `{.objs[?(@.v<=0)].v}`, `{.objs[?(@.v==9223372036854775807)].v}`, `{.objs[?(@.v<-9223372036854775807)].v}`, `{.objs[?(@.v>"1")].v}`,
	`{.objs[?(@.w==1)].w}`, `{.objs[?(@.missing==1)].v}`, `{.objs[?(@.missing)].v}`, `{.objs[?(@.missing!=1)].v}`, `{.objs[?(1==@.v)].v}`, `{.objs[?(@.v==@.v)].v}`, `{.objs[?(@.v!=@.w)].v}`,
	`{.objs[?(@.v==1.0)].v}`, `{.objs[?(@.v==+1)].v}`, `{.objs[?(@.v=="")].v}`,
	// descent & filters
	`{..a}`, `{..a[0]}`, `{..a[*]}`, `{..a[?(@.a)]}`, `{..a[?(@.a==2)]}`, `{..[?(@.a)]}`, `{..[?(@.z)]}`, `{..[?(@.z>1)].z}`, `{..y[?(@.z)].z}`, `{..z}`, `{..*}`, `{..[*]}`, `{..}`,
	`{.x[*].y[*].z}`, `{.x[*].y[0].z}`, `{.x[*].y[-1].z}`, `{.x[?(@.y[0].z==3)].y}`, `{.x..z}`, `{.a..a}`, `{.a.a..b}`, `{.a..c.a[1].a}`,
	`{.items[*]['metadata.name','status.phase']}`, `{.items[*]['metadata.name']}`, `{.items[*]['status.phase','metadata.name']}`, `{range .items[*]}{['metadata.name','status.phase']}{"\n"}{end}`,
	`{range .items[*]}{.metadata.name}:{range .metadata.labels.*}{@}{end};{end}`, `{range .items[?(@.status.phase)]}{.metadata.name}{end}`, `{range .items[*]}{.metadata.name}{range .status}[{.phase}]{end}{end}`,
	`{.items[?(@.metadata.labels.k=="v")].metadata.name}`, `{.items[?(@.metadata.name)].metadata.name}`, `{.items[?(@.status.phase!="Running")].metadata.name}`, `{.items[?(@.metadata.name>"n1")].status.phase}`,
	`{ .items[0].metadata.name }`, `{  .items[0].metadata.name}`, `{range  .items[*] }{ .metadata.name }{ end }`, `{.items[ 0 ].metadata.name}`, `{.items[?( @.metadata.name == "n1" )].status.phase}`,
	// arrays only
	`{..[?(@[0])]}`, `{..[?(@[1])]}`, `{..[0]}`, `{..[-1]}`, `{..[1:]}`, `{[*][0]}`, `{[0][1][1][0]}`, `{[*][*][*]}`, `{[?(@[0])]}`, `{[?(@[0][0])]}`, `{[-1:]}`, `{[::2]}`, `{range @[*]}{@}|{end}`, `{range [*]}{range [*]}{@}{end}{end}`,
	// dups
	`{.a}`, `{.a.x}`, `{.a.y}`, `{.b}`, `{.b[0]}`, `{.c}`, `{.d}`, `{.d.e}`, `{.d.e.f}`, `{.d.e.g}`, `{.list[*].k}`, `{.list[?(@.k)].j}`, `{.list[?(@.k==2)]}`, `{..k}`, `{..f}`,
}

// decodeDocs decodes docs as Kubernetes does (integers as int64) and as
// encoding/json does (float64), and returns their names in order.
func decodeDocs(t *testing.T, docs map[string]string) (names []string, objs, objsF map[string]any) {
	t.Helper()
	objs, objsF = map[string]any{}, map[string]any{}
	for name, doc := range docs {
		var o, f any
		if err := k8sjson.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := json.Unmarshal([]byte(doc), &f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		objs[name], objsF[name] = o, f
		names = append(names, name)
	}
	slices.Sort(names)
	return names, objs, objsF
}

// TestS51MatchesClientGo runs s51Exprs and generated expressions and templates on s51Docs
// through probeOne: client-go (AllowMissingKeys true and false), kindex on the decoded
// objects (int64 and float64 numbers), on the raw JSON, indexed and re-encoded, and on the
// objects projected on Fields. Where client-go succeeds, kindex must print the same or
// differ as doc.go says.
func TestS51MatchesClientGo(t *testing.T) {
	names, objs, objsF := decodeDocs(t, s51Docs)
	for _, name := range names {
		probeDocs[name] = s51Docs[name] // for probeVariant
	}
	t.Cleanup(func() {
		for _, name := range names {
			delete(probeDocs, name)
		}
	})
	st := &probeStats{docKinds: map[string]int{}}
	for _, name := range names {
		for _, expr := range s51Exprs {
			probeOne(t, st, name, expr, objs[name], objsF[name], []byte(s51Docs[name]))
		}
	}
	g := &probeGen{r: rand.New(rand.NewPCG(51, 51))}
	for range 2000 {
		name := g.pick(names)
		expr := "{" + g.path(objs[name]) + "}"
		if g.r.IntN(3) == 0 {
			expr = g.template(objs[name], 0)
		}
		probeOne(t, st, name, expr, objs[name], objsF[name], []byte(s51Docs[name]))
	}
	t.Logf("%d cases: kindex rejects %d; client-go fails to parse %d, fails %d times, panics %d times; compared %d outputs (%d non-empty): %d differences documented (%v), %d not",
		st.cases, st.kxReject, st.cgParse, st.cgErr, st.cgPanic, st.compared, st.nonEmpty, st.documented, st.docKinds, st.mismatch)
	for _, f := range st.failures {
		t.Error(f)
	}
	if st.compared < st.cases || st.nonEmpty < st.compared/4 {
		t.Errorf("too few meaningful comparisons: %d of %d cases, %d non-empty", st.compared, st.cases, st.nonEmpty)
	}
}

// TestS51ExecuteJSONMatchesClientGo compares ExecuteJSON, on the decoded object and on its
// raw JSON, with client-go's EnableJSONOutput wherever the text outputs agree exactly (no
// wildcard on a map nor descent, whose order is random in client-go): s51Exprs and
// probeHandmade on s51Docs and probeDocs, and generated expressions and templates.
func TestS51ExecuteJSONMatchesClientGo(t *testing.T) {
	bad, checked := 0, 0
	check := func(name, expr string, obj any, raw []byte) {
		if strings.Contains(expr, ".*") || strings.Contains(expr, "..") {
			return
		}
		p, err := Compile(expr)
		if err != nil {
			return
		}
		cgText, err := clientGoOutput(expr, obj, false)
		if err != nil {
			return
		}
		if mine, err := p.ExecuteString(obj); err != nil || mine != cgText {
			return
		}
		cgJSON, err := clientGoOutput(expr, obj, true)
		if err != nil {
			return // client-go panics on a null current node (<no value>)
		}
		checked++
		for _, in := range []any{obj, JSON(raw)} {
			var b bytes.Buffer
			if err := p.ExecuteJSON(&b, in); err != nil || b.String() != cgJSON {
				if bad++; bad <= 20 {
					t.Errorf("%s on %s (%T): ExecuteJSON %q, %v; client-go %q", expr, name, in, b.String(), err, cgJSON)
				}
			}
		}
	}
	names, objs, _ := decodeDocs(t, s51Docs)
	docs := map[string]string{}
	for _, name := range names {
		docs[name] = s51Docs[name]
	}
	for name, doc := range probeDocs {
		docs[name] = doc
		objs[name] = decode(t, doc)
	}
	for name, doc := range docs {
		for _, expr := range append(slices.Clone(s51Exprs), probeHandmade...) {
			check(name, expr, objs[name], []byte(doc))
		}
	}
	g := &probeGen{r: rand.New(rand.NewPCG(51, 52))}
	for i := range 3000 {
		name := g.pick(names)
		expr := g.template(objs[name], 0)
		if i%2 == 0 {
			expr = "{" + g.path(objs[name]) + "}"
		}
		check(name, expr, objs[name], []byte(s51Docs[name]))
	}
	if checked < 5000 {
		t.Errorf("only %d comparisons", checked)
	}
}

// s51Encode writes x (decoded with json.Number) as JSON in other forms: white space of
// every kind JSON allows around every token, members in shuffled order, keys sometimes
// escaped as \uXXXX, integers sometimes written as 5.0, 5e0, 5E+00 or 50e-1 (floats for
// Kubernetes' decoder, as for kindex), floats in other notations.
func s51Encode(r *rand.Rand, b []byte, x any) []byte {
	ws := func() string {
		return []string{"", "", " ", "\r", "\t", "\n", "\r\n", " \t\r\n "}[r.IntN(8)]
	}
	b = append(b, ws()...)
	switch t := x.(type) {
	case map[string]any:
		b = append(b, '{')
		ks := sortedKeys(t)
		r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
		for i, k := range ks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, ws()...)
			if r.IntN(3) == 0 {
				b = escString(b, k)
			} else {
				kb, _ := json.Marshal(k)
				b = append(b, kb...)
			}
			b = append(b, ws()...)
			b = append(b, ':')
			b = s51Encode(r, b, t[k])
		}
		b = append(b, ws()...)
		b = append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			b = s51Encode(r, b, e)
		}
		b = append(b, ws()...)
		b = append(b, ']')
	case json.Number:
		s := string(t)
		if i, err := t.Int64(); err == nil {
			switch r.IntN(6) {
			case 0:
				s += ".0"
			case 1:
				s += "e0"
			case 2:
				s += "E+00"
			case 3:
				if i != 0 {
					s += "0e-1"
				}
			}
		} else if f, err := t.Float64(); err == nil {
			switch r.IntN(4) {
			case 0:
				s = strconv.FormatFloat(f, 'E', -1, 64)
			case 1:
				s = strconv.FormatFloat(f, 'e', 30, 64)
			case 2:
				s = strconv.FormatFloat(f, 'f', -1, 64)
			}
		}
		b = append(b, s...)
	default:
		j, _ := json.Marshal(x)
		b = append(b, j...)
	}
	return append(b, ws()...)
}

// TestS51RawFormsMatchDecoded: the raw JSON of s51Docs and probeDocs re-encoded by
// s51Encode evaluates, as a JSON and as an IndexedJSON with spans of every value, to what its
// decoding by Kubernetes' decoder does.
func TestS51RawFormsMatchDecoded(t *testing.T) {
	docs, names := s51AllDocs()
	r := rand.New(rand.NewPCG(51, 1))
	exprs := append(slices.Clone(s51Exprs), probeHandmade...)
	bad := 0
	for _, name := range names {
		d := json.NewDecoder(strings.NewReader(docs[name]))
		d.UseNumber()
		var x any
		if err := d.Decode(&x); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			raw := s51Encode(r, nil, x)
			var obj any
			if err := k8sjson.Unmarshal(raw, &obj); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, raw)
			}
			ij := IndexedJSON{Doc: raw, Spans: BuildSpans(nil, raw, 1)}
			for _, expr := range exprs {
				p, err := Compile(expr)
				if err != nil {
					continue
				}
				want, werr := p.ExecuteString(obj)
				got, gerr := p.ExecuteString(JSON(raw))
				got2, gerr2 := p.ExecuteString(ij)
				if got != want || got2 != want || (gerr == nil) != (werr == nil) || (gerr2 == nil) != (werr == nil) {
					if bad++; bad <= 20 {
						t.Errorf("%s on %s: raw %q, %v; indexed %q, %v; decoded %q, %v\n%.500s", expr, name, got, gerr, got2, gerr2, want, werr, raw)
					}
				}
			}
		}
	}
}

// s51AllDocs returns s51Docs and probeDocs in one map, with its keys in order.
func s51AllDocs() (map[string]string, []string) {
	docs := map[string]string{}
	for k, v := range s51Docs {
		docs[k] = v
	}
	for k, v := range probeDocs {
		docs[k] = v
	}
	names := make([]string, 0, len(docs))
	for k := range docs {
		names = append(names, k)
	}
	sort.Strings(names)
	return docs, names
}

// TestS51IndexedJSONSpanSizes: an IndexedJSON whose spans were built at any minimum size
// evaluates as its document does (Eval, Each, ExecuteString), on s51Docs, probeDocs,
// dupDocs, their re-encodings (probeVariant) and documents with keys spelled with escapes.
func TestS51IndexedJSONSpanSizes(t *testing.T) {
	docs, names := s51AllDocs()
	for i, d := range dupDocs {
		docs[fmt.Sprint("dup", i)] = d
		names = append(names, fmt.Sprint("dup", i))
	}
	docs["esc1"] = `{"a":1,"\u0061":2,"pad":"` + strings.Repeat("x", 200) + `"}`
	docs["esc2"] = `{"x":{"\u0061":1,"b":[1,2,3],"a":2},"y":[{"k\u0022":1,"k\"":2}]}`
	docs["esc3"] = `{"a\/b":1,"a/b":2,"c":{"d\u002ee":1,"d.e":2}}`
	names = append(names, "esc1", "esc2", "esc3")
	exprs := append(append(slices.Clone(s51Exprs), probeHandmade...), dupExprs...)
	exprs = append(exprs, `{['a/b']}`, `{.c['d.e']}`, `{.x.a}`, `{.y[0]['k"']}`, `{.a}`)
	var paths []*Path
	for _, expr := range exprs {
		if p, err := Compile(expr); err == nil {
			paths = append(paths, p)
		}
	}
	bad := 0
	for _, name := range names {
		raws := [][]byte{[]byte(docs[name])}
		if _, ok := probeDocs[name]; ok {
			raws = append(raws, probeVariant(name, 3))
		}
		for _, raw := range raws {
			for _, p := range paths {
				want, werr := p.ExecuteString(JSON(raw))
				wv, _ := p.Eval(JSON(raw))
				for _, size := range []int{1, 64} {
					ij := IndexedJSON{Doc: raw, Spans: BuildSpans(nil, raw, size)}
					got, gerr := p.ExecuteString(ij)
					gv, _ := p.Eval(ij)
					var each []Value
					eerr := p.Each(ij, func(v Value) bool { each = append(each, v.Clone()); return true })
					if got != want || (gerr == nil) != (werr == nil) || joined(gv) != joined(wv) || (eerr == nil) != (werr == nil) || werr == nil && joined(each) != joined(wv) {
						if bad++; bad <= 20 {
							t.Errorf("%s on %s (spans from %d bytes): %q, %v, Eval %s, Each %s; on the JSON %q, %v, Eval %s",
								p, name, size, got, gerr, joined(gv), joined(each), want, werr, joined(wv))
						}
					}
				}
			}
		}
	}
}

// TestS51FilterNumbersExact: filters comparing numbers written every way JSON allows (1e3,
// 1000.0, -0, 0e5, 2^53+1, int64's ends and beyond, 20 and 30 digits, subnormals) with
// literals of every form select what exact arithmetic on the decoded values selects, on the
// decoded document, its JSON, an IndexedJSON and with the generic evaluator.
func TestS51FilterNumbersExact(t *testing.T) {
	nums := []string{"1e3", "1E3", "1000", "1000.0", "10e2", "100e1", "0.1e4", "1000e0", "1000.000000000000000000001", "999.9999999999999999999",
		"-0", "-0.0", "0e5", "0", "0.0", "-0e-5", "9007199254740993", "9007199254740992", "9007199254740993.0", "9007199254740992.5",
		"9223372036854775807", "9223372036854775808", "9223372036854775807.0", "9223372036854775806.5", "-9223372036854775808", "-9223372036854775809",
		"-9223372036854775808.0", "0.30000000000000004", "0.1", "5e-324", "1e-400", "1", "1.0", "1.5", "-1", "-1.5", "2", "123456789012345678901234567890",
		"1e21", "1e20", "100000000000000000000", "12345678901234567890", "1.00000000000000000001", "0.99999999999999999999", "18446744073709551615", "-18446744073709551616"}
	lits := []string{"1000", "1000.0", "-0", "-0.0", "0", "+0", "01", "1.50", "1.5", "1", "1.0", "+1", "-1", "9007199254740993", "9007199254740992",
		"9007199254740993.0", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "0.1", "0.30000000000000004",
		"1000000000000000000000", "100000000000000000000", "12345678901234567890", "123456789012345678901234567890", "0.00000000000000000000000000001",
		"999.9999999999999999999", "1.00000000000000000001"}
	exact := func(v Value) *big.Rat {
		switch x := v.Interface().(type) {
		case int64:
			return new(big.Rat).SetInt64(x)
		case float64:
			return new(big.Rat).SetFloat64(x)
		}
		t.Fatalf("%s is not a number", v)
		return nil
	}
	var b strings.Builder
	b.WriteString(`{"a":[`)
	for i, n := range nums {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"i":%d,"v":%s}`, i, n)
	}
	b.WriteString(`],"l":[` + strings.Join(nums, ",") + `]}`)
	doc := []byte(b.String())
	obj := decode(t, b.String())
	vals, err := MustCompile(`{.a[*].v}`).Eval(obj)
	if err != nil || len(vals) != len(nums) {
		t.Fatal(err, len(vals))
	}
	ins := []any{obj, JSON(doc), IndexedJSON{Doc: doc, Spans: BuildSpans(nil, doc, 1)}}
	for _, lit := range lits {
		lv, err := MustCompile(`{` + lit + `}`).Eval(nil)
		if err != nil {
			t.Fatal(err)
		}
		l := exact(lv[0])
		for _, op := range []string{"==", "!=", "<", "<=", ">", ">="} {
			var byIndex, byValue []string
			for i, v := range vals {
				c := exact(v).Cmp(l)
				if map[string]bool{"==": c == 0, "!=": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op] {
					byIndex, byValue = append(byIndex, fmt.Sprint(i)), append(byValue, v.String())
				}
			}
			mirror := map[string]string{"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
			for expr, want := range map[string][]string{
				`{.a[?(@.v` + op + lit + `)].i}`:     byIndex,
				`{.a[?(` + lit + mirror + `@.v)].i}`: byIndex,
				`{.l[?(@` + op + lit + `)]}`:         byValue,
			} {
				p := MustCompile(expr)
				for _, q := range []*Path{p, generic(p)} {
					for _, in := range ins {
						if got, err := q.ExecuteString(in); err != nil || got != strings.Join(want, " ") {
							t.Errorf("%s (%T): %q, %v; want %q", expr, in, got, err, strings.Join(want, " "))
						}
					}
				}
			}
		}
	}
}

// TestS51DocumentedDifferences checks differences doc.go documents, on cases the
// comparison tests do not reach: a quoted key takes Go's escapes (client-go drops the
// backslash), null and 1e3 are not literals (client-go reads identifiers and fails on them
// when the filter runs), and the empty expression is rejected (client-go prints nothing).
func TestS51DocumentedDifferences(t *testing.T) {
	_, objs, _ := decodeDocs(t, s51Docs)
	for _, c := range []struct{ doc, expr, want string }{
		{"s51-text", `{.keys['a\tb']}`, "tabkey"},
		{"s51-text", `{.keys["a\tb"]}`, "tabkey"},
		{"s51-text", `{.keys['e\u0301']}`, "e2"},
	} {
		got, err := MustCompile(c.expr).ExecuteString(objs[c.doc])
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.expr, got, err, c.want)
		}
		if cg := runCG(c.expr, objs[c.doc], true); cg.err == nil && cg.out == c.want {
			t.Errorf("%s: client-go agrees (%q)", c.expr, cg.out)
		}
	}
	for _, c := range []struct{ doc, expr string }{
		{"s51-nums", `{.objs[?(@.v==null)].v}`},
		{"s51-nums", `{.objs[?(@.v==1e3)].v}`},
		{"s51-short", `{.lom[?(@.a==null)]}`},
		{"s51-nums", ``},
	} {
		_, err := Compile(c.expr)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q compiles: %v", c.expr, err)
		}
		cg := runCG(c.expr, objs[c.doc], true)
		if c.expr == "" {
			if cg.err != nil || cg.out != "" {
				t.Errorf("client-go on the empty expression: %q, %v", cg.out, cg.err)
			}
		} else if cg.err == nil {
			t.Errorf("%s: client-go succeeds (%q)", c.expr, cg.out)
		}
	}
}

// TestS51SyntaxErrorCaretCountsCharacters: the caret of a SyntaxError is under the
// offending character when characters before it take several bytes (it was a column per
// byte: under {.ключ[}, four columns right of the '}'), and an excerpt of a long
// expression does not start or end inside a character.
func TestS51SyntaxErrorCaretCountsCharacters(t *testing.T) {
	for _, c := range []struct {
		expr, excerpt, caret string
	}{
		{"{.ключ[}", "\t{.ключ[}", "\t       ^"},
		{"{.a}{.é\tb x}", "\t{.a}{.é b x}", "\t        ^"},
		{"{.a." + strings.Repeat("é", 60) + " x}", "\t..." + strings.Repeat("é", 15) + " x}", "\t" + strings.Repeat(" ", 19) + "^"},
		{"{.b x" + strings.Repeat("é", 60) + "}", "\t{.b x" + strings.Repeat("é", 15) + "...", "\t    ^"},
	} {
		_, err := Compile(c.expr)
		if err == nil {
			t.Fatalf("%q compiles", c.expr)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != 3 || lines[1] != c.excerpt || lines[2] != c.caret || !utf8.ValidString(err.Error()) {
			t.Errorf("%q: %q; want excerpt %q and caret %q", c.expr, err.Error(), c.excerpt, c.caret)
		}
	}
}
