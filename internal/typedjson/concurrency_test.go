package typedjson

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Plans are compiled and decoders pooled safely under concurrent use (run with -race).
func TestConcurrentUse(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k, kind := range objectKinds {
				for _, b := range randomObjects(t, kind.new, int64(100*g+k), 2) {
					if why := sameAsSigs(b, kind.new); why != "" {
						errs <- why
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for why := range errs {
		t.Error(why)
	}
}

// Interfaces whose pointers lead back to each other are an error, not a loop without end
// (encoding/json follows them forever).
func TestInterfaceCycle(t *testing.T) {
	var a, b any
	a, b = &b, &a
	err := Unmarshal([]byte(`{"x":1}`), &a)
	require.Error(t, err)
	require.True(t, errors.Is(err, errDepth))

	var self any
	self = &self
	require.NoError(t, Unmarshal([]byte(`{"x":1}`), &self), "an interface holding its own address is replaced")
	require.Equal(t, map[string]any{"x": int64(1)}, self)
}
