package dynamicinformer_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/internal/testenv"
	"github.com/kindex/kindex/internal/testsupport"
	"github.com/kindex/kindex/metadataonly"
)

// objID is what identifies one version of an object: its UID and resourceVersion.
type objID struct{ UID, RV string }

// seenState is the state a handler was told: name -> the version it last got.
type seenState struct {
	mu   sync.Mutex
	objs map[string]objID
	// deleted counts the deletions handed to the handler.
	deleted int
}

func newSeenState() *seenState { return &seenState{objs: map[string]objID{}} }

func (s *seenState) deletions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleted
}

func (s *seenState) handler() cache.ResourceEventHandler {
	set := func(o any) {
		m, err := meta.Accessor(o)
		if err != nil {
			panic(err)
		}
		s.mu.Lock()
		s.objs[m.GetName()] = objID{string(m.GetUID()), m.GetResourceVersion()}
		s.mu.Unlock()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, o any) { set(o) },
		DeleteFunc: func(o any) {
			key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(o)
			s.mu.Lock()
			delete(s.objs, key[strings.LastIndex(key, "/")+1:])
			s.deleted++
			s.mu.Unlock()
		},
	}
}

func (s *seenState) get() map[string]objID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.objs)
}

// churnSubject is one cache under test: a single informer or a watch-all set's member, in
// one storage mode, with a handler.
type churnSubject struct {
	name string
	// cached lists the cache; ok is false when there is no informer (a set without the member).
	cached func() (objs map[string]objID, ok bool)
	status func() string
	// parked reports whether the subject makes no requests: a parked informer, or a set
	// without the member.
	parked func() bool
	seen   *seenState
	rec    *testsupport.Recorder
}

// idsOf returns name -> objID of objs.
func idsOf[T metav1.Object](objs []T) map[string]objID {
	out := map[string]objID{}
	for _, o := range objs {
		out[o.GetName()] = objID{string(o.GetUID()), o.GetResourceVersion()}
	}
	return out
}

// addChurnSubjects starts a factory of one storage mode and adds two subjects to subjects: a
// single informer on the CRD's resource, and a watch-all set of the CRD's group.
func addChurnSubjects[T informer.Object](t *testing.T, subjects *[]*churnSubject, mode, ns, group string,
	newFactory func(*rest.Config, informer.Options[T]) (*informer.Factory[T], error),
) {
	t.Helper()
	ctx := context.Background()
	f, rec, _ := testsupport.StartFactory(t, cp.AdminConfig(), informer.Options[T]{Namespace: ns}, newFactory)
	single := newSeenState()
	inf, err := f.Informer(ctx, "widgets."+group, informer.WithEventHandler(single.handler()))
	require.NoError(t, err)
	t.Cleanup(inf.Release)
	*subjects = append(*subjects, &churnSubject{
		name: mode + "/informer",
		cached: func() (map[string]objID, bool) {
			objs, err := inf.List(nil)
			require.NoError(t, err)
			return idsOf(objs), true
		},
		status: func() string { return fmt.Sprintf("%+v", inf.Status()) },
		parked: func() bool { return inf.Status().Phase == informer.PhaseParked },
		seen:   single, rec: rec,
	})

	wa, err := f.WatchAll(ctx, discovery.Filter{IncludeGroups: []string{group}})
	require.NoError(t, err)
	t.Cleanup(wa.Stop)
	all := newSeenState()
	_, err = wa.AddEventHandler(func(discovery.Resource) cache.ResourceEventHandler { return all.handler() })
	require.NoError(t, err)
	gr := schema.GroupResource{Group: group, Resource: "widgets"}
	*subjects = append(*subjects, &churnSubject{
		name: mode + "/watch-all",
		cached: func() (map[string]objID, bool) {
			m, ok := wa.Informer(gr)
			if !ok {
				return nil, false
			}
			objs, err := m.List(nil)
			require.NoError(t, err)
			return idsOf(objs), true
		},
		status: func() string {
			if m, ok := wa.Informer(gr); ok {
				return fmt.Sprintf("%+v", m.Status())
			}
			return "not a member"
		},
		parked: func() bool {
			m, ok := wa.Informer(gr)
			return !ok || m.Status().Phase == informer.PhaseParked
		},
		seen: all, rec: rec,
	})
}

// churnEnv is a CRD, its objects on the server, and every subject following them.
type churnEnv struct {
	t        *testing.T
	ns       string
	group    string
	crdName  string
	ri       dynamic.ResourceInterface
	subjects []*churnSubject
}

// serverIDs lists the CRD's objects on the server; an unserved resource has none.
func (e *churnEnv) serverIDs(ctx context.Context) (map[string]objID, bool) {
	l, err := e.ri.List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return map[string]objID{}, true
	}
	if err != nil {
		return nil, false
	}
	return idsOf(slicesOfPointers(l.Items)), true
}

func slicesOfPointers[T any](in []T) []*T {
	out := make([]*T, len(in))
	for i := range in {
		out[i] = &in[i]
	}
	return out
}

// createObjects creates widgets named prefix0..prefix(n-1) and returns when they all exist.
func (e *churnEnv) createObjects(ctx context.Context, prefix string, n int) {
	e.t.Helper()
	for i := range n {
		_, err := e.ri.Create(ctx, widget(e.group, fmt.Sprint(prefix, i), int64(i)), metav1.CreateOptions{})
		require.NoError(e.t, err)
	}
}

// awaitExact waits until every subject's cache and handler state equal the server's objects
// (names, UIDs, resourceVersions) and returns, per subject, how long after since that took.
func (e *churnEnv) awaitExact(ctx context.Context, since time.Time, timeout time.Duration) map[string]time.Duration {
	e.t.Helper()
	took := map[string]time.Duration{}
	var want map[string]objID
	testenv.EventuallyWith(e.t, timeout, func() bool {
		var ok bool
		if want, ok = e.serverIDs(ctx); !ok {
			return false
		}
		for _, s := range e.subjects {
			if _, done := took[s.name]; done {
				continue
			}
			got, ok := s.cached()
			if len(want) == 0 && !ok {
				got = map[string]objID{} // a set without the member holds nothing
			}
			if maps.Equal(got, want) && maps.Equal(s.seen.get(), want) {
				took[s.name] = time.Since(since)
			}
		}
		return len(took) == len(e.subjects)
	}, func() string {
		var b strings.Builder
		fmt.Fprintf(&b, "server: %v", want)
		for _, s := range e.subjects {
			if _, done := took[s.name]; done {
				continue
			}
			got, _ := s.cached()
			fmt.Fprintf(&b, "\n%s: cache %v, handler %v, status %s", s.name, got, s.seen.get(), s.status())
		}
		return b.String()
	})
	// Once equal, they stay equal: nothing changes on the server.
	for _, s := range e.subjects {
		got, ok := s.cached()
		if len(want) == 0 && !ok {
			got = map[string]objID{}
		}
		require.Equal(e.t, want, got, "%s cache", s.name)
		require.Equal(e.t, want, s.seen.get(), "%s handler", s.name)
	}
	return took
}

// awaitParked waits until every subject is parked or has no member for the resource.
func (e *churnEnv) awaitParked(timeout time.Duration) {
	e.t.Helper()
	testenv.EventuallyWith(e.t, timeout, func() bool {
		return !slices.ContainsFunc(e.subjects, func(s *churnSubject) bool { return !s.parked() })
	}, func() string {
		var b strings.Builder
		for _, s := range e.subjects {
			fmt.Fprintf(&b, "\n%s: %s", s.name, s.status())
		}
		return b.String()
	})
}

// recorders returns the subjects' recorders, one per factory.
func (e *churnEnv) recorders() []*testsupport.Recorder {
	var out []*testsupport.Recorder
	for _, s := range e.subjects {
		if !slices.Contains(out, s.rec) {
			out = append(out, s.rec)
		}
	}
	return out
}

// requests counts every subject's lists and watches of the CRD's objects.
func (e *churnEnv) requests() int {
	n := 0
	for _, rec := range e.recorders() {
		l, w := rec.Count("/apis/" + e.group + "/v1/namespaces/" + e.ns + "/widgets")
		n += l + w
	}
	return n
}

// restart SIGKILLs the apiserver and starts it again on the same etcd.
func restartAPIServer(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	require.NoError(t, cp.RestartAPIServer(ctx, syscall.SIGKILL))
}

// createCRD creates crd without waiting for it to be served.
func createCRD(t *testing.T, crd *apiextv1.CustomResourceDefinition) {
	t.Helper()
	client := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
	_, err := client.Create(context.Background(), crd, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
}

// awaitServed waits until the resource answers a list.
func (e *churnEnv) awaitServed(ctx context.Context) {
	e.t.Helper()
	testenv.Eventually(e.t, 60*time.Second, func() bool {
		_, err := e.ri.List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil
	}, "resource %s not served", e.crdName)
}

// awaitEstablished waits until the CRD is Established. A restarted apiserver establishes a
// CRD only on an update event of its CRD informer: one whose names were accepted but which
// was not Established yet when the apiserver died stays unestablished (its objects served,
// discovery not listing it, as kubectl sees it) until that informer resyncs, 5 minutes
// later. Then the CRD is touched (a label), which is such an event.
func (e *churnEnv) awaitEstablished(ctx context.Context) {
	e.t.Helper()
	client := cp.APIExtensions(e.t).ApiextensionsV1().CustomResourceDefinitions()
	var stuckSince time.Time
	touched := false
	testenv.Eventually(e.t, 60*time.Second, func() bool {
		crd, err := client.Get(ctx, e.crdName, metav1.GetOptions{})
		if err != nil {
			return false
		}
		var established, accepted bool
		for _, c := range crd.Status.Conditions {
			established = established || c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue
			accepted = accepted || c.Type == apiextv1.NamesAccepted && c.Status == apiextv1.ConditionTrue
		}
		switch {
		case established:
			return true
		case !accepted || touched:
			return false
		case stuckSince.IsZero():
			stuckSince = time.Now()
		case time.Since(stuckSince) > 5*time.Second:
			if crd.Labels == nil {
				crd.Labels = map[string]string{}
			}
			crd.Labels["kindex.test/touched"] = "true"
			if _, err := client.Update(ctx, crd, metav1.UpdateOptions{}); err == nil {
				touched = true
				e.t.Logf("CRD %s left unestablished by the restart: touched", e.crdName)
			}
		}
		return false
	}, "CRD %s not Established", e.crdName)
}

// blindBound is how long after a re-created CRD's objects exist every cache may take to
// hold them. A parked informer resumes on discovery's event for the resource, or at its
// next re-check of discovery's cache, at most 30 s apart (the re-checks' backoff cap);
// discovery's watch of CRDs resumes within client-go's reflector backoff after the
// apiserver restarts. Generous margin for a loaded machine: 10 s.
const blindBound = 30*time.Second + 10*time.Second

// TestCRDChurnAcrossAPIServerRestarts deletes and re-creates a CRD around apiserver crashes
// (SIGKILL and a start on the same etcd): the restart with the CRD in place, while it is
// absent, during its re-creation, during its deletion, just before it is deleted and
// re-created with another schema, and with discovery's watches down meanwhile. In every
// storage mode, a single informer on the CRD's resource and a watch-all set of its group
// end with exactly the server's objects (names, UIDs, resourceVersions) in the cache and in
// their handlers' view, within blindBound of the new objects existing; a parked informer
// sends no request while the CRD is absent. Not parallel: the apiserver goes away.
func TestCRDChurnAcrossAPIServerRestarts(t *testing.T) {
	ctx := context.Background()
	ns := cp.Namespace(t)
	group := testenv.UniqueName(t) + ".kindex.test"
	crd := testenv.NewCRD(group, "Widget", "widgets")
	cp.InstallCRD(t, crd)
	e := &churnEnv{t: t, ns: ns, group: group, crdName: crd.Name,
		ri: cp.Dynamic(t).Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)}
	e.createObjects(ctx, "a", 3)
	addChurnSubjects(t, &e.subjects, "unstructured", ns, group, dynamicinformer.NewFactory)
	addChurnSubjects(t, &e.subjects, "compact", ns, group, func(cfg *rest.Config, o dynamicinformer.Options) (*dynamicinformer.Factory, error) {
		return dynamicinformer.NewCompactFactory(cfg, o, dynamicinformer.CompactOptions{})
	})
	addChurnSubjects(t, &e.subjects, "metadata", ns, group, metadataonly.NewFactory)
	e.awaitExact(ctx, time.Now(), 60*time.Second)

	report := func(phase string, took map[string]time.Duration) {
		t.Helper()
		for name, d := range took {
			t.Logf("%s: %s blind for %v", phase, name, d.Round(time.Millisecond))
			require.LessOrEqual(t, d, blindBound, "%s: %s was blind too long", phase, name)
		}
	}

	// 0. The apiserver restarts with the CRD in place, and objects are created right after
	// it is back: no informer takes the restarted apiserver's 404s (its CRDs not loaded
	// yet) for a deletion, so no handler is told of one.
	for i := range 2 {
		restartAPIServer(t)
		e.createObjects(ctx, fmt.Sprint("r", i, "-"), 2)
		report("restart with the CRD in place", e.awaitExact(ctx, time.Now(), 2*blindBound))
	}
	for _, s := range e.subjects {
		require.Zero(t, s.seen.deletions(), "%s: deletions of objects that exist", s.name)
	}

	// 1. The apiserver restarts while the CRD is absent; the CRD comes back as it was.
	cp.DeleteCRD(t, crd.Name)
	e.awaitParked(30 * time.Second)
	e.awaitExact(ctx, time.Now(), 30*time.Second)
	before := e.requests()
	restartAPIServer(t)
	require.Equal(t, before, e.requests(), "requests for the deleted resource while parked")
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	e.createObjects(ctx, "b", 3)
	report("restart while absent", e.awaitExact(ctx, time.Now(), 2*blindBound))

	// 2. The apiserver crashes right after the CRD is created again, before it is served.
	cp.DeleteCRD(t, crd.Name)
	e.awaitParked(30 * time.Second)
	createCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	restartAPIServer(t)
	e.awaitServed(ctx)
	e.awaitEstablished(ctx)
	e.createObjects(ctx, "c", 3)
	report("restart during re-creation", e.awaitExact(ctx, time.Now(), 2*blindBound))

	// 3. The apiserver crashes while the CRD is being deleted (its objects being removed);
	// then it comes back.
	client := cp.APIExtensions(t).ApiextensionsV1().CustomResourceDefinitions()
	require.NoError(t, client.Delete(ctx, crd.Name, metav1.DeleteOptions{}))
	restartAPIServer(t)
	cp.DeleteCRD(t, crd.Name) // waits until it is gone
	e.awaitParked(30 * time.Second)
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	e.createObjects(ctx, "d", 3)
	report("restart during deletion", e.awaitExact(ctx, time.Now(), 2*blindBound))

	// 4. The apiserver restarts; while the informers reconnect, the CRD is deleted and
	// re-created with another schema.
	restartAPIServer(t)
	cp.DeleteCRD(t, crd.Name)
	other := testenv.NewCRD(group, "Widget", "widgets")
	other.Spec.Names.ShortNames = []string{"wdg"}
	other.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties = map[string]apiextv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer"}}},
	}
	cp.InstallCRD(t, other)
	e.createObjects(ctx, "e", 3)
	report("restart, then re-creation with another schema", e.awaitExact(ctx, time.Now(), 2*blindBound))

	// 5. After the restart, discovery's watches of CRDs and APIServices stay down (client-go's
	// reflector backoff, which grows over repeated failures within two minutes to 30 s and,
	// with jitter, up to a minute; here their requests are held), while the CRD is deleted
	// and created again: no watch event reports either. The informers still find it back.
	const discoveryWatches = "/apis/api" // apiextensions.k8s.io and apiregistration.k8s.io
	for _, rec := range e.recorders() {
		rec.Hold(discoveryWatches)
		defer rec.Release()
	}
	restartAPIServer(t)
	cp.DeleteCRD(t, crd.Name)
	e.awaitParked(30 * time.Second)
	cp.InstallCRD(t, testenv.NewCRD(group, "Widget", "widgets"))
	e.createObjects(ctx, "f", 3)
	report("restart, discovery's watch down", e.awaitExact(ctx, time.Now(), blindBound))
}
