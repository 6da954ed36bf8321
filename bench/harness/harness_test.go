package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kindex/kindex/internal/testenv"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) {
	// The harness re-executes this test binary to measure each subject.
	if IsChild() {
		os.Exit(RunChild())
	}
	testenv.Main(m, &cp, testenv.Options{ExtraAPIServerArgs: APIServerArgs})
}

// TestRunEndToEnd runs the whole harness on 50 pods and 5 Databases: every subject must sync
// every object and report a positive time and heap; a second run must find the seed complete.
func TestRunEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 50
	rep, err := Run(ctx, cp.AdminConfig(), Options{N: n, Runs: 1, Log: testLog{t}, Command: t.Name()})
	require.NoError(t, err)

	assert.Equal(t, n, rep.Seed.CreatedPods)
	assert.Equal(t, n/10, rep.Seed.CreatedDatabases)
	assert.Greater(t, rep.Seed.PodSizes.AvgJSONBytes, 5000.0, "seeded pods are realistic")
	assert.Greater(t, rep.Seed.PodSizes.ManagedFieldsShare, 0.3)
	assert.Len(t, rep.Seed.PodSizes.Managers, 2, "two field managers: %v", rep.Seed.PodSizes.Managers)

	require.Len(t, rep.Datasets, 2)
	for _, d := range rep.Datasets {
		require.Len(t, d.Subjects, len(Subjects()))
		for _, s := range d.Subjects {
			if s.Name == SubjectListProtobuf && d.GVR == DatabasesGVR {
				assert.True(t, s.NotSupported, "custom resources have no protobuf encoding")
				continue
			}
			require.Empty(t, s.Error, "%s on %s", s.Name, d.Resource)
			require.Len(t, s.Runs, 1, "%s on %s", s.Name, d.Resource)
			m := s.Runs[0]
			assert.Equal(t, d.Count, m.Count, "%s on %s", s.Name, d.Resource)
			assert.Positive(t, m.Seconds, "%s on %s", s.Name, d.Resource)
			assert.Positive(t, m.HeapBytes, "%s on %s", s.Name, d.Resource)
			assert.Positive(t, m.BodyBytes, "%s on %s", s.Name, d.Resource)
			assert.NotEmpty(t, s.Path, "%s on %s", s.Name, d.Resource)
		}
	}
	pods := rep.Datasets[0]
	assert.Equal(t, "watch-list", strings.SplitN(find(t, pods, SubjectDynamic).Path, ",", 2)[0])
	assert.Equal(t, "list+watch", strings.SplitN(find(t, pods, SubjectDynamicPaged).Path, ",", 2)[0])
	assert.InDelta(t, 1, find(t, pods, SubjectDynamic).TimeVsDynamic, 1e-9)
	assert.Positive(t, find(t, pods, SubjectMetadata).HeapVsDynamic)

	md := rep.Markdown()
	for _, s := range Subjects() {
		assert.Contains(t, md, "| "+s.Name()+" |")
	}
	_, err = json.Marshal(rep)
	require.NoError(t, err)

	// The seed is idempotent: a second run writes nothing.
	rep, err = Run(ctx, cp.AdminConfig(), Options{N: n, Runs: 1, Subjects: []string{SubjectListJSON}, NoWarmup: true, Log: testLog{t}})
	require.NoError(t, err)
	assert.Zero(t, rep.Seed.CreatedPods)
	assert.Zero(t, rep.Seed.CreatedDatabases)
	assert.Len(t, rep.Datasets[0].Subjects, 1)
}

func find(t *testing.T, d Dataset, name string) SubjectResult {
	t.Helper()
	for _, s := range d.Subjects {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no subject %s in %s", name, d.Resource)
	return SubjectResult{}
}

func TestCountItems(t *testing.T) {
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
	for _, name := range []string{"a", "b", "c"} {
		list.Items = append(list.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	var pb bytes.Buffer
	require.NoError(t, protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(list, &pb))
	n, err := countProtobufItems(pb.Bytes())
	require.NoError(t, err)
	assert.Equal(t, 3, n)

	js, err := json.Marshal(list)
	require.NoError(t, err)
	n, err = countJSONItems(js)
	require.NoError(t, err)
	assert.Equal(t, 3, n)

	_, err = countJSONItems([]byte(`{"items":`))
	assert.Error(t, err)
	_, err = countProtobufItems([]byte(`{}`))
	assert.Error(t, err)
}

func TestNamesAreDistinctAndStable(t *testing.T) {
	seen := map[string]bool{}
	for i := range 100_000 {
		name := PodName(i)
		require.False(t, seen[name], "duplicate pod name %s at %d", name, i)
		seen[name] = true
	}
	assert.Equal(t, PodName(12345), PodName(12345))
	assert.Equal(t, newPod("ns", 7), newPod("ns", 7))
}

func TestHelpers(t *testing.T) {
	assert.Equal(t, 0.0, median(nil))
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	assert.Equal(t, int64(123456<<10), parseVmHWM(strings.NewReader("Name:\tx\nVmPeak:\t 9 kB\nVmHWM:\t  123456 kB\n")))
	assert.Equal(t, "watch-list, json, gzip", accessPath(Measurement{Gzip: true, Requests: []string{
		"GET /api -> 200 OK (application/json)",
		"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions?sendInitialEvents=true&watch=true -> 200 OK (application/vnd.kubernetes.protobuf)",
		"GET /api/v1/namespaces/x/pods?allowWatchBookmarks=true&sendInitialEvents=true&watch=true -> 200 OK (application/json)",
	}}, "pods"))
	assert.Equal(t, "list+watch, 2 lists, json", accessPath(Measurement{Requests: []string{
		"GET /api/v1/namespaces/x/pods?limit=500 -> 200 OK (application/json)",
		"GET /api/v1/namespaces/x/pods?continue=abc&limit=500 -> 200 OK (application/json)",
		"GET /api/v1/namespaces/x/pods?watch=true -> 200 OK (application/json)",
	}}, "pods"))
	res, err := parseResult([]byte("noise\n" + resultPrefix + `{"error":"boom","not_supported":true}` + "\n"))
	require.NoError(t, err)
	assert.True(t, res.NotSupported)
	_, err = parseResult([]byte("no result here\n"))
	assert.ErrorIs(t, err, errNoResult)
}

// testLog sends the harness's progress lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestParseStatCPU(t *testing.T) {
	// A command name with spaces and a closing parenthesis; utime 250 and stime 50 ticks.
	stat := "1234 (kube apiserver) (x)) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0"
	if got, want := parseStatCPU(stat), 3*time.Second; got != want {
		t.Fatalf("parseStatCPU = %v, want %v", got, want)
	}
	if got := parseStatCPU("garbage"); got != 0 {
		t.Fatalf("parseStatCPU(garbage) = %v, want 0", got)
	}
	if got := processesCPU([]int{os.Getpid()}); got < 0 {
		t.Fatalf("processesCPU(self) = %v", got)
	}
}

// LIST requests are GETs of the resource's collection without watch=true: watches,
// watch-list probes and other paths do not count.
func TestCountLists(t *testing.T) {
	reqs := []string{
		"GET /api/v1/namespaces/ns/pods?limit=500&resourceVersion=0 -> 200 OK (application/json)",
		"GET /api/v1/namespaces/ns/pods?allowWatchBookmarks=true&resourceVersion=5&watch=true -> 200 OK (application/json)",
		"GET /api/v1/namespaces/ns/pods?fieldSelector=metadata.name%3Da&sendInitialEvents=true&watch=true -> 200 OK",
		"GET /api/v1/namespaces/ns/pods -> 200 OK",
		"GET /api/v1/namespaces/other/pods -> 200 OK",
		"GET /api/v1 -> 200 OK",
		"POST /api/v1/namespaces/ns/pods -> 201 Created",
	}
	require.Equal(t, 2, countLists(reqs, PodsGVR, "ns"))
}
