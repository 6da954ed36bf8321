package dynamicinformer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kindex/kindex/internal/compact"
	"github.com/kindex/kindex/internal/storage"
	"github.com/kindex/kindex/internal/testsupport/podgen"
	"github.com/kindex/kindex/jsonpath"
)

// The compact factory keeps spans when asked to and whenever it has indexes, never for
// compressed objects; objects decoded with the resulting options carry them (or not).
func TestCompactModeOptionsSpans(t *testing.T) {
	indexed := storage.Config{Indexes: map[string]*jsonpath.Path{"node": jsonpath.MustCompile("{.spec.nodeName}")}}
	for _, c := range []struct {
		name  string
		sc    storage.Config
		copts CompactOptions
		want  bool
	}{
		{"default", storage.Config{}, CompactOptions{}, false},
		{"asked", storage.Config{}, CompactOptions{Spans: true}, true},
		{"indexes", indexed, CompactOptions{}, true},
		{"indexes, compressed", indexed, CompactOptions{Compress: true}, false},
		{"asked, compressed", storage.Config{}, CompactOptions{Spans: true, Compress: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := compactModeOptions(c.sc, c.copts)
			require.Equal(t, c.want, opts.Spans)
			d, err := compact.NewDecoder(opts)
			require.NoError(t, err)
			o, err := d.DecodeObject(podgen.GenPodJSON(1))
			require.NoError(t, err)
			require.Equal(t, c.want, len(o.Spans()) > 0, "spans of a decoded Pod")
		})
	}
}

// ProjectIndexes projects onto the indexes' paths: the decoded object keeps what they read.
func TestCompactModeOptionsProjectIndexes(t *testing.T) {
	sc := storage.Config{Indexes: map[string]*jsonpath.Path{"node": jsonpath.MustCompile("{.spec.nodeName}")}}
	opts := compactModeOptions(sc, CompactOptions{ProjectIndexes: true})
	require.Len(t, opts.ProjectPaths, 1)
	require.NotNil(t, opts.Projection)
	require.True(t, opts.StreamList)
	require.False(t, compactModeOptions(sc, CompactOptions{WatchList: true}).StreamList)
}
