package compact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
)

// DecodeListFrom must give DecodeList's result for every body, however the body is cut
// into reads: these tests compare the two on many bodies, valid and not, through readers
// that return one byte, half of what is asked, random amounts or everything at once, and
// with initial buffers from two bytes up.

// chunkReader returns data in reads of random sizes, some of them empty.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := min(r.rng.IntN(r.max+1), len(p), len(r.data))
	n := copy(p, r.data[:k])
	r.data = r.data[n:]
	return n, nil
}

// capReader returns at most max bytes per read, as a network connection delivers them.
type capReader struct {
	r   io.Reader
	max int
}

func (r capReader) Read(p []byte) (int, error) { return r.r.Read(p[:min(len(p), r.max)]) }

type namedReader struct {
	name string
	new  func(data []byte) io.Reader
}

// streamReaders are the ways a body is read in the differential tests.
func streamReaders(seed uint64) []namedReader {
	return []namedReader{
		{"plain", func(data []byte) io.Reader { return bytes.NewReader(data) }},
		{"one-byte", func(data []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) }},
		{"half", func(data []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(data)) }},
		{"data-err", func(data []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) }},
		{"random", func(data []byte) io.Reader {
			return &chunkReader{data: data, rng: rand.New(rand.NewPCG(seed, 7)), max: 1 + int(seed%300)}
		}},
	}
}

// streamDecoders are the decoder options the differential tests run with.
func streamDecoders(t testing.TB) map[string]*Decoder {
	t.Helper()
	out := map[string]*Decoder{"default": {}}
	for name, opts := range map[string]Options{
		"keep-managedFields": {KeepManagedFields: true},
		"projection":         {Projection: []string{"{.spec.nodeName}", "{.status.phase}", "{.data}"}},
		"projection-empty":   {Projection: []string{}},
	} {
		d, err := NewDecoder(opts)
		require.NoError(t, err)
		out[name] = d
	}
	return out
}

// requireSameList fails unless DecodeListFrom's result (got, gotErr) is DecodeList's.
func requireSameList(t testing.TB, body []byte, want *List, wantErr error, got *List, gotErr error) {
	t.Helper()
	if wantErr != nil {
		require.Error(t, gotErr, "DecodeList failed (%v) but DecodeListFrom did not, on %q", wantErr, clip(body))
		require.Nil(t, got)
		require.Equal(t, wantErr.Error(), gotErr.Error(), "on %q", clip(body))
		require.Equal(t, errors.Is(wantErr, ErrMalformed), errors.Is(gotErr, ErrMalformed))
		var ws, gs *SyntaxError
		require.Equal(t, errors.As(wantErr, &ws), errors.As(gotErr, &gs))
		if ws != nil {
			require.Equal(t, ws.Offset, gs.Offset)
		}
		return
	}
	require.NoError(t, gotErr, "on %q", clip(body))
	require.Equal(t, want.TypeMeta, got.TypeMeta)
	require.Equal(t, want.ListMeta, got.ListMeta)
	require.Equal(t, want.Items == nil, got.Items == nil, "nil items")
	require.Len(t, got.Items, len(want.Items))
	for i, w := range want.Items {
		g := got.Items[i]
		require.Equal(t, string(w.RawJSON()), string(g.RawJSON()), "item %d of %q", i, clip(body))
		require.Equal(t, w.GetName(), g.GetName())
		require.Equal(t, w.GetNamespace(), g.GetNamespace())
		require.Equal(t, w.GetResourceVersion(), g.GetResourceVersion())
		require.Equal(t, w.GetUID(), g.GetUID())
		require.Equal(t, w.StoreKey(), g.StoreKey())
		require.Equal(t, w.HasManagedFields(), g.HasManagedFields())
		require.Equal(t, w.GroupVersionKind(), g.GroupVersionKind())
		require.True(t, reflect.DeepEqual(w, g), "item %d differs: %#v != %#v", i, w, g)
	}
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:150]) + "..." + string(b[len(b)-150:])
	}
	return string(b)
}

// streamListBodies are list bodies, valid and not, that exercise every path of DecodeList.
var streamListBodies = []string{
	`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}`,
	`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"6"},"items":null}`,
	`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"}}`,
	`{}`,
	` { } `,
	`{"items":[]}`,
	`{"items":[{}]}`,
	`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"8","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ","remainingItemCount":3},"items":[{"metadata":{"name":"a","namespace":"n","resourceVersion":"3","uid":"u-1","managedFields":[{"manager":"m"}]},"data":{"x":"y"}},{"metadata":{"name":"b","namespace":"n"}}]}`,
	`{"apiVersion":"example.com/v1","kind":"WidgetList","metadata":{"continue":"","resourceVersion":"9"},"items":[{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":3}}]}`,
	`{"kind":"PodList","apiVersion":"v1","items":[{"kind":"Other","metadata":{"name":"a"}}]}`,
	`{"kind":"PodList","apiVersion":"v1","items":[{"kind":"","apiVersion":5,"metadata":{"name":"a"}}]}`,
	// kind and apiVersion after the items, or again after them.
	`{"items":[{"metadata":{"name":"a"}}],"metadata":{"resourceVersion":"10"},"apiVersion":"v1","kind":"PodList"}`,
	`{"kind":"FooList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}],"kind":"PodList"}`,
	`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}},{}],"apiVersion":"v2"}`,
	`{"kind":"PodList","items":[{"metadata":{"name":"a"}}],"apiVersion":"v1"}`,
	`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}],"kind":"PodList"}`,
	`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}],"kind":""}`,
	`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}],"kind":"","apiVersion":""}`,
	`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}],"kind":5}`,
	`{"items":[{}],"kind":"AList","items":[{}]}`,
	`{"items":[],"kind":"AList","items":[{}]}`,
	`{"items":[{"metadata":{"name":"a"}}],"items":null,"kind":"XList"}`,
	// Items whose own first members are the injected ones: only the ones without their
	// own kind and apiVersion change with the list's.
	`{"kind":"PodList","apiVersion":"v1","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"own"}},{"metadata":{"name":"injected"}},{"kind":"Pod","apiVersion":"v1"},{"kind":"Pod","apiVersion":"v1","kind":""},{"spec":{},"kind":"Pod","apiVersion":"v1"},{ "kind":"Pod","apiVersion":"v1"}],"kind":"FooList","apiVersion":"v9"}`,
	`{"kind":"PodList","apiVersion":"v1","items":[{"kind":"Pod","apiVersion":"v1","kind":"","apiVersion":""},{"apiVersion":"","metadata":{}},{"metadata":{"name":"m","managedFields":[1]},"kind":"Pod","apiVersion":"v1"}],"kind":"BarList"}`,
	`{"kind":"List","apiVersion":"v1","items":[{"k\u0069nd":"Pod","apiVersion":"v1"},{"\u006bind":"","metadata":{}}],"kind":"PodList"}`,
	`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a","managedFields":[{"manager":"m"}]},"spec":{"nodeName":"n1","containers":[]},"status":{"phase":"Running"}}],"kind":"XList"}`,
	// Duplicates, odd keys and escapes.
	`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}},{}],"items":[{"metadata":{"name":"b"}}]}`,
	`{"kind":"PodList","apiVersion":"v1","x-extra":{"items":[1,2]},"metadata":{"selfLink":"/x","resourceVersion":"11","items":[]},"items":[{"metadata":{"name":"a","items":[]},"items":{"metadata":{"managedFields":[]}}}]}`,
	`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"caf\u00e9","namespace":"ns\"q","annotations":{"é":"😀\u2028\\"}},"data":{"\u0000":"\ud83d\ude00","k":"a\/b"}}]}`,
	"{\n \"kind\" : \"PodList\" ,\n \"apiVersion\":\"v1\",\n \"metadata\": { \"resourceVersion\" : \"12\" },\n \"items\" : [\n  { \"metadata\" : { \"name\" : \"a\" , \"managedFields\" : [ ] } } ,\n  {\"metadata\":{\"name\":\"b\"}}\n ]\n}\n",
	"\t\r\n {\"it\\u0065ms\" :\t[ {} ,{\"metadata\":null} ] , \"k\\u0069nd\":\"QList\" } \n\n",
	`{"a":1,"b":-0.5e+3,"c":true,"d":false,"e":null,"f":"s","g":[1,[2,{"h":[]}]],"items":[{"n":12345,"t":true}],"z":0}`,
	`{"metadata":null,"items":[]}`,
	`{"metadata":{"resourceVersion":"1"},"metadata":{"resourceVersion":"2"},"items":[]}`,
	`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1","continue":"c"},"items":[{"metadata":{"name":"a","managedFields":[]}},{"kind":"X"}]}`,
	// Malformed.
	``,
	`   `,
	`[]`,
	`[{}]`,
	`"x"`,
	`1`,
	`12`,
	`-`,
	`nul`,
	`null`,
	`true `,
	`[1,2`,
	`x`,
	`{`,
	`{"`,
	`{"items"`,
	`{"items":`,
	`{"items":[`,
	`{"items":[{`,
	`{"items":[{}`,
	`{"items":[{},`,
	`{"items":[{}]`,
	`{"items":[{}],`,
	`{"items":[{},]}`,
	`{"items":[{}}`,
	`{"items":[{}]]`,
	`{"items":[{}] x}`,
	`{"kind":"PodList","items":{}}`,
	`{"items":"x"}`,
	`{"items":nul}`,
	`{"items":nulll}`,
	`{"kind":"PodList","items":[{"metadata":{}},1]}`,
	`{"items":[null]}`,
	`{"items":[[{}]]}`,
	`{"items":["a"]}`,
	`{"items":[tru]}`,
	`{"kind":"PodList","items":[{"metadata":{"name":"a"}}`,
	`{"kind":"PodList","items":[{"metadata":{"name":"a`,
	`{"items":[{"metadata":{"name":"a"},"spec":{"x":01}}]}`,
	`{"items":[],"kind":}`,
	`{"items":[]}]`,
	`{"items":[]} {}`,
	`{"items":[]}` + "\x00",
	`{"metadata":"x","items":[]}`,
	`{"metadata":{"resourceVersion":5},"items":[]}`,
	`{"it\ems":[]}`,
	`{"a":tru}`,
	`{"a":fals}`,
	`{"a":-}`,
	`{"a":1.}`,
	`{"a":1e}`,
	`{"a":1e+}`,
	`{"a":"\u12"}`,
	`{"a":"\u12`,
	`{"a":"x\`,
	`{"a":"x` + "\x01" + `"}`,
	`{"a" "b"}`,
	`{"a":1 "b":2}`,
	`{"a":1,}`,
	`{,}`,
	`{"a":]}`,
	`{1:2}`,
	`{"items":[{"a":]}]}`,
	`{"items":[{"a":[}]}]}`,
	`{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b","x":[1,2,}}]}`,
	`{"items":[{}],"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":7}}`,
}

// streamCorpus returns the bodies of the differential tests: the list bodies above, the
// fuzz seeds, realistic pod lists (compact, indented, with kind and apiVersion last) and
// deep nesting.
func streamCorpus(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, s := range streamListBodies {
		out = append(out, []byte(s))
	}
	for _, s := range fuzzSeeds {
		out = append(out, []byte(s))
	}
	pods := podListBody(t, 12)
	out = append(out, pods)
	var indented bytes.Buffer
	require.NoError(t, json.Indent(&indented, pods, "", "  "))
	out = append(out, indented.Bytes())
	out = append(out, kindLast(t, pods))
	deep := strings.Repeat("[", maxDepth-2) + strings.Repeat("]", maxDepth-2)
	out = append(out,
		[]byte(`{"items":[{"a":`+deep+`}]}`),
		[]byte(`{"items":[{"a":[`+deep+`]}]}`),
		[]byte(`{"items":[`+deep+`]}`),
		[]byte(`{"x":[`+deep+`],"items":[]}`),
		[]byte(`{"x":[[`+deep+`]],"items":[]}`),
	)
	return out
}

// kindLast moves a list body's kind, apiVersion and metadata after its items.
func kindLast(t testing.TB, body []byte) []byte {
	t.Helper()
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &top))
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"items":%s,"metadata":%s,"apiVersion":%s,"kind":%s}`, top["items"], top["metadata"], top["apiVersion"], top["kind"])
	return b.Bytes()
}

// checkStream decodes body with DecodeList and, through every reader and with initial
// buffers of several sizes, with DecodeListFrom, and compares.
func checkStream(t *testing.T, d *Decoder, body []byte, seed uint64, bufSizes []int) {
	t.Helper()
	want, wantErr := d.DecodeList(body)
	for _, r := range streamReaders(seed) {
		got, gotErr := d.DecodeListFrom(r.new(body))
		requireSameList(t, body, want, wantErr, got, gotErr)
		for _, size := range bufSizes {
			got, _, gotErr := d.decodeListFrom(r.new(body), size)
			requireSameList(t, body, want, wantErr, got, gotErr)
		}
	}
}

func TestDecodeListFromDifferential(t *testing.T) {
	corpus := streamCorpus(t)
	for name, d := range streamDecoders(t) {
		t.Run(name, func(t *testing.T) {
			for i, body := range corpus {
				sizes := []int{2, 7, 64, 1000}
				if len(body) > 4096 {
					sizes = []int{100, 5000}
				}
				checkStream(t, d, body, uint64(i), sizes)
			}
		})
	}
}

// TestDecodeListFromTruncatedAndCorrupted compares the two decoders on every prefix of a
// small list of realistic pods (a body that ends early) and on copies with one byte
// changed.
func TestDecodeListFromTruncatedAndCorrupted(t *testing.T) {
	body := podListBody(t, 3)
	d := &Decoder{}
	rng := rand.New(rand.NewPCG(1, 2))
	step := max(1, len(body)/400)
	for cut := 0; cut < len(body); cut += step {
		prefix := body[:cut]
		want, wantErr := d.DecodeList(prefix)
		require.Error(t, wantErr)
		for _, r := range streamReaders(uint64(cut)) {
			got, gotErr := d.DecodeListFrom(r.new(prefix))
			requireSameList(t, prefix, want, wantErr, got, gotErr)
			assert.ErrorIs(t, gotErr, ErrMalformed)
		}
		got, _, gotErr := d.decodeListFrom(&chunkReader{data: prefix, rng: rng, max: 50}, 16)
		requireSameList(t, prefix, want, wantErr, got, gotErr)
	}
	for range 400 {
		changed := bytes.Clone(body)
		changed[rng.IntN(len(changed))] = "{}[]\":,x0 \\\x00"[rng.IntN(12)]
		want, wantErr := d.DecodeList(changed)
		for _, r := range streamReaders(rng.Uint64()) {
			got, gotErr := d.DecodeListFrom(r.new(changed))
			requireSameList(t, changed, want, wantErr, got, gotErr)
		}
		got, _, gotErr := d.decodeListFrom(&chunkReader{data: changed, rng: rng, max: 50}, 16)
		requireSameList(t, changed, want, wantErr, got, gotErr)
	}
}

// TestDecodeListFrom checks what the streaming decoder returns, beyond equality with
// DecodeList: the fields client-go reads, items of typed lists completed, items as copies.
func TestDecodeListFrom(t *testing.T) {
	cases := []struct {
		name      string
		body      string
		items     []string // names
		kinds     []string // kinds of the items
		rv, cont  string
		remaining *int64
		kind      string
	}{
		{name: "typed list", body: `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"8","continue":"c2","remainingItemCount":3},"items":[{"metadata":{"name":"a","namespace":"n","managedFields":[{"manager":"m"}]}},{"metadata":{"name":"b"}}]}`,
			items: []string{"a", "b"}, kinds: []string{"ConfigMap", "ConfigMap"}, rv: "8", cont: "c2", remaining: ptrTo(int64(3)), kind: "ConfigMapList"},
		{name: "items null", body: `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"6"},"items":null}`, rv: "6", kind: "PodList"},
		{name: "items absent", body: `{"kind":"PodList","apiVersion":"v1"}`, kind: "PodList"},
		{name: "kind after items", body: `{"items":[{"metadata":{"name":"a"}}],"metadata":{"resourceVersion":"10"},"apiVersion":"v1","kind":"PodList"}`,
			items: []string{"a"}, kinds: []string{"Pod"}, rv: "10", kind: "PodList"},
		{name: "kind again after items", body: `{"kind":"FooList","apiVersion":"v1","items":[{"metadata":{"name":"a"}},{"kind":"Own","metadata":{"name":"b"}}],"kind":"PodList"}`,
			items: []string{"a", "b"}, kinds: []string{"Pod", "Own"}, kind: "PodList"},
		{name: "own kind equal to the list's", body: `{"kind":"PodList","apiVersion":"v1","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"own"}},{"metadata":{"name":"given"}}],"kind":"NodeList"}`,
			items: []string{"own", "given"}, kinds: []string{"Pod", "Node"}, kind: "NodeList"},
		{name: "duplicate items, last wins", body: `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}},{}],"items":[{"metadata":{"name":"b"}}]}`,
			items: []string{"b"}, kinds: []string{"Pod"}, kind: "PodList"},
		{name: "space everywhere", body: " \n{ \"items\" : [ { \"metadata\" : { \"name\" : \"a\" } } , { } ] ,\t\"kind\" : \"PodList\" , \"apiVersion\" : \"v1\" }\r\n ",
			items: []string{"a", ""}, kinds: []string{"Pod", "Pod"}, kind: "PodList"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			for _, r := range streamReaders(3) {
				l, err := (&Decoder{}).DecodeListFrom(r.new(body))
				require.NoError(t, err, r.name)
				require.Len(t, l.Items, len(tc.items))
				for i, o := range l.Items {
					assert.Equal(t, tc.items[i], o.GetName())
					assert.Equal(t, tc.kinds[i], o.GroupVersionKind().Kind)
					assert.NotContains(t, string(o.RawJSON()), "managedFields")
				}
				assert.Equal(t, tc.kind, l.Kind)
				assert.Equal(t, tc.rv, l.ResourceVersion)
				assert.Equal(t, tc.cont, l.Continue)
				assert.Equal(t, tc.remaining, l.RemainingItemCount)
				la, err := meta.ListAccessor(l)
				require.NoError(t, err)
				assert.Equal(t, tc.rv, la.GetResourceVersion())
				objs, err := meta.ExtractListWithAlloc(l)
				require.NoError(t, err)
				assert.Len(t, objs, len(tc.items))
				want, err := (&Decoder{}).DecodeList(body)
				requireSameList(t, body, want, err, l, nil)
			}
		})
	}
}

// TestDecodeListFromMalformed: errors wrap ErrMalformed and their offsets count from the
// start of the stream, wherever the reads were cut.
func TestDecodeListFromMalformed(t *testing.T) {
	cases := map[string]struct {
		body   string
		offset int64 // of the *SyntaxError, -1 for a shape error
	}{
		"empty":                  {``, 0},
		"not an object":          {`[]`, -1},
		"items an object":        {`{"kind":"PodList","items":{}}`, -1},
		"item not an object":     {`{"kind":"PodList","items":[{"metadata":{}},1]}`, -1},
		"item null":              {`{"items":[null]}`, -1},
		"ends after an item":     {`{"kind":"PodList","items":[{"metadata":{"name":"a"}}`, 52}, // the end
		"ends in an item":        {`{"kind":"PodList","items":[{"metadata":{"name":"a`, 47},    // the string
		"invalid in an item":     {`{"items":[{"metadata":{"name":"a"},"spec":{"x":01}}]}`, 48},
		"trailing garbage":       {`{"items":[]}]`, 12},
		"trailing after space":   {"{\"items\":[]}\n\n  x", 16},
		"trailing comma":         {`{"items":[{},]}`, 13},
		"bad literal at the end": {`{"items":[],"x":tru`, 16},
		"number at the end":      {`{"items":[],"x":12`, 18},
		"metadata wrong types":   {`{"metadata":{"resourceVersion":5},"items":[]}`, -1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, r := range streamReaders(5) {
				l, err := (&Decoder{}).DecodeListFrom(r.new([]byte(tc.body)))
				require.Error(t, err, r.name)
				assert.Nil(t, l)
				assert.ErrorIs(t, err, ErrMalformed)
				var se *SyntaxError
				if tc.offset >= 0 {
					require.ErrorAs(t, err, &se)
					assert.Equal(t, tc.offset, se.Offset, "%s: %v", r.name, err)
				} else {
					assert.False(t, errors.As(err, &se), "%v", err)
				}
			}
		})
	}
}

// errAfterReader returns data, then err instead of io.EOF.
type errAfterReader struct {
	data []byte
	err  error
}

func (r *errAfterReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data[:min(len(p), 1000, len(r.data))])
	r.data = r.data[n:]
	return n, nil
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// TestDecodeListFromReadError: an error from the reader is returned, wrapped.
func TestDecodeListFromReadError(t *testing.T) {
	body := podListBody(t, 4)
	errBoom := errors.New("connection reset")
	for _, at := range []int{0, 1, 100, len(body) / 2, len(body) - 3, len(body)} {
		l, err := (&Decoder{}).DecodeListFrom(&errAfterReader{data: body[:at], err: errBoom})
		require.Error(t, err, "at %d", at)
		assert.Nil(t, l)
		assert.ErrorIs(t, err, errBoom, "at %d", at)
		assert.NotErrorIs(t, err, ErrMalformed, "at %d", at)
	}
	_, err := (&Decoder{}).DecodeListFrom(iotest.TimeoutReader(bytes.NewReader(body)))
	assert.ErrorIs(t, err, iotest.ErrTimeout)
	_, err = (&Decoder{}).DecodeListFrom(iotest.ErrReader(io.ErrUnexpectedEOF))
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = (&Decoder{}).DecodeListFrom(zeroReader{})
	assert.ErrorIs(t, err, io.ErrNoProgress)
}

// TestDecodeListFromLargeItem: an item larger than the initial buffer grows it, to no more
// than a few times the item.
func TestDecodeListFromLargeItem(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"small"}},`)
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	fmt.Fprintf(&b, `{"metadata":{"name":"big","annotations":{"a":%q},"managedFields":[{"manager":%q}]},"data":{"x":%q}}`, big[:100000], big[:300000], big)
	b.WriteString(`,{"metadata":{"name":"after"}}]}`)
	body := b.Bytes()
	d := &Decoder{}
	want, wantErr := d.DecodeList(body)
	require.NoError(t, wantErr)
	for _, r := range streamReaders(9) {
		got, stats, err := d.decodeListFrom(r.new(body), streamBufferSize)
		requireSameList(t, body, want, wantErr, got, err)
		itemSize := len(body) - 200
		assert.GreaterOrEqual(t, stats.maxBuffer, itemSize, r.name)
		assert.LessOrEqual(t, stats.maxBuffer, 4*itemSize, r.name)
	}
	got, err := d.DecodeListFrom(bytes.NewReader(body))
	requireSameList(t, body, want, wantErr, got, err)
	assert.Equal(t, "big", got.Items[1].GetName())
}

// podStream generates a PodList body of about size bytes from a few rendered pods,
// without holding it, and samples the heap every sampleEvery bytes it returns.
type podStream struct {
	pods        [][]byte
	size, sent  int
	pending     []byte // what is left of back
	back        []byte
	next        int
	done        bool
	sampleEvery int
	sampled     int
	peakHeap    uint64
}

func (p *podStream) Read(buf []byte) (int, error) {
	if len(p.pending) == 0 {
		switch {
		case p.done:
			return 0, io.EOF
		case p.next == 0:
			p.back = append(p.back[:0], `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[`...)
			p.back = append(p.back, p.pods[0]...)
			p.next = 1
		case p.sent >= p.size:
			p.back, p.done = append(p.back[:0], "]}\n"...), true
		default:
			p.back = append(append(p.back[:0], ','), p.pods[p.next%len(p.pods)]...)
			p.next++
		}
		p.pending = p.back
	}
	n := copy(buf, p.pending)
	p.pending = p.pending[n:]
	p.sent += n
	if p.sent-p.sampled >= p.sampleEvery {
		p.sampled = p.sent
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		p.peakHeap = max(p.peakHeap, ms.HeapAlloc)
	}
	return n, nil
}

// TestDecodeListFromBoundedMemory decodes a 50 MB list from a reader that generates it:
// the buffer never grows past its initial size (no item is that large), and the heap
// grows by what the decoded items keep, far less than the body.
func TestDecodeListFromBoundedMemory(t *testing.T) {
	var pods [][]byte
	for i := range 32 {
		p := realisticPod(fmt.Sprintf("team-%d", i%5), i)
		p.TypeMeta.Kind, p.TypeMeta.APIVersion = "", ""
		data, err := json.Marshal(p)
		require.NoError(t, err)
		pods = append(pods, data)
	}
	const size = 50 << 20
	d, err := NewDecoder(Options{Projection: []string{}}) // keep little of each item
	require.NoError(t, err)

	base := heapAfterGC()
	src := &podStream{pods: pods, size: size, sampleEvery: 1 << 20}
	l, stats, err := d.decodeListFrom(capReader{src, 16 << 10}, streamBufferSize)
	require.NoError(t, err)
	require.Greater(t, src.sent, size)
	kept := heapAfterGC()
	runtime.KeepAlive(l)

	n := len(l.Items)
	assert.Equal(t, src.next, n)
	assert.Equal(t, "42", l.ResourceVersion)
	assert.Equal(t, "Pod", l.Items[n-1].GroupVersionKind().Kind)
	assert.LessOrEqual(t, stats.maxBuffer, streamBufferSize, "the buffer grew")
	peak := int64(src.peakHeap) - int64(base)
	retained := int64(kept) - int64(base)
	t.Logf("%d items, body %d MB: peak heap growth %.1f MB, kept %.1f MB, buffer %d KB",
		n, src.sent>>20, float64(peak)/(1<<20), float64(retained)/(1<<20), stats.maxBuffer>>10)
	assert.Less(t, peak, int64(size/3), "peak heap growth")
	assert.Less(t, peak-retained, int64(4<<20), "peak heap growth beyond what the items keep")
}

// FuzzDecodeListFrom: DecodeListFrom never panics and, however the body is cut into reads
// and whatever the initial buffer, returns what DecodeList returns.
func FuzzDecodeListFrom(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), uint64(i))
	}
	for i, s := range streamListBodies {
		f.Add([]byte(s), uint64(i)*7919)
	}
	f.Add(podListBody(f, 2), uint64(12345))
	decoders := streamDecoders(f)
	names := []string{"default", "keep-managedFields", "projection", "projection-empty"}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		d := decoders[names[seed%4]]
		want, wantErr := d.DecodeList(data)
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		r := &chunkReader{data: data, rng: rng, max: 1 + rng.IntN(64)}
		bufSize := streamBufferSize
		if seed&4 == 0 {
			bufSize = 2 + rng.IntN(64)
		}
		got, _, gotErr := d.decodeListFrom(r, bufSize)
		requireSameList(t, data, want, wantErr, got, gotErr)
	})
}

// BenchmarkDecodeListFrom decodes BenchmarkList's body (20,000 realistic pods) with
// DecodeListFrom, from the bytes and from reads of 16 KB (about what an HTTP/2 stream
// delivers), and with DecodeList for comparison, after reading the body whole or not.
func BenchmarkDecodeListFrom(b *testing.B) {
	benchData(b)
	d := &Decoder{}
	run := func(name string, decode func() (*List, error)) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(benchList)))
			b.ReportAllocs()
			for b.Loop() {
				l, err := decode()
				if err != nil || len(l.Items) != benchPods {
					b.Fatal(err)
				}
			}
		})
	}
	run("DecodeList", func() (*List, error) { return d.DecodeList(benchList) })
	run("ReadAll+DecodeList-16KB-reads", func() (*List, error) {
		body, err := io.ReadAll(capReader{bytes.NewReader(benchList), 16 << 10})
		if err != nil {
			return nil, err
		}
		return d.DecodeList(body)
	})
	run("DecodeListFrom", func() (*List, error) { return d.DecodeListFrom(bytes.NewReader(benchList)) })
	run("DecodeListFrom-16KB-reads", func() (*List, error) {
		return d.DecodeListFrom(capReader{bytes.NewReader(benchList), 16 << 10})
	})
}
