// Package httpsafe makes the HTTP clients kindex builds refuse redirects to another origin.
//
// client-go adds the bearer token (or basic credentials) in a RoundTripper that sees every
// request the http.Client sends, redirected requests included. Go's http.Client drops the
// Authorization header it copied from the original request when it follows a redirect to a
// different domain, but client-go's auth RoundTripper then adds the token again, so a server
// (or a proxy in the middle) that answers with a redirect to another host receives the
// caller's credentials. kindex never needs a cross-host redirect, so it refuses them.
//
// The check lives in a RoundTripper installed through rest.Config.WrapTransport, because that
// is the one hook every client built from a rest.Config honours (dynamic, metadata,
// discovery, typed clients): http.Client.CheckRedirect is not reachable from a rest.Config.
// WrapTransport sits below client-go's auth wrappers, so the refusing RoundTripper sees the
// redirected request after the token was added and before any byte leaves the process; it
// recognises a redirect by http.Request.Response, which net/http sets only on requests it
// creates to follow a redirect. Redirects within the same origin (scheme, host and port) are
// still followed.
package httpsafe
