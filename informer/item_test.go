package informer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kindex/kindex/jsonpath"
	"github.com/kindex/kindex/query"
)

// Items, counts and groups through the public API, against the decoded results.
func TestItemsAndCounts(t *testing.T) {
	e := newEnv(t, Options[obj]{})
	ctx := context.Background()
	srv := e.mode.server(widgets.GVR)
	for _, o := range []obj{colored("a", "x", "red"), colored("a", "y", "blue"), colored("b", "z", "red"), newObj("b", "w", nil)} {
		srv.add(o)
	}
	inf, err := e.f.Informer(ctx, "widgets")
	require.NoError(t, err)
	defer inf.Release()
	require.NoError(t, inf.WaitForSync(ctx))
	require.NoError(t, inf.AddIndex("color", "{.metadata.labels.color}"))

	it, err := inf.GetItem("a", "x")
	require.NoError(t, err)
	assert.Equal(t, "a/x", it.Key())
	assert.Equal(t, "x", it.Name())
	assert.Equal(t, "a", it.Namespace())
	assert.Equal(t, map[string]string{"color": "red"}, it.Labels())
	assert.Nil(t, it.Raw(), "no bytes outside the compact mode")
	vs, err := it.Eval(jsonpath.MustCompile("{.metadata.labels.color}"))
	require.NoError(t, err)
	require.Len(t, vs, 1)
	assert.Equal(t, "red", vs[0].String())
	o, err := it.Object()
	require.NoError(t, err)
	assert.Equal(t, "x", o.Name)
	var meta metav1.PartialObjectMetadata
	require.NoError(t, it.DecodeInto(&meta))
	assert.Equal(t, "x", meta.Name)
	assert.Error(t, it.DecodeInto(nil))
	_, err = inf.GetItem("a", "nope")
	assert.True(t, apierrors.IsNotFound(err))

	items, err := inf.ListItems("b")
	require.NoError(t, err)
	assert.Len(t, items, 2)

	red := query.Query{Conditions: []query.Condition{query.Eq("color", "red")}}
	res, err := inf.QueryItems(ctx, red)
	require.NoError(t, err)
	require.Len(t, res.Items, 2)
	assert.Equal(t, []string{"a/x", "b/z"}, []string{res.Items[0].Key(), res.Items[1].Key()})

	n, err := inf.Count(ctx, red)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	n, err = inf.Count(ctx, query.Query{Namespace: "b"})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	by, err := inf.CountBy(ctx, query.Query{}, "color")
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"red": 2, "blue": 1}, by)
	by, err = inf.CountBy(ctx, query.Query{Namespace: "a", Conditions: []query.Condition{query.Has("color")}}, "color")
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"red": 1, "blue": 1}, by)
	_, err = inf.CountBy(ctx, query.Query{}, "size")
	assert.ErrorIs(t, err, ErrIndexNotFound)
	_, err = inf.Count(ctx, query.Query{Conditions: []query.Condition{query.Eq("size", "1")}})
	assert.ErrorIs(t, err, ErrIndexNotFound)
}
