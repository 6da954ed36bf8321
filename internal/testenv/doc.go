// Package testenv runs a real control plane for kindex's integration tests: etcd and
// kube-apiserver, built from source by `make controlplane` (see controlplane/), started on free
// loopback ports in a temporary directory.
//
// One control plane serves one test package (see Main); tests isolate themselves with
// Namespace and UniqueName. The apiserver enforces RBAC and authenticates static tokens: an
// admin in system:masters (AdminConfig) and restricted users without grants (NewUser), to which
// tests bind rules with Grant. Fault injection: StopAPIServer / StartAPIServer with SIGTERM or
// SIGKILL, CompactEtcd for 410 Gone, and Options.ExtraAPIServerArgs for server flags such as
// --min-request-timeout.
//
// Child processes are started with Pdeathsig, so they die with the test binary even when a test
// panics or times out; Stop removes the temporary directory unless KINDEX_KEEP_TESTENV is set.
package testenv
