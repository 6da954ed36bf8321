package harness

import (
	"context"
	"errors"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Staged is a subject whose measured Sync needs a preparation: a restart from a snapshot
// needs a first run that wrote it. For every measurement the harness runs Prepare in a
// child process of its own (not measured), then Between in the parent, then Sync in a
// fresh child; both children get the same new, empty directory (StateDir), removed
// afterwards.
type Staged interface {
	Subject
	// Check runs in the parent first: an error wrapping ErrNotSupported when env or gvr
	// lacks what the subject needs (nothing is prepared then).
	Check(env ParentEnv, gvr schema.GroupVersionResource) error
	// Prepare runs in the first child.
	Prepare(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) error
	// Between runs in the parent, after Prepare's child exited and before Sync's started:
	// changes made while "the process is down".
	Between(ctx context.Context, env ParentEnv, gvr schema.GroupVersionResource, namespace string) error
}

// ParentEnv is what Between can do in the parent.
type ParentEnv struct {
	// Config is an admin of the cluster.
	Config *rest.Config
	// CompactEtcd compacts etcd to its current revision; nil with -server.
	CompactEtcd func(context.Context) error
	// RestartAPIServer restarts kube-apiserver and waits until it is ready (its watch
	// cache then starts at the current revision); nil with -server.
	RestartAPIServer func(context.Context) error
}

// Annotator is a subject that reports figures of its own: Annotate runs in the child after
// the heap was measured, before stop.
type Annotator interface {
	Annotate(m *Measurement)
}

type stateDirKey struct{}

// StateDir returns the directory a Staged subject's children share ("" for other subjects).
func StateDir(ctx context.Context) string {
	s, _ := ctx.Value(stateDirKey{}).(string)
	return s
}

// ExtraPod returns a pod built like the seeded ones, named name, for subjects that create
// objects of their own (they delete them again).
func ExtraPod(namespace, name string, i int) *corev1.Pod {
	p := newPod(namespace, i)
	p.Name, p.GenerateName = name, ""
	return p
}

// runStaged measures a Staged subject once: prepare child, Between, measured child.
func (m *measurer) runStaged(ctx context.Context, s Staged, d Dataset, run int) childRun {
	if err := s.Check(m.opts.Parent, d.GVR); err != nil {
		return childRun{notSupported: isNotSupported(err), err: err}
	}
	dir, err := os.MkdirTemp("", "kindex-harness-"+s.Name()+"-")
	if err != nil {
		return childRun{err: err}
	}
	defer func() { _ = os.RemoveAll(dir) }()
	req := childRequest{Subject: s.Name(), Config: m.cfg, GVR: d.GVR, Namespace: m.opts.Namespace,
		Timeout: m.opts.ChildTimeout, Phase: phasePrepare, StateDir: dir}
	if res := runChild(ctx, m.opts.Executable, req); res.err != nil {
		return childRun{notSupported: res.notSupported, err: fmt.Errorf("prepare: %w", res.err)}
	}
	if err := s.Between(ctx, m.opts.Parent, d.GVR, m.opts.Namespace); err != nil {
		return childRun{notSupported: isNotSupported(err), err: fmt.Errorf("between: %w", err)}
	}
	return m.runWith(ctx, s.Name(), d, run, dir)
}

func isNotSupported(err error) bool { return errors.Is(err, ErrNotSupported) }

// WarmFigures are what a restart subject reports besides the usual figures (Seconds is its
// time to synced).
type WarmFigures struct {
	// QueryableSeconds is the time from the start of Sync until reads answered.
	QueryableSeconds float64 `json:"queryable_seconds"`
	// Events is the number of handler events after the ones for the snapshot's objects;
	// Changes the number of objects changed while the process was down (0: none made).
	Events  int `json:"events"`
	Changes int `json:"changes"`
	// Adds, Updates and Deletes split Events.
	Adds    int `json:"adds"`
	Updates int `json:"updates"`
	Deletes int `json:"deletes"`
}
