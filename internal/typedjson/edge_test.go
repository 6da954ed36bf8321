package typedjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Hand-written edge cases, each decoded into several targets and compared with
// sigs.k8s.io/json (same_test.go).

type edgeInner struct {
	A int `json:"a"`
	B string
}

type Embedded struct {
	E      string `json:"e"`
	Shadow string `json:"shadow"`
	Deep   string `json:"deep"`
}

type embeddedPtr struct {
	P string `json:"p"`
}

type EmbeddedPtr struct {
	Q    string `json:"q"`
	Deep string `json:"deep"`
}

type twinA struct{ Twin string }
type twinB struct{ Twin string }

type textKey string

func (k *textKey) UnmarshalText(b []byte) error {
	if string(b) == "bad" {
		return errors.New("bad key")
	}
	*k = textKey("k:" + string(b))
	return nil
}

type textVal struct{ S string }

func (v *textVal) UnmarshalText(b []byte) error {
	if string(b) == "bad" {
		return errors.New("bad text")
	}
	v.S = "t:" + string(b)
	return nil
}

type jsonVal struct{ Raw string }

func (v *jsonVal) UnmarshalJSON(b []byte) error {
	if string(b) == `"bad"` {
		return errors.New("bad json")
	}
	v.Raw = string(b)
	return nil
}

type myInt int

// textStr and jsonStr are string kinds with a method: a ,string tag applies to them, and
// the quoted text goes to the method. jsonKey, a map key with both methods, gets the key
// through UnmarshalJSON, quotes included.
type textStr string

func (v *textStr) UnmarshalText(b []byte) error {
	if string(b) == "bad" {
		return errors.New("bad text")
	}
	*v = textStr("t:" + string(b))
	return nil
}

type jsonStr string

func (v *jsonStr) UnmarshalJSON(b []byte) error {
	if string(b) == `"bad"` {
		return errors.New("bad json")
	}
	*v = jsonStr("j:" + string(b))
	return nil
}

type jsonKey string

func (k *jsonKey) UnmarshalText(b []byte) error {
	*k = jsonKey("t:" + string(b))
	return nil
}

func (k *jsonKey) UnmarshalJSON(b []byte) error {
	if string(b) == `"bad"` {
		return errors.New("bad key")
	}
	*k = jsonKey("j:" + string(b))
	return nil
}

type edge struct {
	Str        string            `json:"str"`
	Int        int               `json:"int"`
	I8         int8              `json:"i8"`
	I32        int32             `json:"i32"`
	U16        uint16            `json:"u16"`
	U          uint              `json:"u"`
	F32        float32           `json:"f32"`
	F64        float64           `json:"f64"`
	B          bool              `json:"b"`
	Bytes      []byte            `json:"bytes"`
	Arr        [2]int            `json:"arr"`
	Sl         []int             `json:"sl"`
	Strs       []string          `json:"strs"`
	Structs    []edgeInner       `json:"structs"`
	PInt       *int              `json:"pint"`
	PP         **string          `json:"pp"`
	M          map[string]int    `json:"m"`
	MS         map[string]string `json:"ms"`
	MI         map[int]string    `json:"mi"`
	MU         map[uint8]bool    `json:"mu"`
	MT         map[textKey]int   `json:"mt"`
	MJ         map[jsonKey]int   `json:"mj"`
	QT         textStr           `json:"qt,string"`
	PQT        *textStr          `json:"pqt,string"`
	QJ         jsonStr           `json:"qj,string"`
	MyInt      myInt             `json:"myint"`
	Any        any               `json:"any"`
	Num        json.Number       `json:"num"`
	Quoted     int               `json:"quoted,string"`
	QStr       string            `json:"qstr,string"`
	QB         *bool             `json:"qb,string"`
	QF         float64           `json:"qf,string"`
	QNum       json.Number       `json:"qnum,string"`
	QIgnored   []int             `json:"qignored,string"`
	Skip       string            `json:"-"`
	Dash       string            `json:"-,"`
	NoTag      string
	BadTag     string `json:"a\\b"`
	unexported string
	Inner      edgeInner  `json:"inner"`
	PInner     *edgeInner `json:"pinner"`
	Embedded
	*embeddedPtr
	*EmbeddedPtr
	twinA
	twinB
	Shadow   int                  `json:"shadow"`
	Raw      json.RawMessage      `json:"raw"`
	RawExt   runtime.RawExtension `json:"rawExt"`
	Time     metav1.Time          `json:"time"`
	PTime    *metav1.Time         `json:"ptime"`
	Micro    metav1.MicroTime     `json:"micro"`
	IOS      intstr.IntOrString   `json:"ios"`
	PIOS     *intstr.IntOrString  `json:"pios"`
	Q        resource.Quantity    `json:"q"`
	PQ       *resource.Quantity   `json:"pq"`
	RL       corev1.ResourceList  `json:"rl"`
	Text     textVal              `json:"text"`
	PText    *textVal             `json:"ptext"`
	JV       jsonVal              `json:"jv"`
	PJV      *jsonVal             `json:"pjv"`
	Stringer fmt.Stringer         `json:"stringer"`
	Ch       chan int             `json:"ch"`
	Complex  complex64            `json:"complex"`
	Secret   map[string][]byte    `json:"secret"`
	Nested   map[string][]string  `json:"nested"`
}

var edgeInputs = []string{
	// Syntax.
	``, ` `, `{`, `}`, `[`, `{"str"`, `{"str":`, `{"str":"x"`, `{"str":"x",}`, `{"str" "x"}`, `{str:"x"}`,
	`{"str":"x"} x`, `{"str":"x"}}`, `{} {}`, "\ufeff{}", `{"str":'x'}`, `[1,]`, `[,1]`, `{,}`, `nul`, `nulls`,
	`tru`, `falsey`, `01`, `-`, `-a`, `1.`, `1.e3`, `1e`, `1e+`, `.5`, `+1`, `NaN`, `Infinity`, `0x10`,
	`"\x01"`, `"\'"`, `"\u12"`, `"\u12g4"`, `"\q"`, `"abc`, "\"a\tb\"", `{"a":1}/**/`, `[1 2]`, `{"a" : 1 , "b":2 }`,
	"\t\n\r {\"str\" \t:\n \"x\" \r}\n",
	// Empty values and nulls.
	`{}`, `[]`, `null`, `""`, `0`, `true`, `false`, `{"str":null,"int":null,"b":null,"bytes":null,"arr":null,"sl":null,"pint":null,"pp":null,"m":null,"any":null,"num":null,"inner":null,"pinner":null,"raw":null,"rawExt":null,"time":null,"ptime":null,"micro":null,"ios":null,"pios":null,"q":null,"pq":null,"rl":null,"text":null,"ptext":null,"jv":null,"pjv":null,"stringer":null,"ch":null,"complex":null,"secret":null}`,
	`{"sl":[],"strs":[],"structs":[],"m":{},"ms":{},"arr":[],"bytes":"","any":{},"inner":{},"pinner":{},"rl":{},"secret":{},"nested":{}}`,
	// Strings and escapes.
	`{"str":"plain"}`, `{"str":"\"\\\/\b\f\n\r\t"}`, `{"str":"\u00e9\u4e2d\uD83D\uDE00"}`, `{"str":"\uD83D"}`, `{"str":"\uDE00\uD83D"}`,
	`{"str":"\uD83Dx"}`, `{"str":"\uD83D\u0041"}`, `{"str":"\uD83D\uD83D\uDE00"}`, "{\"str\":\"\xff\xfe\"}", "{\"str\":\"a\xc3\"}",
	"{\"str\":\"\xed\xa0\x80\"}", `{"str":"é中😀"}`, `{"s\u0074r":"escaped key"}`, `{"st\u0072":1}`, "{\"str\xff\":\"x\"}",
	`{"strs":["a","\u0062",""],"any":"\uD800"}`,
	// Numbers.
	`{"int":9223372036854775807,"u":18446744073709551615}`, `{"int":9223372036854775808}`, `{"int":-9223372036854775808}`,
	`{"int":-9223372036854775809}`, `{"i8":127}`, `{"i8":128}`, `{"i8":-129}`, `{"u16":65536}`, `{"u":-1}`, `{"u":-0}`,
	`{"int":-0}`, `{"int":1.0}`, `{"int":1e2}`, `{"int":1E2}`, `{"f64":-0}`, `{"f64":-0.0}`, `{"f64":1e308}`, `{"f64":1e309}`,
	`{"f64":-1e309}`, `{"f64":1e-400}`, `{"f32":3.4e38}`, `{"f32":3.5e38}`, `{"f32":1.5}`, `{"f64":0.1}`, `{"f64":123456789012345678901234567890}`,
	`{"f64":12345678901234567}`, `{"f64":123456789012345}`, `{"f64":-7}`, `{"i32":2147483648}`, `{"myint":5}`, `{"myint":"5"}`,
	`{"any":[1,-1,1.5,1e3,-0,-0.0,9223372036854775807,9223372036854775808,-9223372036854775808,-9223372036854775809,1e400]}`,
	`{"any":1e400}`, `{"any":[0,1E-2,12.5e+3,123456789012345678]}`,
	`{"num":12.5e3}`, `{"num":"12"}`, `{"num":"1.5e-3"}`, `{"num":"abc"}`, `{"num":""}`, `{"num":"01"}`, `{"num":true}`,
	// Wrong types.
	`{"str":1}`, `{"str":true}`, `{"str":{}}`, `{"str":[]}`, `{"int":"1"}`, `{"int":true}`, `{"int":{}}`, `{"b":1}`, `{"b":"true"}`,
	`{"bytes":1}`, `{"bytes":[1,2,255]}`, `{"bytes":[256]}`, `{"bytes":"aGVsbG8="}`, `{"bytes":"aGVsbG8"}`, `{"bytes":"a\nGVsbG8="}`,
	`{"bytes":"!!!"}`, `{"arr":[1]}`, `{"arr":[1,2,3]}`, `{"arr":[1,"x",3]}`, `{"arr":[1,2,"x"]}`, `{"arr":"ab"}`, `{"sl":{}}`,
	`{"sl":"x"}`, `{"sl":[1,"x"]}`, `{"m":[]}`, `{"m":{"a":"x"}}`, `{"m":{"a":1,"b":null}}`, `{"inner":[]}`, `{"inner":"x"}`,
	`{"inner":1}`, `{"pinner":1}`, `{"pint":"1"}`, `{"pp":"s"}`, `{"pp":null}`, `{"structs":[{"a":1},{"a":"x"}]}`,
	`{"structs":[{"a":1},null,{"B":"b"}]}`, `{"ch":1}`, `{"complex":1}`, `{"stringer":"x"}`, `{"stringer":{}}`, `{"stringer":1}`,
	// Maps and keys.
	`{"mi":{"1":"a","-2":"b"}}`, `{"mi":{"x":"a"}}`, `{"mi":{"+1":"a"}}`, `{"mi":{"01":"a"}}`, `{"mi":{"9223372036854775808":"a"}}`,
	`{"mu":{"255":true}}`, `{"mu":{"256":true}}`, `{"mu":{"-0":true}}`, `{"mu":{"+1":true}}`, `{"mt":{"a":1,"b\u0062":2}}`,
	`{"mt":{"bad":1}}`, `{"mj":{"a":1,"b\u0062":2}}`, `{"mj":{"bad":1}}`, `{"mj":{"\"q":1}}`, `{"ms":{"a":"x","a":"y","b":null}}`, `{"ms":{"a":1}}`, `{"rl":{"cpu":"100m","memory":"1Gi","x":"1e3"}}`,
	`{"rl":{"cpu":"bogus"}}`, `{"rl":{"cpu":1}}`, `{"rl":{"cpu":null}}`, `{"rl":{"cpu":" 1 "}}`, `{"rl":{"cpu":"1\u004b"}}`,
	`{"secret":{"a":"aGk=","b":null,"c":""}}`, `{"secret":{"a":"%%"}}`, `{"nested":{"a":["x"],"b":[],"c":null}}`,
	`{"any":{"a":{"b":[{"c":null}]},"a":2}}`,
	// Duplicate keys.
	`{"str":"a","str":"b"}`, `{"pinner":{"a":1},"pinner":{"B":"x"}}`, `{"inner":{"a":1},"inner":{"B":"x"}}`,
	`{"m":{"a":1},"m":{"b":2}}`, `{"sl":[1,2,3],"sl":[4]}`, `{"sl":[1,2,3],"sl":[4],"sl":[5,6,7,8]}`, `{"sl":[1],"sl":[]}`,
	`{"structs":[{"a":1,"B":"x"},{"a":2}],"structs":[{"a":3}],"structs":[{"B":"y"},{"B":"z"},{}]}`,
	`{"arr":[1,2],"arr":[3]}`, `{"any":{"a":1},"any":[1]}`, `{"pint":1,"pint":null,"pint":2}`, `{"ios":"a","ios":null}`,
	`{"ios":"a","ios":3}`, `{"q":"1Ki","q":null}`, `{"time":"2024-01-01T00:00:00Z","time":null}`, `{"text":"a","text":null}`,
	`{"bytes":"aGk=","bytes":null}`, `{"rl":{"cpu":"1"},"rl":{"memory":"2"}}`,
	// Case variants must not match; names and tags.
	`{"Str":"x","STR":"y","sTr":"z"}`, `{"str":"x","Str":"y"}`, `{"Int":1,"INT":2}`, `{"notag":"x","NoTag":"y","NOTAG":"z"}`,
	`{"Skip":"x","-":"dash","skip":"y"}`, `{"unexported":"x"}`, `{"BadTag":"x","a\\b":"y"}`, `{"E":"x","e":"y","Embedded":{"e":"z"}}`,
	`{"shadow":1}`, `{"shadow":"x"}`, `{"deep":"x"}`, `{"p":"x"}`, `{"q":"1","Q":"2"}`, `{"Twin":"x"}`, `{"embeddedPtr":{"p":"x"}}`,
	`{"EmbeddedPtr":{"q":"x"}}`, `{"A":1,"a":2}`,
	// ,string.
	`{"quoted":"12"}`, `{"quoted":12}`, `{"quoted":"x"}`, `{"quoted":""}`, `{"quoted":null}`, `{"quoted":"null"}`, `{"quoted":"+1"}`,
	`{"quoted":"01"}`, `{"quoted":"1.5"}`, `{"quoted":"-"}`, `{"quoted":" 1"}`, `{"quoted":"1 "}`, `{"quoted":{}}`, `{"quoted":[1]}`,
	`{"quoted":true}`, `{"qstr":"\"x\""}`, `{"qstr":"x"}`, `{"qstr":"\"\\u0041\\'\""}`, `{"qstr":"\"\\q\""}`, `{"qstr":"\"a"}`,
	`{"qstr":"\"\u0001\""}`, `{"qstr":"null"}`, `{"qstr":"nul"}`, `{"qstr":"1"}`, `{"qb":"true"}`, `{"qb":"false"}`,
	`{"qb":"null"}`, `{"qb":null}`, `{"qb":"True"}`, `{"qb":"1"}`, `{"qf":"1e3"}`, `{"qf":"-Inf"}`, `{"qf":"0x1p-2"}`,
	`{"qt":"\"abc\""}`, `{"qt":"abc"}`, `{"qt":"\"bad\""}`, `{"qt":"\"a\\u0062\""}`, `{"qt":"null"}`, `{"qt":null}`, `{"qt":1}`,
	`{"pqt":"\"x\""}`, `{"pqt":"null"}`, `{"pqt":null}`, `{"qj":"\"x\""}`, `{"qj":"12"}`, `{"qj":"null"}`, `{"qj":"\"bad\""}`,
	`{"qf":"1_0"}`, `{"qf":"1e400"}`, `{"qnum":"12"}`, `{"qnum":"1.2.3"}`, `{"qnum":"\"12\""}`, `{"qnum":"\"x\""}`,
	`{"qignored":[1,2]}`, `{"qignored":"[1]"}`,
	// Methods.
	`{"raw":{"a":[1, 2]}}`, `{"raw":"x"}`, `{"raw":1}`, `{"rawExt":{"kind":"X"}}`, `{"rawExt":[1]}`,
	`{"time":"2024-03-01T12:30:45Z"}`, `{"time":"2024-03-01T12:30:45+02:00"}`, `{"time":"2024-03-01T12:30:45.123456789Z"}`,
	`{"time":"2024-03-01"}`, `{"time":"2024-03-01T12:30:45\u005a"}`, `{"time":1}`, `{"time":{}}`, `{"time":""}`,
	`{"ptime":"2024-03-01T12:30:45Z"}`, `{"ptime":"bad"}`, `{"micro":"2024-03-01T12:30:45.123456Z"}`, `{"micro":"2024-03-01T12:30:45Z"}`,
	`{"micro":null}`, `{"ios":"http"}`, `{"ios":8080}`, `{"ios":2147483648}`, `{"ios":-1}`, `{"ios":1.5}`, `{"ios":true}`,
	`{"ios":"h\u0074tp"}`, `{"ios":{}}`, `{"pios":"x"}`, `{"pios":null}`, `{"q":"100m"}`, `{"q":"1.5Gi"}`, `{"q":"0"}`,
	`{"q":"1e3"}`, `{"q":"bogus"}`, `{"q":""}`, `{"q":" 1"}`, `{"q":1}`, `{"q":"1\u004b"}`, `{"q":true}`, `{"pq":"2"}`,
	`{"q":"123456789012345678901234567890"}`, `{"q":"-1.000001"}`, `{"q":"1000000000000000000Ei"}`,
	`{"text":"x"}`, `{"text":"bad"}`, `{"text":1}`, `{"text":{}}`, `{"text":"\u0041"}`, `{"ptext":"y"}`, `{"ptext":null}`,
	`{"jv":"x"}`, `{"jv":"bad"}`, `{"jv":{"a":1}}`, `{"jv":null}`, `{"pjv":null}`, `{"pjv":[1, 2]}`,
	// Interfaces.
	`{"any":{"a":[1,"x",true,null,{"b":2.5}]}}`, `{"any":"x"}`, `{"any":true}`, `{"any":null}`, `{"any":[]}`,
	// Deep nesting.
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"any":` + strings.Repeat(`{"a":`, 9999) + "1" + strings.Repeat("}", 9999) + "}",
	`{"any":` + strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000) + "}",
	`{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}",
}

// edgeTargets are the types each edge input is decoded into.
var edgeTargets = []func() any{
	func() any { return new(edge) },
	func() any { return new(any) },
	func() any { return new(map[string]any) },
	func() any { return new(corev1.Pod) },
	func() any { return new([]int) },
	func() any { return new([]any) },
	func() any { return new(string) },
	func() any { return new(int64) },
	func() any { return new(float64) },
	func() any { return new(*int) },
	func() any { return new([]byte) },
	func() any { return new(json.RawMessage) },
	func() any { return new(json.Number) },
	func() any { return new(metav1.Time) },
	func() any { return new(*metav1.Time) },
	func() any { return new(intstr.IntOrString) },
	func() any { return new(resource.Quantity) },
	func() any { return new(map[string]string) },
	func() any { return new(map[int]int) },
	func() any { return new([3]string) },
	func() any { return new(textVal) },
	func() any { return new(fmt.Stringer) },
	func() any { return new(struct{}) },
}

func TestEdgeCases(t *testing.T) {
	for _, in := range edgeInputs {
		for _, newV := range edgeTargets {
			requireSame(t, []byte(in), newV)
		}
	}
}

// Values already in the target: encoding/json decodes into them (merging structs, maps
// and pointed-to values, reusing slice elements), and so must Unmarshal.
func TestDecodeIntoUsedValues(t *testing.T) {
	prefilled := func() any {
		n, s := 7, "s"
		ps := &s
		return &edge{
			Str: "old", Sl: []int{1, 2, 3}, Structs: []edgeInner{{A: 1, B: "b"}, {A: 2}}, PInt: &n, PP: &ps,
			M: map[string]int{"old": 1}, MS: map[string]string{"old": "x"}, PInner: &edgeInner{A: 9, B: "keep"},
			Any: map[string]any{"old": true}, Embedded: Embedded{E: "e"}, EmbeddedPtr: &EmbeddedPtr{Q: "q"},
			RL: corev1.ResourceList{"old": resource.MustParse("1")}, Bytes: []byte("old"),
		}
	}
	for _, in := range edgeInputs {
		requireSame(t, []byte(in), prefilled)
	}
	for _, in := range []string{`{"a":1}`, `[1,2]`, `"x"`, `null`, `{"metadata":{"name":"x"}}`} {
		for _, newV := range []func() any{
			func() any { var p any = &corev1.Pod{}; return &p },
			func() any { var p any = &edgeInner{B: "keep"}; return &p },
			func() any { var v any = map[string]any{"x": 1}; return &v },
			func() any { var p *int; var v any = &p; return &v },
			func() any { var v any; v = &v; return v }, // a pointer to an interface holding itself
			func() any { var s fmt.Stringer = &strings.Builder{}; return &s },
		} {
			requireSame(t, []byte(in), newV)
		}
	}
}

func TestInvalidTarget(t *testing.T) {
	for _, v := range []any{nil, edge{}, (*edge)(nil), 1} {
		var ie *json.InvalidUnmarshalError
		require.ErrorAs(t, Unmarshal([]byte(`{}`), v), &ie, "%T", v)
		var se *SyntaxError
		require.ErrorAs(t, Unmarshal([]byte(`{`), v), &se, "invalid input is reported first, as encoding/json does")
	}
}

// Errors name where they are: syntax errors their offset, type errors the value, the Go
// type and the field path.
func TestErrors(t *testing.T) {
	var se *SyntaxError
	err := Unmarshal([]byte(`{"str":"x",}`), new(edge))
	require.ErrorAs(t, err, &se)
	assert.Equal(t, int64(11), se.Offset)
	assert.Contains(t, err.Error(), "offset 11")

	err = Unmarshal([]byte(`{"spec":{"containers":[{"name":"a"},{"name":1}]}}`), new(corev1.Pod))
	var te *json.UnmarshalTypeError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "number", te.Value)
	assert.Equal(t, "string", te.Type.String())
	assert.Equal(t, "Container", te.Struct)
	assert.Equal(t, "spec.containers.name", te.Field)
	assert.Equal(t, int64(45), te.Offset)

	err = Unmarshal([]byte(`{"int":1e3}`), new(edge))
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "number 1e3", te.Value)

	err = Unmarshal([]byte(`{"time":"yesterday"}`), new(edge))
	require.Error(t, err, "UnmarshalJSON's own error")
	assert.Contains(t, err.Error(), "yesterday")
}

// The special decoders of metav1.Time, MicroTime, IntOrString and Quantity give what their
// UnmarshalJSON gives, on values and on errors.
func TestSpecialTypes(t *testing.T) {
	values := []string{
		`null`, `""`, `"x"`, `1`, `-1`, `0`, `1.5`, `2147483647`, `2147483648`, `-2147483649`, `true`, `{}`, `[]`, `"\u0041"`,
		`"2024-03-01T12:30:45Z"`, `"2024-03-01T12:30:45.5Z"`, `"2024-03-01T12:30:45.123456Z"`, `"2024-03-01T12:30:45-07:30"`,
		`"2024-02-30T12:30:45Z"`, `"2024-03-01 12:30:45Z"`, `"2024-03-01T12:30:45z"`, `"0000-01-01T00:00:00Z"`,
		`"100m"`, `"1Gi"`, `"1.5"`, `"1e3"`, `"1E3"`, `"0.1m"`, `" 1"`, `"1 "`, `"1\t"`, `"-0"`, `"+1"`, `"1Mi "`, `"5.000"`,
		`"9223372036854775807"`, `"9223372036854775808Ki"`, `"1n"`, `"1.0000000001"`, `"1ki"`, "\"1\xff\"", `"\u00a01"`,
	}
	targets := []func() any{
		func() any { return new(metav1.Time) }, func() any { return new(metav1.MicroTime) },
		func() any { return new(intstr.IntOrString) }, func() any { return new(resource.Quantity) },
		func() any { return new(*metav1.Time) }, func() any { return new(map[corev1.ResourceName]resource.Quantity) },
	}
	for _, v := range values {
		for _, newV := range targets {
			requireSame(t, []byte(v), newV)
		}
		requireSame(t, []byte(`{"cpu":`+v+`}`), func() any { return new(corev1.ResourceList) })
	}
}

// parseUTCSeconds gives what time.Parse(time.RFC3339, s).Local() gives, on every day of
// years around the leap-year rules and at the edges of each field, and refuses what it
// does not take (time.Parse decides those).
func TestParseUTCSeconds(t *testing.T) {
	check := func(s string) bool {
		got, ok := parseUTCSeconds([]byte(s))
		want, err := time.Parse(time.RFC3339, s)
		if !ok {
			return false
		}
		require.NoError(t, err, "parseUTCSeconds took %q", s)
		require.True(t, reflect.DeepEqual(want.Local(), got), "%s: %v, want %v", s, got, want.Local())
		return true
	}
	for _, year := range []int{1970, 1999, 2000, 2023, 2024, 2100, 2400, 2999} {
		for d := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == year; d = d.AddDate(0, 0, 1) {
			require.True(t, check(d.Format("2006-01-02")+"T23:59:59Z"))
			require.True(t, check(d.Format("2006-01-02")+"T00:00:00Z"))
		}
	}
	taken := 0
	for _, s := range []string{
		"2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2100-02-29T12:00:00Z", "2024-04-31T00:00:00Z",
		"2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2024-01-00T00:00:00Z", "2024-01-01T24:00:00Z",
		"2024-01-01T23:60:00Z", "2024-01-01T23:59:60Z", "1969-12-31T23:59:59Z", "3000-01-01T00:00:00Z",
		"2024-01-01T00:00:00z", "2024-01-01 00:00:00Z", "2024-01-01T00:00:00+00:00", "2024-1-01T00:00:00Z",
		"2024-01-01T00:00:0aZ", "+024-01-01T00:00:00Z", "2024-01-01T00:00:00.5Z", "",
	} {
		if check(s) {
			taken++
		}
	}
	require.Equal(t, 1, taken, "only the valid leap day is taken")
}

// Quantities are remembered between calls, except those held as an *inf.Dec, which two
// results must not share: changing one in place leaves the other alone.
func TestQuantityCache(t *testing.T) {
	data := []byte(`{"a":"250m","b":"99999999999999999999","c":"250m","d":"250"}`)
	var first, second map[string]resource.Quantity
	require.NoError(t, Unmarshal(data, &first))
	require.NoError(t, Unmarshal(data, &second))
	for k, s := range map[string]string{"a": "250m", "b": "99999999999999999999", "c": "250m", "d": "250"} {
		want := resource.MustParse(s)
		require.True(t, reflect.DeepEqual(want, first[k]), k)
		require.True(t, reflect.DeepEqual(want, second[k]), k)
	}
	b := first["b"]
	b.Add(resource.MustParse("1"))
	require.Equal(t, "100E", b.String())
	fresh := second["b"]
	require.Equal(t, "99999999999999999999", fresh.String(), "the other result's quantity did not change")
	require.GreaterOrEqual(t, quantityDecOffset, 0, "resource.Quantity still has its *inf.Dec field")
}

// Strings are scanned eight bytes at a time to the first byte that needs a look: each
// such byte (quote, escape, control character, multi-byte or invalid UTF-8), at every
// offset around the word boundaries, with plain bytes and other such bytes after it,
// decodes (or fails) as sigs.k8s.io/json decodes it.
func TestStringScanAtEveryOffset(t *testing.T) {
	specials := []string{`\"`, `\\`, `\n`, `\u00e9`, `\ud83d\ude00`, "\x01", "\x1f", "é", "\xff", "\xe2\x82", "😀", `"`}
	for _, sp := range specials {
		for before := 0; before <= 18; before++ {
			for _, after := range []string{"", "abc", "0123456789", `\t` + "é"} {
				s := strings.Repeat("a", before) + sp + after
				requireSame(t, []byte(`{"str":"`+s+`","int":1}`), func() any { return new(edge) })
				requireSame(t, []byte(`["`+s+`"]`), func() any { return new([]string) })
				requireSame(t, []byte(`{"`+s+`":1}`), func() any { return new(map[string]int) })
			}
		}
	}
}
