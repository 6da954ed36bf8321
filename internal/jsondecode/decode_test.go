package jsondecode

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kindex/kindex/internal/testsupport/podgen"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// same reports whether a and b are the same decoded JSON value: DeepEqual, except that
// floats must have the same bits (DeepEqual says -0 == 0) and maps and slices must both
// be nil or both non-nil.
func same(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !same(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return reflect.TypeOf(a) == reflect.TypeOf(b) && a == b
}

// reference decodes data as apimachinery does.
func reference(data []byte) (any, error) {
	var v any
	err := utiljson.Unmarshal(data, &v)
	return v, err
}

func referenceObject(data []byte) (map[string]any, error) {
	var m map[string]any
	err := utiljson.Unmarshal(data, &m)
	return m, err
}

// checkSame decodes data with both decoders, as a value and as an object, and fails
// the test if they disagree.
func checkSame(t testing.TB, data []byte) {
	t.Helper()
	want, wantErr := reference(data)
	got, gotErr := Value(data)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("Value(%q): error %v, util/json error %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !same(got, want) {
		t.Fatalf("Value(%q) = %#v, util/json %#v", data, got, want)
	}
	wantM, wantErr := referenceObject(data)
	gotM, gotErr := Object(data)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("Object(%q): error %v, util/json error %v", data, gotErr, wantErr)
	}
	if wantErr == nil && !same(any(gotM), any(wantM)) {
		t.Fatalf("Object(%q) = %#v, util/json %#v", data, gotM, wantM)
	}
}

var tricky = []string{
	// Literals and whitespace.
	`null`, `true`, `false`, ` true `, "\t\r\n null \n", `nul`, `nulll`, `tru`, `True`, `fals`, `falsey`,
	``, ` `, `{}`, `[]`, `{ }`, `[ ]`, " {\n} ", `{"a":1} x`, `{"a":1}}`, `[1]]`, `{"a":1}{}`, "{}\x00",
	"\xef\xbb\xbf{}", "\u00a0{}", "{}\v", `/*c*/{}`,
	// Objects.
	`{"a":1,"a":2}`, `{"a":{"x":1},"a":{"y":2}}`, `{"a":[1],"a":null}`, `{"a":null}`, `{"":""}`,
	`{"a" : 1 , "b" :2}`, `{"a":1,}`, `{,"a":1}`, `{"a"}`, `{"a":}`, `{"a" 1}`, `{a:1}`, `{'a':1}`,
	`{"a":1 "b":2}`, `{"a":1`, `{"a":`, `{"a"`, `{"`, `{`, `{1:2}`, `{"a":1]`, `{"A":1,"a":2}`,
	`{"a":{"b":{"c":{"d":[{"e":null}]}}}}`,
	// Arrays.
	`[1,2,3]`, `[1,]`, `[,1]`, `[1 2]`, `[`, `[1`, `[1,`, `[[[]]]`, `[{},[],"",0,false,null]`, `[1}`,
	// Numbers.
	`0`, `-0`, `-0.0`, `0.0`, `1.0`, `1e3`, `1E3`, `1e+3`, `1e-3`, `-1e-3`, `1.5e300`, `1e400`, `-1e400`,
	`1e-400`, `-1e-400`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775808`,
	`-9223372036854775809`, `123456789012345678901234`, `-123456789012345678901234`,
	`1234567890123456789`, `-123456789012345678`, `999999999999999999`, `1000000000000000000`,
	`0.1`, `3.141592653589793238462643383279`, `2.2250738585072011e-308`, `4.9e-324`, `1.7976931348623157e308`,
	`1.7976931348623159e308`, `01`, `-01`, `00`, `1.`, `.1`, `-`, `--1`, `+1`, `1e`, `1e+`, `1.e3`, `0x10`,
	`1_000`, `Infinity`, `NaN`, `-Infinity`, `1.0e`, `12a`, `[1e400]`, `{"a":1e400}`, `{"a":1e400,"b":}`,
	`100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000`,
	`[0,1,255,256,-1,-128,65535,4294967296]`,
	// Strings.
	`""`, `"abc"`, `"a\"b"`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\'"`, `"\a"`, `"\x41"`, `"\u0041"`,
	`"\u00e9"`, `"\u20AC"`, `"\ud83d\ude00"`, `"\uD83D\uDE00"`, `"\ud83d"`, `"\ude00"`, `"\ud83dx"`,
	`"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"\ude00\ud83d"`, `"\ud83d\u"`, `"\ud83d\u12"`, `"\ud83d\uzzzz"`,
	`"\u12"`, `"\u12g4"`, `"\u0000"`, `"\u"`, `"\`, `"abc`, `"`, "\"a\nb\"", "\"a\tb\"", "\"a\x00b\"", "\"a\x1fb\"",
	"\"a\x7fb\"", "\"h\xc3\xa9llo\"", "\"\xff\"", "\"\xc3\"", "\"\xc3(\"", "\"\xe2\x82\"", "\"\xed\xa0\x80\"",
	"\"\xf4\x90\x80\x80\"", "\"\xf0\x9f\x98\x80\"", "\"\xc0\xaf\"", "\"abc\xffdef\\n\xfe\"", "\"\\n\xff\"",
	"\"\xe2\x82\xac\\u20ac\"", "{\"\xff\":1}", "{\"k\\u00e9y\":\"v\"}", "{\"a\\u0000b\":1}",
	`"0123456789abcdef0123456789abcdef0123456789abcdef"`, `"01234567\"89abcdef"`, `"0123456789abcdef\u0041"`,
	"\"0123456\x80789abcdef\"", "\"01234567\x1f89\"",
	// Top-level types for Object.
	`"str"`, `1`, `[1]`, `{"a":[}`,
}

func TestTricky(t *testing.T) {
	for _, in := range tricky {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) { checkSame(t, []byte(in)) })
	}
}

// Every byte that ends the fast scan of a string (a quote, an escape, a control character,
// a multi-byte or invalid sequence) at every offset of the scanned words, in values and in
// keys: the scan jumps to the first such byte of a word and must neither skip nor misplace it.
func TestStringScanAtEveryOffset(t *testing.T) {
	specials := []string{`\"`, `\\`, `\n`, `\u00e9`, `\ud83d\ude00`, "\x01", "\x1f", "é", "\xff", "\xe2\x82", "😀", `"`}
	for _, sp := range specials {
		for before := 0; before <= 18; before++ {
			for _, after := range []string{"", "abc", "0123456789", `\t` + "é"} {
				s := strings.Repeat("a", before) + sp + after
				checkSame(t, []byte(`{"str":"`+s+`","int":1}`))
				checkSame(t, []byte(`["`+s+`"]`))
				checkSame(t, []byte(`{"`+s+`":1}`))
			}
		}
	}
}

func TestDepth(t *testing.T) {
	for _, n := range []int{MaxDepth - 1, MaxDepth, MaxDepth + 1, 100_000} {
		for _, open := range []string{"[", `{"a":`, `[{"a":`} {
			close := map[string]string{"[": "]", `{"a":`: "}", `[{"a":`: "}]"}[open]
			reps := n / len(strings.Split(close, ""))
			in := strings.Repeat(open, reps) + "1" + strings.Repeat(close, reps)
			t.Run(fmt.Sprintf("%s*%d", open, reps), func(t *testing.T) { checkSame(t, []byte(in)) })
			// Unterminated: an error at any depth, never a stack overflow.
			_, err := Value([]byte(strings.Repeat(open, reps)))
			assert.Error(t, err)
		}
	}
}

func TestNumbersExact(t *testing.T) {
	cases := map[string]any{
		`9007199254740993`:     int64(9007199254740993), // not representable as float64
		`-9223372036854775808`: int64(math.MinInt64),
		`9223372036854775807`:  int64(math.MaxInt64),
		`9223372036854775808`:  float64(9223372036854775808),
		`-0`:                   int64(0),
		`1.0`:                  float64(1),
		`1e2`:                  float64(100),
		`1e-400`:               float64(0),
	}
	for in, want := range cases {
		got, err := Value([]byte(in))
		require.NoError(t, err, in)
		assert.True(t, same(got, want), "%s: got %#v want %#v", in, got, want)
	}
	got, err := Value([]byte(`-0.0`))
	require.NoError(t, err)
	assert.True(t, math.Signbit(got.(float64)))
}

func TestErrors(t *testing.T) {
	_, err := Value([]byte(`{"a":1,}`))
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, int64(7), se.Offset)
	_, err = Value([]byte(`[1e400]`))
	var te *json.UnmarshalTypeError
	require.ErrorAs(t, err, &te)
	_, err = Object([]byte(`[]`))
	require.ErrorAs(t, err, &te)
	m, err := Object([]byte(` null `))
	assert.NoError(t, err)
	assert.Nil(t, m)
}

// TestRealistic compares whole Kubernetes objects, with both decoders.
func TestRealistic(t *testing.T) {
	objs := map[string][]byte{
		"deployment":   []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"deployment.kubernetes.io/revision":"3","kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"annotations\":{},\"name\":\"web\",\"namespace\":\"default\"}}\n"},"creationTimestamp":"2026-01-02T03:04:05Z","generation":3,"name":"web","namespace":"default","resourceVersion":"918273","uid":"3f1c2e4a-8b9d-4e0f-a1b2-c3d4e5f60718"},"spec":{"progressDeadlineSeconds":600,"replicas":3,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"web"}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"},"template":{"metadata":{"creationTimestamp":null,"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.27","imagePullPolicy":"IfNotPresent","name":"nginx","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"limits":{"cpu":"500m","memory":"128Mi"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}},"status":{"availableReplicas":3,"conditions":[{"lastTransitionTime":"2026-01-02T03:04:07Z","lastUpdateTime":"2026-01-02T03:04:07Z","message":"Deployment has minimum availability.","reason":"MinimumReplicasAvailable","status":"True","type":"Available"}],"observedGeneration":3,"readyReplicas":3,"replicas":3,"updatedReplicas":3}}`),
		"crd-odd-keys": []byte(`{"apiVersion":"example.com/v1alpha1","kind":"Widget","metadata":{"name":"w","namespace":"ns","labels":{"":"empty-key","a.b/c":"d","ünï":"cödé","k\u00e9y":"\ud83d\ude00"}},"spec":{"size":3,"ratio":0.25,"big":123456789012345678901234,"max":9223372036854775807,"min":-9223372036854775808,"tiny":1e-300,"exp":1E+2,"negzero":-0,"negzerof":-0.0,"one":1.0,"nested":[[[]],{},[{"":{}}]],"dup":1,"dup":"two","nil":null,"t":true,"f":false,"esc":"line\nbreak\ttab \"quoted\" back\\slash \/ \u0001 \u001f","html":"<a href=\"x\">&amp;</a>","ws" : [ 1 , 2 ] }, "status" : { } }`),
		"list":         []byte(`{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"42","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDIsInN0YXJ0IjoieCJ9","remainingItemCount":1234},"items":[` + string(podgen.GenPodJSON(1)) + `,` + string(podgen.GenPodJSON(2)) + `]}`),
		"watch-event":  []byte(`{"type":"MODIFIED","object":` + string(podgen.GenPodJSON(3)) + `}`),
		"pretty": func() []byte {
			var v any
			require.NoError(t, json.Unmarshal(podgen.GenPodJSON(4), &v))
			b, err := json.MarshalIndent(v, "", "  ")
			require.NoError(t, err)
			return b
		}(),
	}
	for i := 0; i < 50; i++ {
		objs[fmt.Sprint("pod-", i)] = podgen.GenPodJSON(i * 37)
	}
	for name, data := range objs {
		t.Run(name, func(t *testing.T) {
			checkSame(t, data)
			// A Decoder kept across calls (learning strings) gives the same results.
			var d Decoder
			for range 3 {
				got, err := d.Object(data)
				require.NoError(t, err)
				want, err := referenceObject(data)
				require.NoError(t, err)
				require.True(t, same(got, want))
			}
		})
	}
}

// TestPodSize keeps the benchmark object honest.
func TestPodSize(t *testing.T) {
	b := podgen.GenPodJSON(0)
	var p struct {
		Metadata struct {
			ManagedFields json.RawMessage `json:"managedFields"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(b, &p))
	t.Logf("pod JSON %d bytes, managedFields %d bytes", len(b), len(p.Metadata.ManagedFields))
	assert.InDelta(t, 7500, len(b), 700)
	assert.InDelta(t, 3400, len(p.Metadata.ManagedFields), 500)
}

// TestResultsIndependent: results own their maps and slices; mutating one result
// changes no other, and strings stay intact after the input is overwritten.
func TestResultsIndependent(t *testing.T) {
	data := podgen.GenPodJSON(7)
	orig := append([]byte(nil), data...)
	var d Decoder
	a, err := d.Object(data)
	require.NoError(t, err)
	b, err := d.Object(data)
	require.NoError(t, err)
	a["metadata"].(map[string]any)["name"] = "changed"
	delete(a, "spec")
	a["status"].(map[string]any)["conditions"].([]any)[0] = nil
	for i := range data {
		data[i] = 'x'
	}
	want, err := referenceObject(orig)
	require.NoError(t, err)
	assert.True(t, same(any(b), any(want)))
}

func TestLearnedTableBounded(t *testing.T) {
	var d Decoder
	for i := 0; i < 3*maxLearnt; i++ {
		_, err := d.Value([]byte(fmt.Sprintf(`{"key-%d":"value-%d"}`, i, i)))
		require.NoError(t, err)
		require.LessOrEqual(t, len(d.strs), maxLearnt+len(commonStrs))
	}
	got, err := d.Value([]byte(`{"key-1":"value-1","name":"x"}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"key-1": "value-1", "name": "x"}, got)
}

func FuzzObject(f *testing.F) {
	for _, s := range tricky {
		f.Add([]byte(s))
	}
	f.Add(podgen.GenPodJSON(0))
	f.Add([]byte(`{"a":[1,2.5,-0,"x\u00e9\ud83d\ude00",{"b":null,"c":true}],"d":1e400}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := referenceObject(data)
		got, gotErr := Object(data)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("Object(%q): error %v, util/json error %v", data, gotErr, wantErr)
		}
		if wantErr == nil && !same(any(got), any(want)) {
			t.Fatalf("Object(%q) = %#v, util/json %#v", data, got, want)
		}
		wantV, wantErr := reference(data)
		gotV, gotErr := Value(data)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("Value(%q): error %v, util/json error %v", data, gotErr, wantErr)
		}
		if wantErr == nil && !same(gotV, wantV) {
			t.Fatalf("Value(%q) = %#v, util/json %#v", data, gotV, wantV)
		}
	})
}

// TestDecoderFootprint bounds what a Decoder kept per stream costs once warm.
func TestDecoderFootprint(t *testing.T) {
	in := make([][]byte, 500)
	for i := range in {
		in[i] = podgen.GenPodJSON(i)
	}
	before := heapAfterGC()
	d := new(Decoder)
	for _, b := range in {
		_, err := d.Object(b)
		require.NoError(t, err)
	}
	after := heapAfterGC()
	runtime.KeepAlive(d)
	runtime.KeepAlive(in)
	t.Logf("a warm Decoder holds %d KB", (after-before)/1024)
	assert.Less(t, after-before, uint64(512<<10))
}

// TestConcurrent: the package functions are safe for concurrent use, and results
// shared strings do not interfere.
func TestConcurrent(t *testing.T) {
	in := make([][]byte, 64)
	want := make([]map[string]any, len(in))
	for i := range in {
		in[i] = podgen.GenPodJSON(i)
		var err error
		want[i], err = referenceObject(in[i])
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 3; r++ {
				for i := range in {
					got, err := Object(in[i])
					if err != nil || !same(any(got), any(want[i])) {
						t.Errorf("pod %d: differs (err %v)", i, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
