package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// etcdCall posts a JSON request to etcd's gRPC gateway, which etcd serves on its client URL.
func (cp *ControlPlane) etcdCall(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cp.etcdURL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// EtcdRevision returns etcd's current revision.
func (cp *ControlPlane) EtcdRevision(ctx context.Context) (int64, error) {
	var out struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	// A range over a key nobody writes returns only the header with the store revision.
	if err := cp.etcdCall(ctx, "/v3/kv/range", map[string]any{"key": "AA=="}, &out); err != nil {
		return 0, err
	}
	return strconv.ParseInt(out.Header.Revision, 10, 64)
}

// CompactEtcd compacts etcd up to its current revision, so that a watch or list from any
// older resourceVersion that reaches etcd fails with 410 Gone. It returns the revision
// compacted to. The apiserver's watch cache keeps serving watches from its own window, so a
// test that needs a 410 on a watch starts its control plane with the resource's watch cache
// off: Options{ExtraAPIServerArgs: []string{"--watch-cache-sizes=configmaps#0"}} (or
// "--watch-cache=false" for every resource).
func (cp *ControlPlane) CompactEtcd(ctx context.Context) (int64, error) {
	rev, err := cp.EtcdRevision(ctx)
	if err != nil {
		return 0, err
	}
	req := map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}
	if err := cp.etcdCall(ctx, "/v3/kv/compaction", req, nil); err != nil {
		return 0, err
	}
	return rev, nil
}
