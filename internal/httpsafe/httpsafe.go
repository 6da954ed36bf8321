package httpsafe

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
)

// ErrCrossHostRedirect is the category of every refused redirect: errors.Is(err,
// ErrCrossHostRedirect) holds for the error a client returns when it refused one.
var ErrCrossHostRedirect = errors.New("httpsafe: redirect to another host refused")

// RedirectError is returned by a refusing RoundTripper. From and To are origins
// (scheme://host:port) only: paths and query strings may carry secrets.
type RedirectError struct {
	From string
	To   string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("httpsafe: redirect from %s to another host %s refused", e.From, e.To)
}

// Is makes errors.Is(err, ErrCrossHostRedirect) true.
func (e *RedirectError) Is(target error) bool { return target == ErrCrossHostRedirect }

// Config returns a copy of cfg whose clients refuse redirects to another origin. A
// WrapTransport already set on cfg still applies, below the refusing RoundTripper. cfg is not
// modified. Applying Config twice is harmless.
func Config(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	inner := out.WrapTransport
	out.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if inner != nil {
			rt = inner(rt)
		}
		return RoundTripper(rt)
	}
	return out
}

// RoundTripper wraps next so that a request created to follow a redirect to an origin other
// than the one of the original request fails with a *RedirectError without being sent.
func RoundTripper(next http.RoundTripper) http.RoundTripper {
	if _, ok := next.(*refusing); ok {
		return next
	}
	return &refusing{next: next}
}

type refusing struct {
	next http.RoundTripper
}

func (r *refusing) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Response != nil {
		first := req
		for first.Response != nil && first.Response.Request != nil {
			first = first.Response.Request
		}
		from, to := origin(first.URL), origin(req.URL)
		if from != to {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, &RedirectError{From: from, To: to}
		}
	}
	return r.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go reach the transport below (to close idle connections).
func (r *refusing) WrappedRoundTripper() http.RoundTripper { return r.next }

// origin returns scheme://host:port with the scheme's default port made explicit.
func origin(u *url.URL) string {
	if u == nil {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}
