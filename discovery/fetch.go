package discovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdiscovery "k8s.io/client-go/discovery"
)

// maxGroupRounds is how many groups a per-group round may fetch before a full round (two
// requests with aggregated discovery) is cheaper.
const maxGroupRounds = 4

// fetchAll discovers everything. With aggregated discovery, client-go answers with exactly two
// requests (/api and /apis); against an older server it falls back to one request per group
// version. Group versions that failed (a stale aggregated API, an error from one group) are
// recorded per group; only an error that leaves nothing usable fails the round.
func (c *Client) fetchAll(ctx context.Context, seq uint64) (*fetchResult, error) {
	groups, lists, err := cgdiscovery.ServerGroupsAndResourcesWithContext(ctx, c.disco)
	failedGVs, partial := cgdiscovery.GroupDiscoveryFailedErrorGroups(err)
	if err != nil && !partial {
		return nil, err
	}
	if groups == nil {
		return nil, errors.New("discovery: the server returned no API groups")
	}
	byGV := make(map[schema.GroupVersion]*metav1.APIResourceList, len(lists))
	for _, l := range lists {
		if gv, err := schema.ParseGroupVersion(l.GroupVersion); err == nil {
			byGV[gv] = l
		}
	}
	res := &fetchResult{seq: seq, full: true, groups: map[string]*fetchedGroup{}}
	for _, ag := range groups {
		f := res.group(ag.Name)
		for _, v := range ag.Versions {
			gv := schema.GroupVersion{Group: ag.Name, Version: v.Version}
			if ferr, bad := failedGVs[gv]; bad {
				f.failed[v.Version] = ferr
				continue
			}
			l, ok := byGV[gv]
			if !ok || slices.Contains(f.versions, v.Version) {
				continue
			}
			f.versions = append(f.versions, v.Version)
			f.resources[v.Version] = convertResources(gv, l.APIResources)
		}
	}
	// Aggregated discovery leaves a stale version out of its group's version list.
	for gv, ferr := range failedGVs {
		f := res.group(gv.Group)
		if _, ok := f.failed[gv.Version]; !ok {
			f.failed[gv.Version] = ferr
		}
	}
	return res, nil
}

// fetchGroups re-discovers only the named groups, with the per-group endpoints: GET
// /apis/<group> for its versions and preferred order, then GET /apis/<group>/<version> for
// each version. An error that is not an answer from the server (a broken connection, a
// timeout) fails the whole round, so that a network blip never marks a group unavailable.
func (c *Client) fetchGroups(ctx context.Context, seq uint64, names []string) (*fetchResult, error) {
	res := &fetchResult{seq: seq, groups: map[string]*fetchedGroup{}}
	var mu sync.Mutex
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(maxGroupRounds)
	for _, name := range names {
		eg.Go(func() error {
			f, err := c.fetchGroup(ctx, name)
			if err != nil {
				return err
			}
			mu.Lock()
			res.groups[name] = f
			mu.Unlock()
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return res, nil
}

func (c *Client) fetchGroup(ctx context.Context, name string) (*fetchedGroup, error) {
	f := newFetchedGroup(name)
	var ag metav1.APIGroup
	err := c.disco.RESTClient().Get().AbsPath("/apis", name).Do(ctx).Into(&ag)
	switch {
	case apierrors.IsNotFound(err):
		f.absent = true
		return f, nil
	case isServerAnswer(err):
		f.failed[""] = err
		return f, nil
	case err != nil:
		return nil, fmt.Errorf("discovery of group %q: %w", name, err)
	}
	for _, v := range ag.Versions {
		if slices.Contains(f.versions, v.Version) {
			continue
		}
		l, err := c.disco.ServerResourcesForGroupVersionWithContext(ctx, v.GroupVersion)
		switch {
		case apierrors.IsNotFound(err):
			continue // the version is going away (an APIService that outlives its CRD)
		case isServerAnswer(err):
			f.failed[v.Version] = err
			continue
		case err != nil:
			return nil, fmt.Errorf("discovery of %s: %w", v.GroupVersion, err)
		}
		gv := schema.GroupVersion{Group: name, Version: v.Version}
		f.versions = append(f.versions, v.Version)
		f.resources[v.Version] = convertResources(gv, l.APIResources)
	}
	if len(f.versions) == 0 && len(f.failed) == 0 {
		f.absent = true
	}
	return f, nil
}

// isServerAnswer reports whether err is an HTTP status the server sent.
func isServerAnswer(err error) bool {
	var st apierrors.APIStatus
	return err != nil && errors.As(err, &st)
}

// convertResources keeps the top-level resources of a group version (subresources such as
// pods/status are not resources) and describes them.
func convertResources(gv schema.GroupVersion, in []metav1.APIResource) []Resource {
	out := make([]Resource, 0, len(in))
	for _, r := range in {
		if r.Name == "" || strings.Contains(r.Name, "/") || r.Kind == "" {
			continue
		}
		kind := gv.WithKind(r.Kind)
		if r.Group != "" {
			kind.Group = r.Group
		}
		if r.Version != "" {
			kind.Version = r.Version
		}
		singular := r.SingularName
		if singular == "" {
			singular = strings.ToLower(r.Kind)
		}
		out = append(out, Resource{
			GVR:        gv.WithResource(r.Name),
			GVK:        kind,
			Namespaced: r.Namespaced,
			Singular:   singular,
			Verbs:      slices.Clone([]string(r.Verbs)),
			ShortNames: slices.Clone(r.ShortNames),
			Categories: slices.Clone(r.Categories),
		})
	}
	return out
}
