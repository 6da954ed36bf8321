package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"sync"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	k8sjsonpath "k8s.io/client-go/util/jsonpath"

	"github.com/kindex/kindex/discovery"
	"github.com/kindex/kindex/jsonpath"
)

// Where the columns of a resource come from, in this order:
//
//   - built-in resources of the core, apps, batch and networking.k8s.io groups: the columns
//     kubectl prints, computed locally (builtin.go);
//   - custom resources: the CRD's additionalPrinterColumns for the version read, evaluated
//     locally with kindex's JSONPath compiler and formatted as the apiserver formats them
//     (one GET of the CRD per run);
//   - any other resource (other built-in groups, aggregated APIs, a CRD the user may not
//     read): the server's Table for the objects printed (one LIST as Table per run, and per
//     changed object with --watch; a GET for an object asked for by name, as kubectl does);
//   - if that fails too: NAME and AGE.

// columnSource builds the table kubectl would print for objects of one resource.
type columnSource interface {
	// describe says where the columns come from, for -v 1.
	describe() string
	// table returns one row per object, in order; now is the time AGE counts to.
	table(ctx context.Context, objs []*unstructured.Unstructured, now time.Time) (*metav1.Table, error)
}

// localColumns computes cells from cached objects.
type localColumns struct {
	from    string
	columns []metav1.TableColumnDefinition
	cells   func(obj map[string]any, now time.Time) ([]any, error)
}

func (l *localColumns) describe() string { return l.from }

func (l *localColumns) table(_ context.Context, objs []*unstructured.Unstructured, now time.Time) (*metav1.Table, error) {
	t := &metav1.Table{ColumnDefinitions: l.columns, Rows: make([]metav1.TableRow, 0, len(objs))}
	for _, o := range objs {
		cells, err := l.cells(o.Object, now)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetKind(), objectKey(o), err)
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: o}})
	}
	return t, nil
}

func objectKey(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}

// defaultColumns is NAME and AGE, kubectl's table for objects without printer columns.
func defaultColumns(why string) *localColumns {
	return &localColumns{
		from:    "NAME and AGE only (" + why + ")",
		columns: []metav1.TableColumnDefinition{nameCol(), col("Age", "string")},
		cells: func(obj map[string]any, now time.Time) ([]any, error) {
			u := unstructured.Unstructured{Object: obj}
			return []any{u.GetName(), since(u.GetCreationTimestamp(), now)}, nil
		},
	}
}

// crdColumns evaluates a CRD's additionalPrinterColumns as the apiserver does: NAME, then
// each column's first value, typed: integer, number and boolean cells hold the value (a
// number of the other kind is converted, anything else is empty), string cells the text of
// the value, date cells the time since an RFC 3339 timestamp (AGE's format), or <invalid>.
// An expression that yields nothing leaves the cell empty; a null in a string column is
// "<no value>", as the apiserver prints it. A column whose JSONPath the apiserver cannot
// parse ends its columns, as it ends the server's: the columns before it are printed, not it
// nor the ones after it (the CRD's validation lets such a path through). An error means that
// kindex's compiler refuses a path the server's parser accepts: the server's Table is then
// the answer.
func crdColumns(name, version string, defs []apiextv1.CustomResourceColumnDefinition) (*localColumns, error) {
	from := fmt.Sprintf("the additionalPrinterColumns of CRD %s (version %s)", name, version)
	if len(defs) == 0 { // the apiserver's default
		defs = []apiextv1.CustomResourceColumnDefinition{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}
		from = fmt.Sprintf("NAME and AGE: CRD %s (version %s) has no additionalPrinterColumns", name, version)
	}
	for i, d := range defs {
		// The apiserver's test (its tableconvertor), with its parser.
		if err := k8sjsonpath.New(d.Name).Parse("{" + d.JSONPath + "}"); err != nil {
			from = fmt.Sprintf("%s, up to column %q: its JSONPath %q does not parse (%v); as the apiserver, neither it nor the columns after it are shown",
				from, d.Name, d.JSONPath, err)
			defs = defs[:i]
			break
		}
	}
	columns := []metav1.TableColumnDefinition{nameCol()}
	paths := make([]*jsonpath.Path, len(defs))
	for i, d := range defs {
		p, err := jsonpath.Compile("{" + d.JSONPath + "}")
		if err != nil {
			return nil, fmt.Errorf("CRD %s column %q: %w", name, d.Name, err)
		}
		paths[i] = p
		columns = append(columns, metav1.TableColumnDefinition{Name: d.Name, Type: d.Type, Format: d.Format, Priority: d.Priority})
	}
	return &localColumns{
		from:    from,
		columns: columns,
		cells: func(obj map[string]any, now time.Time) ([]any, error) {
			u := unstructured.Unstructured{Object: obj}
			cells := make([]any, 1, 1+len(defs))
			cells[0] = u.GetName()
			for i, d := range defs {
				cells = append(cells, crdCell(paths[i], d.Type, obj, now))
			}
			return cells, nil
		},
	}, nil
}

func crdCell(p *jsonpath.Path, typ string, obj map[string]any, now time.Time) any {
	var first jsonpath.Value
	found := false
	if err := p.Each(obj, func(v jsonpath.Value) bool { first, found = v, true; return false }); err != nil || !found {
		return nil
	}
	v := first.Interface()
	switch typ {
	case "integer":
		switch n := v.(type) {
		case int64:
			return n
		case float64:
			return int64(n)
		}
	case "number":
		switch n := v.(type) {
		case int64:
			return numberCell(float64(n))
		case float64:
			return numberCell(n)
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "string":
		if v == nil { // a null: the apiserver prints it as client-go's printer prints no value
			return "<no value>"
		}
		return first.String()
	case "date":
		if s, ok := v.(string); ok {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return since(t, now)
		}
	}
	return nil
}

// numberCell is the cell kubectl prints for the apiserver's float64 f: the server sends the
// Table as JSON, and kubectl reads back a number whose JSON is an int64 as one. So a whole
// number prints as an integer (100000000000, not 1e+11) and an integer the float64 cannot
// hold prints rounded, as the server converted it (2^53+1 prints 9007199254740992).
func numberCell(f float64) any {
	b, err := json.Marshal(f)
	if err != nil { // NaN or an infinity, which no JSON holds
		return f
	}
	if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return i
	}
	return f
}

// columnFinder picks and caches the column source of each resource.
type columnFinder struct {
	cfg *rest.Config
	log func(format string, args ...any)

	mu      sync.Mutex
	sources map[schema.GroupResource]columnSource
	crds    dynamic.NamespaceableResourceInterface
	raw     *rest.RESTClient
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func newColumnFinder(cfg *rest.Config, log func(string, ...any)) (*columnFinder, error) {
	httpClient, err := sameHostClient(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	rc := rest.CopyConfig(cfg)
	rc.GroupVersion = &schema.GroupVersion{}
	rc.APIPath = "/"
	rc.NegotiatedSerializer = unstructuredNegotiator{}
	raw, err := rest.RESTClientForConfigAndClient(rc, httpClient)
	if err != nil {
		return nil, err
	}
	return &columnFinder{cfg: cfg, log: log, sources: map[schema.GroupResource]columnSource{},
		crds: dyn.Resource(crdGVR), raw: raw}, nil
}

// sameHostClient is the HTTP client of cfg that, like kindex's own clients, never follows a
// redirect to another host with our credentials.
func sameHostClient(cfg *rest.Config) (*http.Client, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	httpClient.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && (req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme) {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return httpClient, nil
}

// source returns the column source for res, finding it on first use.
func (f *columnFinder) source(ctx context.Context, t *target, scope serverScope) columnSource {
	gr := t.Res.GVR.GroupResource()
	f.mu.Lock()
	s, ok := f.sources[gr]
	f.mu.Unlock()
	if ok {
		return s
	}
	s = f.find(ctx, t.Res, scope)
	f.log("columns of %s: %s", qualified(t.Res), s.describe())
	f.mu.Lock()
	f.sources[gr] = s
	f.mu.Unlock()
	return s
}

func (f *columnFinder) find(ctx context.Context, res discovery.Resource, scope serverScope) columnSource {
	if b, ok := builtinTables[res.GVR.GroupResource()]; ok {
		return &localColumns{from: "kubectl's columns for " + qualified(res) + ", computed locally", columns: b.columns, cells: b.cells}
	}
	server := &serverColumns{raw: f.raw, res: res, scope: scope}
	if res.GVR.Group == "" || !isDottedGroup(res.GVR.Group) { // never a CRD
		return server
	}
	name := res.GVR.Resource + "." + res.GVR.Group
	u, err := f.crds.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err): // an aggregated API
		return server
	case err != nil:
		f.log("cannot read CRD %s (%v); asking the server for its columns", name, err)
		return server
	}
	var crd apiextv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
		return defaultColumns(err.Error())
	}
	defs := crd.Spec.Versions
	for _, v := range defs {
		if v.Name == res.GVR.Version {
			c, err := crdColumns(name, v.Name, v.AdditionalPrinterColumns)
			if err != nil {
				f.log("%v; asking the server for the columns", err)
				return server
			}
			return c
		}
	}
	return server
}

func isDottedGroup(g string) bool {
	for i := 0; i < len(g); i++ {
		if g[i] == '.' {
			return true
		}
	}
	return false
}

// serverScope is what the informer was asked for, so that a LIST as Table covers the same
// objects.
type serverScope struct {
	Namespace     string // "" for every namespace
	LabelSelector string
	FieldSelector string
	// Named: the objects were asked for by name, which kubectl GETs one by one; a listing
	// is a LIST. The server's Tables of the two can differ: a StorageClass's "(default)"
	// is in a LIST's only.
	Named bool
}

// serverColumns asks the apiserver for its Table of the objects, kubectl's way to print
// resources it has no printer for. Rows are matched to the cached objects by UID; an object
// the server no longer has keeps its name and empty cells.
type serverColumns struct {
	raw   *rest.RESTClient
	res   discovery.Resource
	scope serverScope

	mu       sync.Mutex
	failed   *localColumns // set after the server refused: NAME and AGE from then on
	lastCols []metav1.TableColumnDefinition
}

func (s *serverColumns) describe() string {
	return "the server's Table for " + qualified(s.res) + " (not computed locally)"
}

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

func (s *serverColumns) basePath(namespace string) string {
	p := "/api/" + s.res.GVR.Version
	if s.res.GVR.Group != "" {
		p = path.Join("/apis", s.res.GVR.Group, s.res.GVR.Version)
	}
	if s.res.Namespaced && namespace != "" {
		p = path.Join(p, "namespaces", namespace)
	}
	return path.Join(p, s.res.GVR.Resource)
}

func (s *serverColumns) get(ctx context.Context, p string, params url.Values) (*metav1.Table, error) {
	req := s.raw.Get().AbsPath(p).SetHeader("Accept", tableAccept)
	for k, vs := range params {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	body, err := req.Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var t metav1.Table
	if err := utiljson.Unmarshal(body, &t); err != nil { // integers as int64, as kubectl reads them
		return nil, err
	}
	if t.Kind != "Table" {
		return nil, fmt.Errorf("the server answered %q, not a Table", t.Kind)
	}
	return &t, nil
}

func (s *serverColumns) table(ctx context.Context, objs []*unstructured.Unstructured, now time.Time) (*metav1.Table, error) {
	s.mu.Lock()
	failed := s.failed
	s.mu.Unlock()
	if failed != nil {
		return failed.table(ctx, objs, now)
	}
	rows := map[string]metav1.TableRow{}
	var cols []metav1.TableColumnDefinition
	var err error
	if len(objs) == 1 && s.scope.Named { // one object asked for by name, as kubectl GETs it
		o := objs[0]
		var t *metav1.Table
		t, err = s.get(ctx, path.Join(s.basePath(o.GetNamespace()), o.GetName()), url.Values{"includeObject": {"Metadata"}})
		if apierrors.IsNotFound(err) { // deleted meanwhile: the columns are known
			t, err = &metav1.Table{ColumnDefinitions: s.lastColumns()}, nil
		}
		if err == nil {
			cols = t.ColumnDefinitions
			addRows(rows, t)
		}
	} else if len(objs) > 0 {
		params := url.Values{"includeObject": {"Metadata"}, "limit": {"500"}}
		if s.scope.LabelSelector != "" {
			params.Set("labelSelector", s.scope.LabelSelector)
		}
		fieldSel := s.scope.FieldSelector
		ns := s.scope.Namespace
		if len(objs) == 1 { // one object of a listing (--watch: one per change): the LIST of it
			fieldSel = withName(fieldSel, objs[0].GetName())
			ns = objs[0].GetNamespace()
		}
		if fieldSel != "" {
			params.Set("fieldSelector", fieldSel)
		}
		for {
			var t *metav1.Table
			if t, err = s.get(ctx, s.basePath(ns), params); err != nil {
				break
			}
			cols = t.ColumnDefinitions
			addRows(rows, t)
			if t.Continue == "" {
				break
			}
			params.Set("continue", t.Continue)
		}
	} else {
		cols = s.lastColumns()
	}
	if err != nil && ctx.Err() != nil {
		return nil, err // cancelled (Ctrl-C): the server's Table is not what failed
	}
	if err != nil || len(cols) == 0 && len(objs) > 0 {
		why := "the server's Table is not available"
		if err != nil {
			why = fmt.Sprintf("the server's Table is not available: %v", err)
		}
		d := defaultColumns(why)
		s.mu.Lock()
		s.failed = d
		s.mu.Unlock()
		return d.table(ctx, objs, now)
	}
	s.mu.Lock()
	if len(cols) > 0 {
		s.lastCols = cols
	}
	s.mu.Unlock()
	out := &metav1.Table{ColumnDefinitions: cols, Rows: make([]metav1.TableRow, 0, len(objs))}
	for _, o := range objs {
		r, ok := rows[string(o.GetUID())]
		if !ok {
			r.Cells = make([]any, len(cols))
			for i, c := range cols {
				if c.Format == "name" {
					r.Cells[i] = o.GetName()
				}
			}
		}
		r.Object = runtime.RawExtension{Object: o}
		out.Rows = append(out.Rows, r)
	}
	return out, nil
}

func (s *serverColumns) lastColumns() []metav1.TableColumnDefinition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastCols
}

// addRows indexes t's rows by the UID of their object's metadata.
func addRows(rows map[string]metav1.TableRow, t *metav1.Table) {
	for _, r := range t.Rows {
		var m metav1.PartialObjectMetadata
		if len(r.Object.Raw) == 0 || json.Unmarshal(r.Object.Raw, &m) != nil || m.UID == "" {
			continue
		}
		rows[string(m.UID)] = metav1.TableRow{Cells: r.Cells, Conditions: r.Conditions}
	}
}

// unstructuredNegotiator lets a RESTClient send requests whose answers are read as raw
// bytes; it never encodes or decodes objects itself.
type unstructuredNegotiator struct{}

func (unstructuredNegotiator) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{{MediaType: "application/json", MediaTypeType: "application", MediaTypeSubType: "json",
		EncodesAsText: true, Serializer: unstructured.UnstructuredJSONScheme}}
}

func (unstructuredNegotiator) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (unstructuredNegotiator) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}
