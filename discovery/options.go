package discovery

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/transport"
	"k8s.io/utils/clock"
)

// Defaults of Options.
const (
	DefaultNegativeCacheTTL = 5 * time.Second
	DefaultRefreshInterval  = 30 * time.Second
	DefaultResyncInterval   = 10 * time.Minute
	DefaultRequestTimeout   = 30 * time.Second

	// minInterval bounds RefreshInterval and ResyncInterval from below so that a
	// misconfiguration cannot turn the client into a discovery hammer.
	minInterval = 10 * time.Millisecond
)

// Options configures a Client. The zero value is valid: every field has a documented default.
type Options struct {
	// Logger receives every line the client logs: its own diagnostics (fallback to polling,
	// give-ups, panics in subscribers, API groups that become unavailable or recover) and what client-go logs about the client's requests
	// and about its watches of CRDs and APIServices. client-go's lines for those watches
	// (such as "watch ended with error" when a connection drops, which it logs at V(0)) come
	// one level more verbose than client-go logs them: a dropped watch resumes by itself.
	// Nothing goes to klog's global logger, except what client-go logs there whatever the
	// caller does: its trace of a LIST slower than 10 seconds, and the states of its feature
	// gates (V(1), once per process, by the first user of client-go).
	// Default: discard (logr.Discard() silences the client).
	Logger logr.Logger

	// NegativeCacheTTL is how long a miss (an input that matched nothing, or a group that was
	// unavailable) is remembered, so that a typo repeated in a loop costs one re-discovery
	// per TTL, not one per call. A resource being added clears the negative cache at once.
	// Misses of different inputs share a budget of re-discoveries (five, then one a second;
	// see the package documentation), which this option does not change.
	// Default DefaultNegativeCacheTTL (5s). A negative value is invalid.
	NegativeCacheTTL time.Duration

	// RefreshInterval is the period of the fallback re-discovery used while the client may
	// not list and watch CustomResourceDefinitions or APIServices (403, or the API is not
	// served), or while such a watch is down (the apiserver restarting, client-go's backoff
	// before it opens again). Each period also probes whether watching has become possible.
	// It is also the period at which a group is re-discovered once a watched change has not
	// shown in its discovery within 30 s, until it does.
	// Default DefaultRefreshInterval (30s); at least 10ms.
	RefreshInterval time.Duration

	// ResyncInterval is the period of a full re-discovery performed even while watching, as a
	// safety net for changes no watched object reflects (an aggregated API server changing
	// the resources it serves). Default DefaultResyncInterval (10m); at least 10ms.
	ResyncInterval time.Duration

	// RequestTimeout bounds one discovery round (all the requests of a full or per-group
	// re-discovery). Default DefaultRequestTimeout (30s).
	RequestTimeout time.Duration

	// WrapTransport, if set, wraps the HTTP transport after rest.Config.WrapTransport; tests
	// use it to count or hold requests. It sees every request the client sends (discovery,
	// and list/watch of CRDs and APIServices). A wrapper that implements
	// k8s.io/apimachinery/pkg/util/net.RoundTripperWrapper lets Wait close the idle
	// connections of the transport it wraps.
	WrapTransport transport.WrapperFunc

	// Clock drives the negative cache and the periodic timers. Default: the real clock.
	Clock clock.Clock
}

func (o Options) withDefaults() (Options, error) {
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	type dur struct {
		name string
		v    *time.Duration
		def  time.Duration
		min  time.Duration
	}
	for _, d := range []dur{
		{"NegativeCacheTTL", &o.NegativeCacheTTL, DefaultNegativeCacheTTL, 0},
		{"RefreshInterval", &o.RefreshInterval, DefaultRefreshInterval, minInterval},
		{"ResyncInterval", &o.ResyncInterval, DefaultResyncInterval, minInterval},
		{"RequestTimeout", &o.RequestTimeout, DefaultRequestTimeout, minInterval},
	} {
		switch {
		case *d.v < 0:
			return o, fmt.Errorf("discovery: Options.%s must not be negative, got %v", d.name, *d.v)
		case *d.v == 0:
			*d.v = d.def
		case *d.v < d.min:
			return o, fmt.Errorf("discovery: Options.%s must be at least %v, got %v", d.name, d.min, *d.v)
		}
	}
	return o, nil
}
