package informer

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names. Labels: resource ("plural.group"), version, namespace, selector (label and
// field selectors), mode; phase on the phase gauge, reason on the error counter.
const (
	metricPhase    = "kindex_informer_phase"
	metricObjects  = "kindex_informer_objects"
	metricLists    = "kindex_informer_lists_total"
	metricErrors   = "kindex_informer_errors_total"
	metricPanics   = "kindex_informer_handler_panics_total"
	metricCallback = "kindex_callback_failures_total"
	metricStartGC  = "kindex_start_collections_total"
	labelPhase     = "phase"
	labelReason    = "reason"
	labelResource  = "resource"
	labelVersion   = "version"
	labelNamespace = "namespace"
	labelSelector  = "selector"
	labelMode      = "mode"
)

var (
	entryLabels = []string{labelResource, labelVersion, labelNamespace, labelSelector, labelMode}
	allPhases   = []Phase{PhaseSyncing, PhaseSynced, PhaseParked}
)

// metrics holds a factory's collectors; nil fields (no Registerer) make every call a no-op.
type metrics struct {
	phase   *prometheus.GaugeVec
	objects *prometheus.GaugeVec
	lists   *prometheus.CounterVec
	errors  *prometheus.CounterVec
	panics  *prometheus.CounterVec
	// callbacks counts failed calls of callers' code by kind: "handler", "transform" (an
	// error, a nil result or a panic), "status" (a status subscriber's panic).
	callbacks *prometheus.CounterVec
	// startGC counts the collections the factory's informers ran during starts (pacer.go).
	startGC prometheus.Counter
}

// newMetrics registers the collectors on reg (nil: no metrics). Collectors a second factory
// registers on the same Registerer are shared.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return &metrics{}, nil
	}
	m := &metrics{
		phase: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricPhase,
			Help: "1 for the informer's current phase (Syncing, Synced, Parked), 0 for the others."},
			append(append([]string{}, entryLabels...), labelPhase)),
		objects: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricObjects,
			Help: "Objects in the informer's cache."}, entryLabels),
		lists: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricLists,
			Help: "Lists applied to the cache: initial list, relists after 410 or reconnects, resumes."}, entryLabels),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricErrors,
			Help: "List and watch errors by reason; TransformError and DecodeError (a notification skipped: its object did not decode for the handler) count objects."}, append(append([]string{}, entryLabels...), labelReason)),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricPanics,
			Help: "Event handler calls that panicked (the notification was skipped)."}, entryLabels),
		callbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricCallback,
			Help: "Calls of the caller's code that failed or panicked, by callback (handler, transform, status)."},
			[]string{"callback"}),
		startGC: prometheus.NewCounter(prometheus.CounterOpts{Name: metricStartGC,
			Help: "Garbage collections kindex ran during informers' starts to bound their peak memory (Options.DisableStartGC)."}),
	}
	var err error
	m.phase, err = register(reg, m.phase)
	if err == nil {
		m.objects, err = register(reg, m.objects)
	}
	if err == nil {
		m.lists, err = register(reg, m.lists)
	}
	if err == nil {
		m.errors, err = register(reg, m.errors)
	}
	if err == nil {
		m.panics, err = register(reg, m.panics)
	}
	if err == nil {
		m.callbacks, err = register(reg, m.callbacks)
	}
	if err == nil {
		m.startGC, err = register(reg, m.startGC)
	}
	return m, err
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}

// entryMetrics is one informer's series.
type entryMetrics struct {
	m      *metrics
	labels prometheus.Labels
	values []string
}

func (m *metrics) forEntry(k Key) *entryMetrics {
	sel := k.LabelSelector
	if k.FieldSelector != "" {
		sel += ";" + k.FieldSelector
	}
	if k.Shard != "" {
		sel += ";" + k.Shard
	}
	values := []string{resourceName(k.GVR.GroupResource()), k.GVR.Version, k.Namespace, sel, k.Mode}
	labels := prometheus.Labels{}
	for i, name := range entryLabels {
		labels[name] = values[i]
	}
	em := &entryMetrics{m: m, labels: labels, values: values}
	if m.objects != nil {
		m.objects.WithLabelValues(values...).Set(0)
		m.lists.WithLabelValues(values...).Add(0)
	}
	return em
}

func (em *entryMetrics) setPhase(p Phase) {
	if em.m.phase == nil || p == PhaseStopped {
		return
	}
	for _, ph := range allPhases {
		v := 0.0
		if ph == p {
			v = 1
		}
		em.m.phase.WithLabelValues(append(em.values, string(ph))...).Set(v)
	}
}

func (em *entryMetrics) setObjects(n int64) {
	if em.m.objects != nil {
		em.m.objects.WithLabelValues(em.values...).Set(float64(n))
	}
}

func (em *entryMetrics) listed() {
	if em.m.lists != nil {
		em.m.lists.WithLabelValues(em.values...).Inc()
	}
}

func (em *entryMetrics) errorSeen(r Reason) {
	if em.m.errors != nil {
		em.m.errors.WithLabelValues(append(em.values, string(r))...).Inc()
	}
}

func (em *entryMetrics) handlerPanic() {
	if em.m.panics != nil {
		em.m.panics.WithLabelValues(em.values...).Inc()
	}
}

// delete removes the informer's series when it stops.
func (em *entryMetrics) delete() {
	if em.m.phase == nil {
		return
	}
	for _, vec := range []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{em.m.phase, em.m.objects, em.m.lists, em.m.errors, em.m.panics} {
		vec.DeletePartialMatch(em.labels)
	}
}

// callbackFailed counts a failed call of the caller's code.
func (m *metrics) callbackFailed(callback string) {
	if m.callbacks != nil {
		m.callbacks.WithLabelValues(callback).Inc()
	}
}

func (m *metrics) startCollected() {
	if m.startGC != nil {
		m.startGC.Inc()
	}
}
