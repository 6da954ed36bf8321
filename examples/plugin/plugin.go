package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/query"
)

// Options configures a Plugin. Zero fields take the defaults shown.
type Options struct {
	// Resource is what the plugin counts, as a user types it. Default widgets.demo.kindex.io.
	Resource string
	// Index is the JSONPath whose values are counted. Default {.status.phase}.
	Index string
	// Namespace limits the plugin to one namespace, where its ConfigMap lives too. Required.
	Namespace string
	// ConfigMap names the plugin's settings: its key "values" lists, comma-separated, the
	// values to count. Changes apply at once. Default "kindex-plugin"; while it is missing,
	// DefaultValues are counted.
	ConfigMap     string
	DefaultValues []string // default Running, Pending, Failed
	// Interval is the period of the printed report. Default 5s.
	Interval time.Duration
	// Out receives the report and configuration changes, from the plugin's goroutines: it
	// must be safe for concurrent writes (os.Stdout is). nil: none (Counts still serves).
	Out io.Writer
	// Logger receives kindex's logs. Default: kindex's (klog).
	Logger logr.Logger
}

// Plugin counts the objects of a resource by the values of a JSONPath index and prints the
// counts every few seconds. It is a guest in a host program: Start acquires everything it
// needs, Stop gives everything back, and nothing of it runs in between or after.
type Plugin struct {
	cfg  *rest.Config
	opts Options

	cancel  context.CancelFunc // ends the plugin's own lifetime
	factory *dynamicinformer.Factory
	objects *dynamicinformer.Informer
	config  *dynamicinformer.Informer
	done    chan struct{} // closed when the report loop has returned
	stop    sync.Once

	mu     sync.Mutex
	values []string // what to count, from the ConfigMap
	events atomic.Int64
}

// New validates opts; it starts nothing.
func New(cfg *rest.Config, opts Options) (*Plugin, error) {
	if cfg == nil {
		return nil, errors.New("plugin: nil rest.Config")
	}
	if opts.Namespace == "" {
		return nil, errors.New("plugin: Options.Namespace is required")
	}
	if opts.Resource == "" {
		opts.Resource = "widgets.demo.kindex.io"
	}
	if opts.Index == "" {
		opts.Index = "{.status.phase}"
	}
	if opts.ConfigMap == "" {
		opts.ConfigMap = "kindex-plugin"
	}
	if len(opts.DefaultValues) == 0 {
		opts.DefaultValues = []string{"Running", "Pending", "Failed"}
	}
	if opts.Interval <= 0 {
		opts.Interval = 5 * time.Second
	}
	return &Plugin{cfg: cfg, opts: opts, values: opts.DefaultValues}, nil
}

// Start acquires the plugin's informers, waits for their initial lists and starts the
// report. ctx bounds the start only: the plugin then runs until Stop, whatever happens to
// ctx. If Start fails, everything it started is stopped already. A Plugin starts once.
func (p *Plugin) Start(ctx context.Context) (err error) {
	if p.cancel != nil {
		return errors.New("plugin: already started")
	}
	// The plugin's lifetime is its own, not the caller's request: a context that only
	// Stop cancels.
	runCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.done = make(chan struct{})
	defer func() {
		if err != nil {
			close(p.done) // no report loop to wait for
			p.release()
		}
	}()

	// One factory for everything the plugin watches, in its namespace only.
	p.factory, err = dynamicinformer.NewFactory(p.cfg, dynamicinformer.Options{Namespace: p.opts.Namespace, Logger: p.opts.Logger})
	if err != nil {
		return err
	}
	if err := p.factory.Start(runCtx); err != nil {
		return err
	}

	// The settings: one ConfigMap, selected on the server by its name.
	p.config, err = p.factory.Informer(ctx, "configmaps",
		informer.WithFieldSelector("metadata.name="+p.opts.ConfigMap))
	if err != nil {
		return err
	}
	if _, err := p.config.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.configure(obj) },
		UpdateFunc: func(_, obj any) { p.configure(obj) },
		DeleteFunc: func(any) { p.setValues(p.opts.DefaultValues) },
	}); err != nil {
		return err
	}

	// The counted resource, with the index the counts come from and a handler that counts
	// the changes it sees (handlers run on their own goroutines, never blocking the cache).
	p.objects, err = p.factory.Informer(ctx, p.opts.Resource)
	if err != nil {
		return err
	}
	if err := p.objects.AddIndex("value", p.opts.Index); err != nil {
		return err
	}
	count := func() { p.events.Add(1) }
	if _, err := p.objects.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { count() },
		UpdateFunc: func(any, any) { count() },
		DeleteFunc: func(any) { count() },
	}); err != nil {
		return err
	}
	if err := p.factory.WaitForSync(ctx); err != nil {
		return err // a *SyncError says which informer did not sync and why
	}
	go p.report(runCtx)
	return nil
}

// Stop stops the report, releases the informers and shuts the factory down; when it
// returns, no goroutine of the plugin or of kindex is left. It is safe to call more than
// once, and after a failed Start.
func (p *Plugin) Stop() {
	if p.cancel == nil {
		return
	}
	p.stop.Do(func() {
		p.cancel()
		<-p.done
		p.release()
	})
}

func (p *Plugin) release() {
	p.cancel()
	if p.objects != nil {
		p.objects.Release()
	}
	if p.config != nil {
		p.config.Release()
	}
	if p.factory != nil {
		p.factory.Shutdown() // waits for every goroutine the factory started
	}
}

// Counts is what the plugin serves: how many objects have each configured value, and how
// many have none ("<none>"), answered from the index.
func (p *Plugin) Counts() (map[string]int, error) {
	if p.objects == nil {
		return nil, errors.New("plugin: not started")
	}
	p.mu.Lock()
	values := p.values
	p.mu.Unlock()
	counts := map[string]int{}
	for _, v := range values {
		r, err := p.objects.Query(context.Background(), query.Query{Conditions: []query.Condition{query.Eq("value", v)}})
		if err != nil {
			return nil, err
		}
		counts[v] = len(r.Items)
	}
	// HasNot cannot find candidates in the index: it visits every object, explicitly.
	r, err := p.objects.Query(context.Background(), query.Query{Conditions: []query.Condition{query.HasNot("value")}, Scan: true})
	if err != nil {
		return nil, err
	}
	counts["<none>"] = len(r.Items)
	return counts, nil
}

// Events is the number of changes the plugin's handler has seen (the initial list counts as
// one add per object).
func (p *Plugin) Events() int64 { return p.events.Load() }

// report prints the counts every Interval until ctx ends.
func (p *Plugin) report(ctx context.Context) {
	defer close(p.done)
	tick := time.NewTicker(p.opts.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if p.opts.Out == nil {
			continue
		}
		counts, err := p.Counts()
		if err != nil {
			fmt.Fprintf(p.opts.Out, "plugin: %v\n", err)
			continue
		}
		p.mu.Lock()
		values := p.values
		p.mu.Unlock()
		var parts []string
		for _, v := range append(slices.Clone(values), "<none>") {
			parts = append(parts, fmt.Sprintf("%s=%d", v, counts[v]))
		}
		fmt.Fprintf(p.opts.Out, "plugin: %s by %s: %s (%d changes seen)\n", p.opts.Resource, p.opts.Index,
			strings.Join(parts, " "), p.Events())
	}
}

// configure applies the plugin's ConfigMap.
func (p *Plugin) configure(obj any) {
	cm, ok := obj.(dynamicinformer.Object)
	if !ok {
		return
	}
	// Objects from the cache are shared: read them, never modify them.
	data, _, _ := unstructured.NestedString(cm.Object, "data", "values")
	var values []string
	for _, v := range strings.Split(data, ",") {
		if v = strings.TrimSpace(v); v != "" {
			values = append(values, v)
		}
	}
	if len(values) == 0 {
		values = p.opts.DefaultValues
	}
	p.setValues(values)
}

func (p *Plugin) setValues(values []string) {
	p.mu.Lock()
	changed := !slices.Equal(p.values, values)
	p.values = values
	p.mu.Unlock()
	if changed && p.opts.Out != nil {
		fmt.Fprintf(p.opts.Out, "plugin: counting %s\n", strings.Join(values, ", "))
	}
}
