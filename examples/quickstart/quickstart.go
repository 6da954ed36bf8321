package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kindex/kindex/dynamicinformer"
	"github.com/kindex/kindex/indexfuncs"
	"github.com/kindex/kindex/informer"
	"github.com/kindex/kindex/query"
)

// indexes are the JSONPath expressions the quickstart registers as indexes, by name.
var indexes = []struct{ name, expr string }{
	{"size", "{.spec.size}"},
	{"phase", "{.status.phase}"},
}

// section is one query the quickstart ran and the pages it got back.
type section struct {
	Title string
	Pages []query.Result[dynamicinformer.Object]
}

// Names returns namespace/name of every object on every page, in order.
func (s section) Names() []string {
	var out []string
	for _, p := range s.Pages {
		for _, o := range p.Items {
			out = append(out, o.GetNamespace()+"/"+o.GetName())
		}
	}
	return out
}

// quickstart is the whole walk-through: resolve what the user typed, start an informer,
// register JSONPath indexes and query them. namespace is where the paged query runs. It
// prints as it goes and returns the query results (for the tests).
func quickstart(ctx context.Context, cfg *rest.Config, resource, namespace string, out io.Writer) ([]section, error) {
	// A factory creates informers on demand and stops them all on Shutdown. It discovers
	// the server's resources itself, and follows CRDs as they come and go.
	f, err := dynamicinformer.NewFactory(cfg, dynamicinformer.Options{})
	if err != nil {
		return nil, err
	}
	if err := f.Start(ctx); err != nil {
		return nil, err
	}
	defer f.Shutdown()

	// Status changes of the factory's informers (phase, reason, object count) arrive on a
	// stream; subscribe before starting the informer so that no change is missed.
	statuses := make(chan informer.Status, 64)
	unsubscribe, err := f.SubscribeStatus(func(st informer.Status) {
		select { // never block the factory's status goroutine
		case statuses <- st:
		default:
		}
	})
	if err != nil {
		return nil, err
	}
	defer unsubscribe()

	// 1. Resolve what the user typed (a plural, a short name, Kind.version.group, ...) and
	// start an informer for it: one call. Release hands the reference back.
	fmt.Fprintf(out, "\n== 1. resolve %q and start an informer\n", resource)
	inf, err := f.Informer(ctx, resource)
	if err != nil {
		return nil, err // for example "the server doesn't have a resource type ..."
	}
	defer inf.Release()
	res := inf.Resource()
	scope := "cluster-scoped"
	if res.Namespaced {
		scope = "namespaced"
	}
	fmt.Fprintf(out, "%s is %s, kind %s, %s, short names %v\n", resource, res.GVR, res.GVK.Kind, scope, res.ShortNames)

	// 2. Wait for the initial list, showing progress from the status stream.
	fmt.Fprintf(out, "\n== 2. wait for the initial list\n")
	start := time.Now()
	if err := waitWithProgress(ctx, inf, statuses, out); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "synced %d objects in %v\n", inf.Status().Objects, time.Since(start).Round(time.Millisecond))

	// 3. Register JSONPath expressions as indexes. The objects already cached are indexed
	// before AddIndex returns; later changes as they arrive.
	fmt.Fprintf(out, "\n== 3. register JSONPath indexes\n")
	show := make([]cache.IndexFunc, len(indexes)) // the same functions, to print values
	for k, ix := range indexes {
		if err := inf.AddIndex(ix.name, ix.expr); err != nil {
			return nil, err // a bad expression is a *jsonpath.SyntaxError with the offset
		}
		st, err := inf.IndexStats(ix.name)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "%-6s = %-16s %3d distinct values, %d entries\n", ix.name, ix.expr, st.Values, st.Entries)
		if show[k], err = indexfuncs.JSONPath(ix.expr); err != nil {
			return nil, err
		}
	}

	// 4. Query. Conditions are ANDed; results come in (namespace, name) order.
	fmt.Fprintf(out, "\n== 4. query the cache\n")
	queries := []struct {
		title string
		q     query.Query
	}{
		{"phase = Running (equality)", query.Query{Conditions: []query.Condition{query.Eq("phase", "Running")}}},
		{"3 <= size < 6 (numeric range)", query.Query{Conditions: []query.Condition{query.Ge("size", "3"), query.Lt("size", "6")}}},
		{"phase = Failed AND size > 7", query.Query{Conditions: []query.Condition{query.Eq("phase", "Failed"), query.Gt("size", "7")}}},
		{fmt.Sprintf("phase = Pending in namespace %s, 5 per page", namespace), query.Query{
			Namespace: namespace, Conditions: []query.Condition{query.Eq("phase", "Pending")}, Limit: 5}},
	}
	var sections []section
	for _, qq := range queries {
		s := section{Title: qq.title}
		q := qq.q
		for {
			r, err := inf.Query(ctx, q)
			if err != nil {
				return nil, err
			}
			s.Pages = append(s.Pages, r)
			if r.Continue == "" {
				break
			}
			q.Continue = r.Continue // the next page starts after the last object of this one
		}
		sections = append(sections, s)
		printSection(out, s, show)
	}
	return sections, nil
}

// waitWithProgress waits until inf has synced, printing the status changes that arrive and,
// while the list is in progress, the object count every half second.
func waitWithProgress(ctx context.Context, inf *dynamicinformer.Informer, statuses <-chan informer.Status, out io.Writer) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case st := <-statuses:
			fmt.Fprintf(out, "  status: %s, %d objects\n", st, st.Objects)
			if st.Key == inf.Key() && st.Phase == informer.PhaseSynced {
				return nil
			}
		case <-tick.C:
			st := inf.Status() // the current status, whether or not it changed
			if st.Phase == informer.PhaseSynced {
				return nil
			}
			fmt.Fprintf(out, "  %s: %d objects so far\n", st.Phase, st.Objects)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// printSection prints a query's matches: up to five rows with every index value, then a count.
func printSection(out io.Writer, s section, show []cache.IndexFunc) {
	names := s.Names()
	plan := s.Pages[0].Plan
	fmt.Fprintf(out, "\n%s: %d matches (planner: candidates from %q, %d candidates)\n", s.Title, len(names), plan.Driver, plan.Candidates)
	if len(s.Pages) > 1 {
		for k, p := range s.Pages {
			var page []string
			for _, o := range p.Items {
				page = append(page, o.GetName())
			}
			fmt.Fprintf(out, "  page %d: %s\n", k+1, strings.Join(page, " "))
		}
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	header := "  NAMESPACE\tNAME"
	for _, ix := range indexes {
		header += "\t" + strings.ToUpper(ix.name)
	}
	fmt.Fprintln(tw, header)
	const maxRows = 5
	for k, o := range s.Pages[0].Items {
		if k == maxRows {
			break
		}
		row := "  " + o.GetNamespace() + "\t" + o.GetName()
		for _, fn := range show {
			vals, _ := fn(o) // a missing field has no value; errors only concern maps and lists
			row += "\t" + strings.Join(vals, ",")
		}
		fmt.Fprintln(tw, row)
	}
	_ = tw.Flush()
	if len(names) > maxRows {
		fmt.Fprintf(out, "  ... and %d more\n", len(names)-maxRows)
	}
}
