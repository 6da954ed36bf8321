package dynamicinformer_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/metadata"
	k8sjsonpath "k8s.io/client-go/util/jsonpath"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/metadataonly"
	"github.com/kindex/kindex/query"
)

// fidDepth is how deeply the deep widget nests its maps and its lists. The deepest widget
// nests fidMaxDepth-2 maps under spec: 9,995 levels as sent, 10,000 as the server serves
// it (managedFields nest five levels deeper than the fields they describe), the deepest
// object kube-apiserver 1.37 accepts and serves; one level more and it stores the object
// but cannot decode it back ("object not decodable"). client-go GETs it but cannot decode
// a LIST holding it (the list nests two levels deeper than 10,000).
const (
	fidDepth    = 2_000
	fidMaxDepth = 9_996
)

// fidWidgets returns the raw JSON bodies of the adversarial widgets, by name: written by
// hand so that what reaches the server is exactly this text (negative zero, 5.0, 1e21,
// escapes of lone surrogates, raw invalid UTF-8), which no Go value would encode as.
func fidWidgets(group, prefix string) map[string]string {
	head := func(name, extraMeta string) string {
		return `{"apiVersion":"` + group + `/v1","kind":"Widget","metadata":{"name":"` + prefix + name + `"` + extraMeta + `},`
	}
	out := map[string]string{}

	out["numbers"] = head("numbers", "") + `"spec":{` +
		`"i53":9007199254740992,"i53p1":9007199254740993,"i53m1":-9007199254740993,` +
		`"max":9223372036854775807,"min":-9223372036854775808,` +
		`"over":9223372036854775808,"under":-9223372036854775809,"huge":184467440737095516160000,` +
		`"negzero":-0,"negzerof":-0.0,"zerof":0.0,"zeroexp":0e10,` +
		`"f01":0.1,"f1e21":1e21,"f1e20":1e20,"fsmall":1.5e-7,"f5":5.0,"f5e0":5e0,"fE":1E+2,` +
		`"fmax":1.7976931348623157e308,"fden":5e-324,"fneg":-2.5e-300,"f17":0.30000000000000004,` +
		`"list":[0,-0,1.0,9007199254740993,-9223372036854775808,1e21,null,true,false,0.1]},` +
		`"status":{"count":9223372036854775807,"ratio":0.1,"neg":-0.0}}`

	long := strings.Repeat(`abc\"\\\n\u00e9\ud83d\ude00`, 100_000/26)
	out["strings"] = head("strings", "") + `"spec":{` +
		`"esc":"q\" b\\ s\/ b\b f\f n\n r\r t\t","nul":"a\u0000b","ctl":"\u0001\u001f\u007f\u0080\u009f",` +
		`"lone":"\ud800","lonelow":"x\udc00y","pair":"\ud83d\ude00","rev":"\ude00\ud83d","twohigh":"\ud800\ud800",` +
		`"highthenchar":"\ud800a","emoji":"😀👩‍👩‍👧🏳️‍🌈","bom":"\ufeff","bomraw":"` + "\xef\xbb\xbf" + `",` +
		`"lsep":"\u2028\u2029","nonchar":"\uffff` + "\xf4\x8f\xbf\xbf" + `","fffd":"\ufffd",` +
		`"html":"<a href=\"x\">&amp;</a>","rawctl2":"` + "\xc2\x80\xc2\x9f" + `",` +
		`"badutf8":"` + "a\xffb\xc3(c\xed\xa0\x80d" + `","upper":"\u00C9\u00e9","slash":"a/b\/c",` +
		`"empty":"","space":" ","long":"` + long + `",` +
		`"list":["\u0000","",null,"\ud800","😀"]},` +
		`"status":{"esc":"\"\\\/\b\f\n\r\t"}}`

	var many strings.Builder
	for i := range 10_000 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `"k%05d":%d`, i, i)
	}
	out["keys"] = head("keys", "") + `"spec":{` +
		`"":"empty key",".":"dot","*":"star","[0]":"bracket","a.b":"dotted","a.b.c":{"d":1},` +
		`"metadata":{"name":"not-the-name","labels":{"x":"y"}},"kind":"NotAKind","apiVersion":"x/y",` +
		`"ключ":"unicode key","😀":"emoji key","a\"b":"quote","a\\b":"backslash","a\u0000b":"nul key",` +
		`"\ud800":"lone surrogate key","<&>":"html key","\u2028":"line separator key","'":"apostrophe","{}":"braces","@":"at","$":"dollar","..":"two dots",` +
		`"empty":{"m":{},"l":[],"s":"","n":null,"ln":[null,null],"nested":[[[]],[{}],{"":{}}]},` +
		`"many":{` + many.String() + `}},` +
		`"status":{"":[],".":{}}}`

	out["deep"] = head("deep", "") + `"spec":{"maps":` + strings.Repeat(`{"a":`, fidDepth) + `"leaf"` + strings.Repeat(`}`, fidDepth) +
		`,"lists":` + strings.Repeat(`[`, fidDepth) + `1` + strings.Repeat(`]`, fidDepth) +
		`,"mixed":` + strings.Repeat(`[{"b":`, fidDepth/2) + `null` + strings.Repeat(`}]`, fidDepth/2) + `}}`

	out["deepest"] = head("deepest", "") + `"spec":` + strings.Repeat(`{"a":`, fidMaxDepth-2) + `-0.0` + strings.Repeat(`}`, fidMaxDepth-2) + `}`

	// Members at the top and in spec named as the list, event and metadata members that
	// decoders look for: none is the object's own. (The server refuses a custom resource
	// with a top-level "items": it takes it for a list.)
	out["impostor"] = head("impostor", `,"labels":{"real":"yes"}`) +
		`"type":"DELETED","object":{"metadata":{"name":"x","resourceVersion":"1"}},` +
		`"name":"top-name","namespace":"top-ns","resourceVersion":"999","uid":"fake-uid","labels":{"fake":"yes"},"annotations":{"a":"b"},` +
		`"managedFields":[{"manager":"fake"}],"continue":"x","remainingItemCount":5,` +
		`"spec":{"items":[{"metadata":{"name":"fake","namespace":"other"}}],"metadata":{"name":"spec-name","managedFields":[{"manager":"kept"}],"labels":{"fake":"spec"}},"kind":"Status","status":"Failure","code":410}}`

	out["meta"] = head("meta", `,"labels":{"example.com/a.b":"","a.b-c.d/e_f.g":"v.1","x":"","k8s.io":"a_b-c.d"},`+
		`"annotations":{"kindex.test/empty":"","kindex.test/json":"{\"a\":[1,2.0,-0]}","kindex.test/nl":"a\nb\u0000c\ud800",`+
		`"a.b.c/d.e":"😀","x":"\u2028"},"finalizers":["kindex.test/f.g"],`+
		`"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner.with.dots","uid":"11111111-2222-3333-4444-555555555555","controller":true,"blockOwnerDeletion":false}]`) +
		`"spec":{"x":1}}`

	// Objects for the indexes: one value each of a big integer, a float and a string with
	// escapes, and some without the field.
	ints := []string{"9007199254740992", "9007199254740993", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-0", "1", "12345678901234567890"}
	floats := []string{"0.1", "1e21", "1.5e-7", "5.0", "-0.0", "2.5", "1e-300", "0.30000000000000004"}
	strs := []string{`a\u0000b`, `\"q\"`, `\ud800`, `😀`, ``, `a.b`, `\n`, `\u00e9`}
	for i := range ints {
		out[fmt.Sprint("idx", i)] = head(fmt.Sprint("idx", i), "") + `"spec":{"big":` + ints[i] + `,"flt":` + floats[i] + `,"str":"` + strs[i] + `"}}`
	}
	out["idx-none"] = head("idx-none", "") + `"spec":{"other":true}}`
	return out
}

// fidProjection is the projected mode's Projection: odd keys, big numbers, a deep path.
var fidProjection = []string{`{.spec.big}`, `{.spec.flt}`, `{.spec.str}`, `{.spec.a\.b}`, `{.spec['']}`, `{.spec.ключ}`,
	`{.spec.many.k09999}`, `{.spec.list[*]}`, `{.status.count}`, `{.spec.maps.a.a}`, `{.spec['<&>']}`, `{.spec['\u2028']}`,
	`{.spec.esc}`, `{.data.esc}`, `{.binaryData.all}`}

// projTree is the tree of keys a projection keeps (jsonpath.Path.Fields of its paths).
type projTree struct {
	leaf     bool
	children map[string]*projTree
}

func newProjTree(exprs []string) *projTree {
	root := &projTree{children: map[string]*projTree{}}
	for _, e := range exprs {
		for _, path := range jsonpath.MustCompile(e).Fields() {
			n := root
			for _, k := range path {
				if n.leaf {
					break
				}
				if n.children[k] == nil {
					n.children[k] = &projTree{children: map[string]*projTree{}}
				}
				n = n.children[k]
			}
			n.leaf, n.children = true, nil
		}
	}
	return root
}

// covers reports whether p reads only what the projection keeps.
func (t *projTree) covers(p *jsonpath.Path) bool {
	for _, path := range p.Fields() {
		if len(path) == 0 {
			return false
		}
		if path[0] == "metadata" || path[0] == "apiVersion" || path[0] == "kind" {
			continue
		}
		n := t
		for _, k := range path {
			if n.leaf {
				break
			}
			if n = n.children[k]; n == nil {
				return false
			}
		}
		if !n.leaf {
			return false
		}
	}
	return true
}

// project is obj as the projection keeps it: apiVersion, kind and metadata, and of the rest
// the keys the tree names; an object on the way keeps only those keys, anything else is
// kept whole.
func project(obj map[string]any, t *projTree) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		if k == "apiVersion" || k == "kind" || k == "metadata" {
			out[k] = v
		} else if c := t.children[k]; c != nil {
			out[k] = projectValue(v, c)
		}
	}
	return out
}

func projectValue(v any, t *projTree) any {
	m, ok := v.(map[string]any)
	if t.leaf || !ok {
		return v
	}
	out := map[string]any{}
	for k, v := range m {
		if c := t.children[k]; c != nil {
			out[k] = projectValue(v, c)
		}
	}
	return out
}

// fidPaths are JSONPath expressions on the odd fields, printed by kindex and by client-go's
// util/jsonpath (AllowMissingKeys) on the server's object.
var fidPaths = []string{
	`{.spec.i53p1}`, `{.spec.i53m1}`, `{.spec.max}`, `{.spec.min}`, `{.spec.over}`, `{.spec.huge}`,
	`{.spec.negzero}`, `{.spec.negzerof}`, `{.spec.f01}`, `{.spec.f1e21}`, `{.spec.f1e20}`, `{.spec.fsmall}`,
	`{.spec.f5}`, `{.spec.fmax}`, `{.spec.fden}`, `{.spec.f17}`, `{.spec.list[*]}`, `{.status.count} {.status.ratio}`,
	`{.spec.esc}`, `{.spec.nul}`, `{.spec.lone}`, `{.spec.pair}`, `{.spec.rev}`, `{.spec.emoji}`, `{.spec.badutf8}`,
	`{.spec.list[*]}`, `{.spec.long}`,
	`{.spec.a\.b}`, `{.spec.ключ}`, `{.spec.metadata.name}`, `{.spec.many.k09999}`, `{.spec.empty.s}`,
	`{.metadata.labels.example\.com/a\.b}`, `{.metadata.annotations.kindex\.test/nl}`,
	`{.metadata.ownerReferences[*].uid}`, `{.metadata.name}`,
	`{.spec.big}`, `{.spec.flt}`, `{.spec.str}`,
	`{.data.dots}`, `{.data.esc}`, `{.binaryData.all}`, `{.data.bin}`,
	// Maps and lists print as JSON (floats, escapes, HTML characters, sorted keys).
	`{.spec.list}`, `{.status}`, `{.spec.empty}`, `{.metadata.annotations}`, `{.metadata.labels}`, `{.spec.metadata}`,
	`{.data}`, `{.spec.list[-1]}`, `{.spec.list[2:4]}`, `{.spec.empty.nested[*]}`,
	`{.spec.maps.a.a.a.a}`, `{.spec.lists[0][0][0]}`,
	`{.spec.items[*].metadata.name}`, `{.spec.metadata.managedFields[*].manager}`, `{.managedFields}`, `{.name}/{.resourceVersion}`, `{.object}`,
}

// TestFidelityAcrossModes creates objects whose content is hard on JSON decoders (integers
// beyond 2^53 and at int64's bounds, negative zero, floats, every string escape, NUL, lone
// surrogates, invalid UTF-8, 100 KB strings, nesting up to the deepest object the server
// serves, odd and 10,000 keys, labels and annotations with empty values, binary ConfigMap
// and Secret data) and requires every mode to hand out exactly the object the server
// returns to client-go, managedFields aside: the unstructured mode; the compact mode with
// spans, compressed over watch-list, projected (against the server's object projected),
// keeping managedFields (against the server's object with them), and compressed after a
// warm restart from a snapshot (no LIST), each through Get, Item.Object,
// Item.DecodeInto (a map, and the typed ConfigMap and Secret) and Item.Raw; labels and
// annotations read from items; the metadata-only mode's metadata. Item.Eval of JSONPath
// expressions on the odd fields prints what client-go's util/jsonpath prints on the
// server's object, and indexes on a big integer, a float and an escaped string hold the
// same values in every mode and answer equality and numeric range queries as the server's
// values say. All of it is checked after the initial lists, after the same objects are
// created again through the watch, after deep updates, and after deletes.
func TestFidelityAcrossModes(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	group, _, gvr := installWidgets(t)
	dyn := cp.Dynamic(t)
	cs := cp.Clientset(t)
	mc := must(metadata.NewForConfig(cp.AdminConfig()))
	widgets := dyn.Resource(gvr).Namespace(ns)
	cmGVR := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secGVR := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	resources := map[string]schema.GroupVersionResource{"widgets." + group: gvr, "configmaps": cmGVR, "secrets": secGVR}

	post := func(path, body string) error {
		t.Helper()
		return cs.CoreV1().RESTClient().Post().AbsPath(path).SetHeader("Content-Type", "application/json").
			Body([]byte(body)).Do(ctx).Error()
	}
	createAll := func(prefix string) {
		t.Helper()
		for name, body := range fidWidgets(group, prefix) {
			err := post("/apis/"+group+"/v1/namespaces/"+ns+"/widgets", body)
			if err != nil && strings.HasPrefix(name, "deep") {
				// The server may store a deep object and fail to answer in time (its
				// managedFields take seconds this deep; the request timeout here is 5 s).
				t.Logf("creating %s%s: %v", prefix, name, err)
				testenv.Eventually(t, 30*time.Second, func() bool {
					_, err := widgets.Get(ctx, prefix+name, metav1.GetOptions{})
					return err == nil
				}, "%s%s created", prefix, name)
				continue
			}
			require.NoError(t, err, "create %s: %.200s", name, body)
		}
		all := make([]byte, 256)
		for i := range all {
			all[i] = byte(i)
		}
		bigBin := bytes.Repeat(all, 400)
		cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + prefix + `cm","labels":{"a.b/c":""}},` +
			`"data":{"dots":"..","esc":"\u0000\"\\\ud800😀\u2028","empty":"",".a":"x","a.b":"y","_":"z","bin":"\u00ff\u00fe"},` +
			`"binaryData":{"all":"` + base64.StdEncoding.EncodeToString(all) + `","none":"","big":"` + base64.StdEncoding.EncodeToString(bigBin) + `"}}`
		require.NoError(t, post("/api/v1/namespaces/"+ns+"/configmaps", cm))
		sec := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"` + prefix + `secret"},"type":"Opaque",` +
			`"data":{"all":"` + base64.StdEncoding.EncodeToString(all) + `","empty":"","k.e-y_":"` + base64.StdEncoding.EncodeToString([]byte("\x00\xff")) + `"}}`
		require.NoError(t, post("/api/v1/namespaces/"+ns+"/secrets", sec))
	}
	t0 := time.Now()
	createAll("")
	t.Logf("created in %v", time.Since(t0).Round(time.Millisecond))

	// Each mode: a factory on the namespace, with an informer per resource and the same
	// indexes on the widgets.
	type mode struct {
		name string
		f    *dynamicinformer.Factory
		infs map[string]*dynamicinformer.Informer // by resource name
		raw  bool                                 // Items carry JSON bytes
	}
	indexes := map[string]string{"big": "{.spec.big}", "flt": "{.spec.flt}", "str": "{.spec.str}"}
	snapDir := t.TempDir()
	logs := &testsupport.Lines{}
	restartRec := testsupport.NewRecorder()
	newFactory := func(name string) (*dynamicinformer.Factory, bool) {
		opts := dynamicinformer.Options{Namespace: ns, Logger: logs.Logger(0)}
		switch name {
		case "unstructured":
			return must(dynamicinformer.NewFactory(cp.AdminConfig(), opts)), false
		case "compact-spans": // projected below is the compact mode without spans
			return must(dynamicinformer.NewCompactFactory(cp.AdminConfig(), opts, dynamicinformer.CompactOptions{Spans: true})), true
		case "compressed-watchlist": // the others list with the compact mode's streamed LIST
			return must(dynamicinformer.NewCompactFactory(cp.AdminConfig(), opts, dynamicinformer.CompactOptions{WatchList: true, Compress: true})), true
		case "keep-managed":
			opts.KeepManagedFields = true
			return must(dynamicinformer.NewCompactFactory(cp.AdminConfig(), opts, dynamicinformer.CompactOptions{})), true
		case "projected":
			return must(dynamicinformer.NewCompactFactory(cp.AdminConfig(), opts, dynamicinformer.CompactOptions{Projection: fidProjection})), true
		case "snapshot", "snapshot-restarted":
			opts.SnapshotDir, opts.SnapshotPlainSecrets = snapDir, true
			cfg := cp.AdminConfig()
			if name == "snapshot-restarted" {
				cfg.Wrap(restartRec.Wrap)
			}
			return must(dynamicinformer.NewCompactFactory(cfg, opts, dynamicinformer.CompactOptions{Compress: true})), true
		}
		panic(name)
	}
	startMode := func(name string) *mode {
		t.Helper()
		f, raw := newFactory(name)
		fctx, cancel := context.WithCancel(ctx)
		t.Cleanup(func() { cancel(); f.Shutdown() })
		require.NoError(t, f.Start(fctx))
		m := &mode{name: name, f: f, infs: map[string]*dynamicinformer.Informer{}, raw: raw}
		for res := range resources {
			inf, err := f.Informer(ctx, res)
			require.NoError(t, err, "%s %s", name, res)
			m.infs[res] = inf
		}
		w := m.infs["widgets."+group]
		for n, p := range indexes {
			require.NoError(t, w.AddIndex(n, p), name)
		}
		return m
	}

	// The snapshot: one compact factory syncs, writes its snapshot on shutdown, and a new
	// one serves it.
	start := time.Now()
	snap := startMode("snapshot")
	for _, inf := range snap.infs {
		waitSync(t, inf)
	}
	snap.f.Shutdown()
	var modes []*mode
	for _, name := range []string{"unstructured", "compact-spans", "compressed-watchlist", "projected", "keep-managed", "snapshot-restarted"} {
		modes = append(modes, startMode(name))
	}
	restarted := modes[len(modes)-1]
	for _, inf := range restarted.infs {
		testenv.Eventually(t, 30*time.Second, inf.Queryable, "queryable from the snapshot")
	}
	for _, m := range modes {
		for _, inf := range m.infs {
			waitSync(t, inf)
		}
	}
	for res, inf := range restarted.infs {
		st := inf.Status()
		require.False(t, st.SnapshotTime.IsZero(), "%s served a snapshot: %+v", res, st)
		lists, _ := restartRec.Count("/namespaces/" + ns + "/" + strings.SplitN(res, ".", 2)[0])
		require.Zero(t, lists, "%s: no LIST after the restart\n%s", res, logs)
	}
	mf := must(metadataonly.NewFactory(cp.AdminConfig(), metadataonly.Options{Namespace: ns}))
	mctx, mcancel := context.WithCancel(ctx)
	t.Cleanup(func() { mcancel(); mf.Shutdown() })
	require.NoError(t, mf.Start(mctx))
	minfs := map[string]*metadataonly.Informer{}
	for res := range resources {
		minfs[res] = must(mf.Informer(ctx, res))
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		require.NoError(t, minfs[res].WaitForSync(sctx))
		cancel()
	}
	t.Logf("synced in %v", time.Since(start).Round(time.Millisecond))

	projTree := newProjTree(fidProjection)
	paths := map[string]*jsonpath.Path{}
	for _, p := range fidPaths {
		paths[p] = jsonpath.MustCompile(p)
	}

	// server lists the server's objects of every resource, managedFields dropped, by
	// resource and name; full has them with their managedFields.
	var full map[string]map[string]*unstructured.Unstructured
	server := func() map[string]map[string]*unstructured.Unstructured {
		out := map[string]map[string]*unstructured.Unstructured{}
		full = map[string]map[string]*unstructured.Unstructured{}
		for res, r := range resources {
			// client-go cannot decode a LIST of the deepest widget: names from the
			// metadata client, objects by GET.
			l, err := mc.Resource(r).Namespace(ns).List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			out[res], full[res] = map[string]*unstructured.Unstructured{}, map[string]*unstructured.Unstructured{}
			for _, m := range l.Items {
				o, err := dyn.Resource(r).Namespace(ns).Get(ctx, m.Name, metav1.GetOptions{})
				require.NoError(t, err)
				require.NotEmpty(t, o.GetManagedFields())
				full[res][o.GetName()] = o.DeepCopy()
				unstructured.RemoveNestedField(o.Object, "metadata", "managedFields")
				out[res][o.GetName()] = o
			}
		}
		return out
	}
	// caught waits until every mode holds the server's resourceVersions of every resource.
	caught := func(want map[string]map[string]*unstructured.Unstructured) {
		t.Helper()
		for res := range resources {
			rvs := map[string]string{}
			for n, o := range want[res] {
				rvs[n] = o.GetResourceVersion()
			}
			for _, m := range modes {
				var got map[string]string
				testenv.EventuallyWith(t, 30*time.Second, func() bool {
					got = nameRVs(must(m.infs[res].List(nil)))
					return reflect.DeepEqual(rvs, got)
				}, func() string { return fmt.Sprintf("%s %s: want %v, got %v", m.name, res, rvs, got) })
			}
			testenv.EventuallyWith(t, 30*time.Second, func() bool {
				return reflect.DeepEqual(rvs, nameRVs(must(minfs[res].List(nil))))
			}, func() string { return fmt.Sprintf("metadata-only %s: want %v", res, rvs) })
		}
	}

	var compared, evaluated int
	checkedRV := map[string]string{}
	check := func(stage string) {
		t.Helper()
		t0 := time.Now()
		defer func() { t.Logf("%s: checked in %v", stage, time.Since(t0).Round(time.Millisecond)) }()
		want := server()
		caught(want)
		t.Logf("%s: server read and caught up in %v", stage, time.Since(t0).Round(time.Millisecond))
		// The typed objects, as client-go's typed client decodes them.
		typedCMs, typedSecrets := map[string]*corev1.ConfigMap{}, map[string]*corev1.Secret{}
		for _, cm := range must(cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})).Items {
			cm.ManagedFields, cm.TypeMeta = nil, metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
			typedCMs[cm.Name] = &cm
		}
		for _, sec := range must(cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})).Items {
			sec.ManagedFields, sec.TypeMeta = nil, metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
			typedSecrets[sec.Name] = &sec
		}
		for res, objs := range want {
			for name, o := range objs {
				// Objects already checked at this resourceVersion were checked in every
				// mode; their cached state cannot have changed without a new version.
				if checkedRV[res+"/"+name] == o.GetResourceVersion() {
					continue
				}
				checkedRV[res+"/"+name] = o.GetResourceVersion()
				texts := map[bool]map[string]string{} // by projected: expr -> client-go's text
				for _, projected := range []bool{false, true} {
					obj := o.Object
					if projected {
						obj = project(obj, projTree)
					}
					texts[projected] = map[string]string{}
					for expr, p := range paths {
						if projected && !projTree.covers(p) {
							continue
						}
						if text, ok := clientGoText(expr, obj); ok {
							texts[projected][expr] = text
						}
					}
				}
				for _, m := range modes {
					what := fmt.Sprintf("%s: %s: %s %s", stage, m.name, res, name)
					inf := m.infs[res]
					o := o
					switch m.name {
					case "projected":
						o = &unstructured.Unstructured{Object: project(o.Object, projTree)}
					case "keep-managed":
						o = full[res][name]
					}
					got, err := inf.Get(ns, name)
					require.NoError(t, err, what)
					requireSameObject(t, o.Object, got.Object, what+": Get")
					compared++
					it, err := inf.GetItem(ns, name)
					require.NoError(t, err, what)
					obj, err := it.Object()
					require.NoError(t, err, what)
					requireSameObject(t, o.Object, obj.Object, what+": Item.Object")
					// DecodeInto: into a map (typedjson's numbers, strings and nesting) and,
					// for ConfigMaps and Secrets, into their types.
					var into map[string]any
					require.NoError(t, it.DecodeInto(&into), what)
					requireSameObject(t, o.Object, into, what+": Item.DecodeInto(map)")
					switch {
					case m.name == "projected" || m.name == "keep-managed": // the typed objects are whole, without managedFields
					case res == "configmaps":
						var cm corev1.ConfigMap
						require.NoError(t, it.DecodeInto(&cm), what)
						require.Equal(t, typedCMs[name], &cm, what+": Item.DecodeInto(ConfigMap)")
					case res == "secrets":
						var sec corev1.Secret
						require.NoError(t, it.DecodeInto(&sec), what)
						require.Equal(t, typedSecrets[name], &sec, what+": Item.DecodeInto(Secret)")
					}
					if m.raw {
						var fromRaw map[string]any
						require.NoError(t, utiljson.Unmarshal(it.Raw(), &fromRaw), what)
						requireSameObject(t, o.Object, fromRaw, what+": Item.Raw")
					} else {
						require.Nil(t, it.Raw(), what)
					}
					// Labels and annotations as the item reads them, without decoding.
					require.Equal(t, o.GetLabels(), nilIfEmpty(it.Labels()), what+": Item.Labels")
					require.Equal(t, o.GetAnnotations(), nilIfEmpty(it.Annotations()), what+": Item.Annotations")
					for expr, wantText := range texts[m.name == "projected"] {
						p := paths[expr]
						vs, err := it.Eval(p)
						require.NoError(t, err, "%s: Eval %s", what, expr)
						require.Equal(t, wantText, valuesText(vs), "%s: Eval %s", what, expr)
						evaluated++
					}
				}
				mo, err := minfs[res].Get(ns, name)
				require.NoError(t, err)
				what := fmt.Sprintf("%s: metadata-only: %s %s", stage, res, name)
				require.Equal(t, o.GetName(), mo.Name, what)
				require.Equal(t, o.GetNamespace(), mo.Namespace, what)
				require.Equal(t, o.GetUID(), mo.UID, what)
				require.Equal(t, o.GetResourceVersion(), mo.ResourceVersion, what)
				require.Equal(t, o.GetLabels(), nilIfEmpty(mo.Labels), what)
				require.Equal(t, o.GetAnnotations(), nilIfEmpty(mo.Annotations), what)
				require.Equal(t, o.GetOwnerReferences(), nilIfNone(mo.OwnerReferences), what)
				require.Equal(t, o.GetFinalizers(), nilIfNone(mo.Finalizers), what)
			}
		}
		checkFidelityIndexes(t, ctx, stage, want["widgets."+group], func(yield func(string, *dynamicinformer.Informer) bool) {
			for _, m := range modes {
				if !yield(m.name, m.infs["widgets."+group]) {
					return
				}
			}
		})
	}
	check("listed")
	// What the server made of the text it was sent (compared above, whatever it is).
	srv := server()
	numbers := srv["widgets."+group]["numbers"].Object["spec"].(map[string]any)
	strs := srv["widgets."+group]["strings"].Object["spec"].(map[string]any)
	t.Logf("the server holds: -0 %T %v, -0.0 %T %v, 184467440737095516160000 %T %v, 5.0 %T %v, 1e21 %T %v, \\ud800 %q, invalid UTF-8 %q",
		numbers["negzero"], numbers["negzero"], numbers["negzerof"], numbers["negzerof"], numbers["huge"], numbers["huge"],
		numbers["f5"], numbers["f5"], numbers["f1e21"], numbers["f1e21"], strs["lone"], strs["badutf8"])
	for _, m := range modes {
		if m.name == "projected" {
			raw := string(must(m.infs["widgets."+group].GetItem(ns, "numbers")).Raw())
			require.Contains(t, raw, `"list":[`)
			require.NotContains(t, raw, "i53p1", "the projection dropped the other fields")
		}
	}

	// Through the watch: the same objects created again, then deep values changed.
	createAll("late-")
	check("created through the watch")

	patch := func(name, body string) {
		t.Helper()
		_, err := widgets.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		require.NoError(t, err, "patch %s", name)
	}
	for _, prefix := range []string{"", "late-"} {
		patch(prefix+"numbers", `{"spec":{"max":-9223372036854775808,"min":9223372036854775807,"f01":0.2,"list":[1e-7,-0.0,18446744073709551615]}}`)
		patch(prefix+"strings", `{"spec":{"esc":"\u0000\ud800\"","long":null,"new":"\udfff"}}`)
		// A merge patch this deep fails in the server (its patch code); an update does not.
		deep, err := widgets.Get(ctx, prefix+"deep", metav1.GetOptions{})
		require.NoError(t, err)
		leaf := deep.Object["spec"].(map[string]any)["maps"].(map[string]any)
		for range fidDepth - 2 {
			leaf = leaf["a"].(map[string]any)
		}
		leaf["a"] = map[string]any{"a": "changed", "b": 9007199254740993, "c": 0.1}
		_, err = widgets.Update(ctx, deep, metav1.UpdateOptions{})
		require.NoError(t, err)
		patch(prefix+"keys", `{"spec":{"":"changed","many":{"k00000":null,"k09999":"changed"}}}`)
		patch(prefix+"meta", `{"metadata":{"labels":{"example.com/a.b":null,"new.io/k":""},"annotations":{"kindex.test/empty":"now set"}}}`)
		patch(prefix+"idx1", `{"spec":{"big":9223372036854775806,"flt":1e22,"str":"\"changed\""}}`)
		patch(prefix+"idx-none", `{"spec":{"big":-1}}`)
	}
	check("updated through the watch")

	// Deletes: every mode drops the objects.
	for _, name := range []string{"numbers", "strings", "deep", "keys", "late-keys", "idx2", "late-idx3"} {
		require.NoError(t, widgets.Delete(ctx, name, metav1.DeleteOptions{}))
	}
	require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, "cm", metav1.DeleteOptions{}))
	require.NoError(t, cs.CoreV1().Secrets(ns).Delete(ctx, "late-secret", metav1.DeleteOptions{}))
	check("deleted through the watch")
	for _, m := range modes {
		_, err := m.infs["widgets."+group].Get(ns, "numbers")
		require.True(t, apierrors.IsNotFound(err), "%s: %v", m.name, err)
	}
	t.Logf("whole test: %v; %d objects compared, %d JSONPath evaluations", time.Since(start).Round(time.Millisecond), compared, evaluated)
}

// checkFidelityIndexes requires the indexes big, flt and str of every mode to hold the
// values client-go's util/jsonpath prints for the server's objects, and the same answers
// to equality, existence and numeric range queries, computed from the server's objects.
func checkFidelityIndexes(t *testing.T, ctx context.Context, stage string, objs map[string]*unstructured.Unstructured,
	modes func(func(string, *dynamicinformer.Informer) bool),
) {
	t.Helper()
	type want struct {
		counts map[string]int
		byVal  map[string][]string
	}
	wants := map[string]want{}
	for _, idx := range []string{"big", "flt", "str"} {
		w := want{counts: map[string]int{}, byVal: map[string][]string{}}
		for name, o := range objs {
			if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", idx); !found {
				continue
			}
			text, ok := clientGoText("{.spec."+idx+"}", o.Object)
			require.True(t, ok)
			w.counts[text]++
			w.byVal[text] = append(w.byVal[text], name)
		}
		wants[idx] = w
	}
	// Numeric ranges over the big integers and floats, exact: 2^53+1 > 2^53.
	ranges := []struct {
		idx, op, bound string
	}{
		{"big", ">", "9007199254740992"}, {"big", ">=", "9007199254740993"}, {"big", "<", "-9223372036854775807"},
		{"big", ">", "9223372036854775806"}, {"big", "<=", "0"}, {"flt", ">", "1e20"}, {"flt", "<", "1e-7"},
		{"flt", ">=", "0.1"}, {"flt", "<=", "0"},
	}
	rangeWant := func(idx, op, bound string) []string {
		b, _, err := big.ParseFloat(bound, 10, 200, big.ToNearestEven)
		require.NoError(t, err)
		var out []string
		for name, o := range objs {
			v, found, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", idx)
			if !found {
				continue
			}
			var x *big.Float
			switch v := v.(type) {
			case int64:
				x = new(big.Float).SetPrec(200).SetInt64(v)
			case float64:
				x = new(big.Float).SetPrec(200).SetFloat64(v)
			default:
				continue
			}
			c := x.Cmp(b)
			if (op == ">" && c > 0) || (op == ">=" && c >= 0) || (op == "<" && c < 0) || (op == "<=" && c <= 0) {
				out = append(out, o.GetNamespace()+"/"+name)
			}
		}
		sort.Strings(out)
		return out
	}
	cond := func(idx, op, bound string) query.Condition {
		switch op {
		case ">":
			return query.Gt(idx, bound)
		case ">=":
			return query.Ge(idx, bound)
		case "<":
			return query.Lt(idx, bound)
		}
		return query.Le(idx, bound)
	}
	var ns string
	for _, o := range objs {
		ns = o.GetNamespace()
	}
	for name, inf := range modes {
		what := stage + ": " + name
		for idx, w := range wants {
			got, err := inf.CountBy(ctx, query.Query{}, idx)
			require.NoError(t, err, what)
			require.Equal(t, w.counts, got, "%s: values of index %s", what, idx)
			for val, names := range w.byVal {
				var keys []string
				for _, n := range names {
					keys = append(keys, ns+"/"+n)
				}
				sort.Strings(keys)
				res, err := inf.QueryItems(ctx, query.Query{Conditions: []query.Condition{query.Eq(idx, val)}})
				require.NoError(t, err, what)
				var gotKeys []string
				for _, it := range res.Items {
					gotKeys = append(gotKeys, it.Key())
				}
				require.Equal(t, keys, gotKeys, "%s: %s == %q", what, idx, val)
			}
		}
		for _, r := range ranges {
			res, err := inf.QueryItems(ctx, query.Query{Conditions: []query.Condition{cond(r.idx, r.op, r.bound)}})
			require.NoError(t, err, what)
			var gotKeys []string
			for _, it := range res.Items {
				gotKeys = append(gotKeys, it.Key())
			}
			require.Equal(t, rangeWant(r.idx, r.op, r.bound), gotKeys, "%s: %s %s %s", what, r.idx, r.op, r.bound)
		}
	}
}

// clientGoText is what client-go's util/jsonpath prints for expr on obj, as kubectl and
// index functions use it (AllowMissingKeys); ok is false when it fails.
func clientGoText(expr string, obj map[string]any) (text string, ok bool) {
	jp := k8sjsonpath.New("fid").AllowMissingKeys(true)
	if err := jp.Parse(expr); err != nil {
		return "", false
	}
	var buf bytes.Buffer
	if err := jp.Execute(&buf, obj); err != nil {
		return "", false
	}
	return buf.String(), true
}

// valuesText prints values as a single JSONPath action does: separated by spaces.
func valuesText(vs []jsonpath.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, " ")
}

func nilIfEmpty[M ~map[string]string](m M) M {
	if len(m) == 0 {
		return nil
	}
	return m
}

func nilIfNone[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

// requireSameObject fails with the first path where got differs from want.
func requireSameObject(t *testing.T, want, got map[string]any, what string) {
	t.Helper()
	if reflect.DeepEqual(want, got) {
		return
	}
	t.Fatalf("%s: differs from the server's object at %s", what, firstDiff("", want, got))
}

func firstDiff(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want a map, got %T", path, got)
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range w {
				if !yield(k) {
					return
				}
			}
		})
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s[%q]: missing", path, k)
			}
			if !reflect.DeepEqual(w[k], gv) {
				return firstDiff(path+"["+strconv.Quote(k)+"]", w[k], gv)
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				return fmt.Sprintf("%s[%q]: unexpected", path, k)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: want a list of %d, got %T of %d", path, len(w), got, len(g))
		}
		for i := range w {
			if !reflect.DeepEqual(w[i], g[i]) {
				return firstDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])
			}
		}
	}
	return fmt.Sprintf("%s: want %T %.200q, got %T %.200q", path, want, fmt.Sprint(want), got, fmt.Sprint(got))
}
