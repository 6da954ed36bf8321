package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"

	"github.com/tidwall/gjson"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// SizeStats describes the objects as the apiserver stores and serves them: compact JSON, as
// a client-go user agent gets it (curl gets it pretty-printed, twice the size).
type SizeStats struct {
	Sampled               int      `json:"sampled"`
	AvgJSONBytes          float64  `json:"avg_json_bytes"`
	AvgManagedFieldsBytes float64  `json:"avg_managed_fields_bytes"`
	ManagedFieldsShare    float64  `json:"managed_fields_share"`
	AvgStatusBytes        float64  `json:"avg_status_bytes"`
	Managers              []string `json:"managers"`
}

// maxSamples bounds the number of GETs the size statistics cost.
const maxSamples = 100

// sampleSizes GETs up to maxSamples objects, evenly spread over 0..n-1, as JSON.
func (s *seeder) sampleSizes(ctx context.Context, gvr schema.GroupVersionResource, n int, name func(int) string) (SizeStats, error) {
	var st SizeStats
	if n == 0 {
		return st, nil
	}
	base, _, err := rest.DefaultServerUrlFor(s.cfg)
	if err != nil {
		return st, err
	}
	step := max(1, n/maxSamples)
	managers := map[string]bool{}
	var total, mf, status int
	for i := 0; i < n && st.Sampled < maxSamples; i += step {
		u := base.JoinPath(append(resourcePath(gvr, s.ns), name(i))...)
		body, err := s.getJSON(ctx, u.String())
		if err != nil {
			return st, err
		}
		st.Sampled++
		total += len(body)
		mf += len(gjson.GetBytes(body, "metadata.managedFields").Raw)
		status += len(gjson.GetBytes(body, "status").Raw)
		for _, m := range gjson.GetBytes(body, "metadata.managedFields").Array() {
			desc := m.Get("manager").String() + " (" + m.Get("operation").String()
			if sub := m.Get("subresource").String(); sub != "" {
				desc += ", " + sub
			}
			managers[desc+")"] = true
		}
	}
	st.AvgJSONBytes = float64(total) / float64(st.Sampled)
	st.AvgManagedFieldsBytes = float64(mf) / float64(st.Sampled)
	st.AvgStatusBytes = float64(status) / float64(st.Sampled)
	st.ManagedFieldsShare = float64(mf) / float64(total)
	for m := range managers {
		st.Managers = append(st.Managers, m)
	}
	sort.Strings(st.Managers)
	return st, nil
}

func (s *seeder) getJSON(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", contentTypeJSON)
	req.Header.Set("User-Agent", rest.DefaultKubernetesUserAgent())
	resp, err := s.httpc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(body))
	}
	return body, nil
}
