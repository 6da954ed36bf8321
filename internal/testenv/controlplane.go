package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// AdminUser is the name of the token user in system:masters.
const AdminUser = "kindex-admin"

// restrictedUsers is how many token users without grants a control plane provisions.
const restrictedUsers = 64

// Options configures a control plane. The zero value is a plain, RBAC-enforcing apiserver.
type Options struct {
	// ExtraAPIServerArgs are appended to the kube-apiserver command line (fault flags such as
	// --min-request-timeout=5 or --etcd-compaction-interval=5s). Later flags win.
	ExtraAPIServerArgs []string
	// StartTimeout bounds the start of etcd plus the apiserver. Default 90s.
	StartTimeout time.Duration
}

// ControlPlane is an etcd and a kube-apiserver on free loopback ports in a temporary
// directory. It is safe for concurrent use by the tests of one package.
type ControlPlane struct {
	opts      Options
	dir       string
	host      string
	caPEM     []byte
	etcdURL   string
	adminTok  string
	etcd      *process
	apiserver *process

	mu        sync.Mutex
	freeUsers []string          // restricted users not yet handed out
	tokens    map[string]string // user -> token
}

// Start starts etcd and kube-apiserver and waits until the apiserver is ready. The binaries
// must have been built (`make controlplane`); a missing binary is an error, never a skip.
func Start(opts Options) (cp *ControlPlane, err error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 90 * time.Second
	}
	if err := checkBinaries(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kindex-testenv-")
	if err != nil {
		return nil, err
	}
	cp = &ControlPlane{opts: opts, dir: dir, tokens: map[string]string{}}
	started := cp // the returns below set cp to nil
	defer func() {
		if err != nil {
			started.Stop()
		}
	}()
	if cp.adminTok, err = randomToken(); err != nil {
		return nil, err
	}
	for i := range restrictedUsers {
		name := "kindex-user-" + strconv.Itoa(i)
		if cp.tokens[name], err = randomToken(); err != nil {
			return nil, err
		}
		cp.freeUsers = append(cp.freeUsers, name)
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.StartTimeout)
	defer cancel()
	if err := cp.startEtcd(ctx, ports[0], ports[1]); err != nil {
		return nil, err
	}
	if err := cp.configureAPIServer(ports[2]); err != nil {
		return nil, err
	}
	if err := cp.startAPIServer(ctx); err != nil {
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) startEtcd(ctx context.Context, clientPort, peerPort int) error {
	cp.etcdURL = "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	cp.etcd = newProcess("etcd", EtcdPath(), cp.dir, []string{
		"--name=default",
		"--data-dir=" + cp.dir + "/etcd",
		"--listen-client-urls=" + cp.etcdURL,
		"--advertise-client-urls=" + cp.etcdURL,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=default=" + peer,
		"--log-level=warn",
		"--unsafe-no-fsync=true",
		"--quota-backend-bytes=8589934592",
	})
	if err := cp.etcd.start(); err != nil {
		return err
	}
	return cp.waitFor(ctx, cp.etcd, func() bool {
		resp, err := http.Get(cp.etcdURL + "/health")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func (cp *ControlPlane) configureAPIServer(port int) error {
	caPEM, certFile, keyFile, err := writeServingCert(cp.dir)
	if err != nil {
		return err
	}
	cp.caPEM = caPEM
	saKey, err := writeServiceAccountKey(cp.dir)
	if err != nil {
		return err
	}
	tokenFile, err := writeTokenFile(cp.dir, cp.adminTok, cp.tokens)
	if err != nil {
		return err
	}
	cp.host = "https://127.0.0.1:" + strconv.Itoa(port)
	args := []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + certFile,
		"--tls-private-key-file=" + keyFile,
		"--cert-dir=" + cp.dir + "/certs",
		"--etcd-servers=" + cp.etcdURL,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true",
		"--endpoint-reconciler-type=none",
		"--v=1",
	}
	args = append(args, cp.opts.ExtraAPIServerArgs...)
	cp.apiserver = newProcess("kube-apiserver", KubeAPIServerPath(), cp.dir, args)
	return nil
}

func (cp *ControlPlane) startAPIServer(ctx context.Context) error {
	if err := cp.apiserver.start(); err != nil {
		return err
	}
	client := cp.httpClient()
	return cp.waitFor(ctx, cp.apiserver, func() bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cp.host+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+cp.adminTok)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// waitFor polls ready until it holds, the process exits, or ctx ends.
func (cp *ControlPlane) waitFor(ctx context.Context, p *process, ready func() bool) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if ready() {
			return nil
		}
		select {
		case <-p.exited():
			return fmt.Errorf("%s exited during start-up; log tail:\n%s", p.name, p.logTail(4000))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w; log tail:\n%s", p.name, ctx.Err(), p.logTail(4000))
		case <-tick.C:
		}
	}
}

func (cp *ControlPlane) httpClient() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cp.caPEM)
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
}

// Host is the apiserver URL.
func (cp *ControlPlane) Host() string { return cp.host }

// Dir is the temporary directory holding data and logs.
func (cp *ControlPlane) Dir() string { return cp.dir }

// APIServerLog returns the apiserver log, for diagnosing a failed test.
func (cp *ControlPlane) APIServerLog() string { return cp.apiserver.logTail(1 << 20) }

// AdminConfig returns a config for a user in system:masters. Client-side rate limits are
// raised so that tests are not throttled; each call returns a fresh copy.
func (cp *ControlPlane) AdminConfig() *rest.Config {
	return cp.tokenConfig(cp.adminTok)
}

func (cp *ControlPlane) tokenConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            cp.host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: append([]byte(nil), cp.caPEM...)},
		QPS:             1000,
		Burst:           2000,
	}
}

// ErrNoUsers is returned when every provisioned restricted user has been handed out.
var ErrNoUsers = errors.New("testenv: no restricted users left")

// NewUser hands out a token user that has no grants (beyond what RBAC gives every
// authenticated user, such as discovery) and that no other test of this control plane uses.
func (cp *ControlPlane) NewUser() (name string, cfg *rest.Config, err error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if len(cp.freeUsers) == 0 {
		return "", nil, ErrNoUsers
	}
	name, cp.freeUsers = cp.freeUsers[0], cp.freeUsers[1:]
	return name, cp.tokenConfig(cp.tokens[name]), nil
}

// StopAPIServer stops the apiserver with sig (SIGTERM for a graceful shutdown, SIGKILL for a
// crash) and leaves etcd running.
func (cp *ControlPlane) StopAPIServer(sig syscall.Signal) error {
	return cp.apiserver.stop(sig, 30*time.Second)
}

// StartAPIServer starts the apiserver again, on the same port and with the same flags, and
// waits until it is ready.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	if cp.apiserver.running() {
		return errors.New("testenv: apiserver is already running")
	}
	return cp.startAPIServer(ctx)
}

// RestartAPIServer stops the apiserver with sig and starts it again.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context, sig syscall.Signal) error {
	if err := cp.StopAPIServer(sig); err != nil {
		return err
	}
	return cp.StartAPIServer(ctx)
}

// PIDs returns the process ids of the running kube-apiserver and etcd (for measuring the
// CPU time they spend).
func (cp *ControlPlane) PIDs() []int {
	var pids []int
	for _, p := range []*process{cp.apiserver, cp.etcd} {
		if p != nil {
			if pid := p.pid(); pid > 0 {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// Stop stops the apiserver and etcd and removes the temporary directory, unless
// KINDEX_KEEP_TESTENV is set. It is safe to call more than once.
func (cp *ControlPlane) Stop() {
	if cp.apiserver != nil {
		_ = cp.apiserver.stop(syscall.SIGTERM, 10*time.Second)
	}
	if cp.etcd != nil {
		_ = cp.etcd.stop(syscall.SIGTERM, 10*time.Second)
	}
	if os.Getenv("KINDEX_KEEP_TESTENV") == "" && cp.dir != "" {
		_ = os.RemoveAll(cp.dir)
	}
}
