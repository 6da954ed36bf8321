package compact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restclientwatch "k8s.io/client-go/rest/watch"
)

const (
	frameAdded    = `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"n","resourceVersion":"10","uid":"u1","managedFields":[{"manager":"m"}],"labels":{"app":"x"}},"spec":{"nodeName":"{}[]\"\\"}}}`
	frameModified = `{"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"n","resourceVersion":"11"}}}`
	frameDeleted  = `{"object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"n","resourceVersion":"12"}},"type":"DELETED"}`
	frameBookmark = `{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"13","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}}`
	frameGone     = `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (13)","reason":"Expired","code":410}}`
	frameGoneOld  = `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"gone","reason":"Gone","code":410}}`
)

func TestDecodeWatchEvent(t *testing.T) {
	d := &Decoder{}
	t.Run("added", func(t *testing.T) {
		ev, err := d.DecodeWatchEvent([]byte(frameAdded))
		require.NoError(t, err)
		assert.Equal(t, watch.Added, ev.Type)
		o := ev.Object.(*Object)
		assert.Equal(t, "n", o.GetNamespace())
		assert.Equal(t, "a", o.GetName())
		assert.Equal(t, "10", o.GetResourceVersion())
		assert.Equal(t, "u1", string(o.GetUID()))
		assert.Equal(t, map[string]string{"app": "x"}, o.GetLabels())
		assert.NotContains(t, string(o.RawJSON()), "managedFields")
		u, err := o.Unstructured()
		require.NoError(t, err)
		assert.Equal(t, `{}[]"\`, u.Object["spec"].(map[string]any)["nodeName"])
	})
	t.Run("modified and deleted", func(t *testing.T) {
		for typ, frame := range map[watch.EventType]string{watch.Modified: frameModified, watch.Deleted: frameDeleted} {
			ev, err := d.DecodeWatchEvent([]byte(frame))
			require.NoError(t, err)
			assert.Equal(t, typ, ev.Type)
			assert.IsType(t, &Object{}, ev.Object)
		}
	})
	t.Run("bookmark carries resourceVersion and annotations", func(t *testing.T) {
		ev, err := d.DecodeWatchEvent([]byte(frameBookmark))
		require.NoError(t, err)
		assert.Equal(t, watch.Bookmark, ev.Type)
		o := ev.Object.(*Object)
		assert.Equal(t, "13", o.GetResourceVersion())
		assert.Equal(t, "true", o.GetAnnotations()[metav1.InitialEventsAnnotationKey])
	})
	t.Run("error events carry a Status", func(t *testing.T) {
		for _, frame := range []string{frameGone, frameGoneOld} {
			ev, err := d.DecodeWatchEvent([]byte(frame))
			require.NoError(t, err)
			assert.Equal(t, watch.Error, ev.Type)
			st, ok := ev.Object.(*metav1.Status)
			require.True(t, ok, "%T", ev.Object)
			assert.EqualValues(t, 410, st.Code)
			err = apierrors.FromObject(st)
			// What the Reflector checks to relist.
			assert.True(t, apierrors.IsResourceExpired(err) || apierrors.IsGone(err), "%v", err)
		}
	})
	t.Run("a custom kind named Status is an object", func(t *testing.T) {
		ev, err := d.DecodeWatchEvent([]byte(`{"type":"ADDED","object":{"kind":"Status","apiVersion":"example.com/v1","metadata":{"name":"s"}}}`))
		require.NoError(t, err)
		assert.IsType(t, &Object{}, ev.Object)
	})
	t.Run("malformed", func(t *testing.T) {
		for name, frame := range map[string]string{
			"empty":           ``,
			"not an object":   `["ADDED"]`,
			"unknown type":    `{"type":"CREATED","object":{}}`,
			"no type":         `{"object":{}}`,
			"no object":       `{"type":"ADDED"}`,
			"object a string": `{"type":"ADDED","object":"x"}`,
			"truncated":       `{"type":"ADDED","object":{"metadata":{}}`,
			"invalid":         `{"type":"ADDED","object":{"metadata":{"name":a}}}`,
			"garbage after":   `{"type":"ADDED","object":{}}x`,
		} {
			_, err := d.DecodeWatchEvent([]byte(frame))
			assert.ErrorIs(t, err, ErrMalformed, name)
		}
	})
}

// readFrames reads every frame of stream with client-go's streaming decoder loop protocol
// (growing buffers on io.ErrShortBuffer), starting from a tiny buffer.
func readFrames(t *testing.T, r io.Reader) ([]string, error) {
	t.Helper()
	fr := framer{}.NewFrameReader(io.NopCloser(r))
	var frames []string
	buf := make([]byte, 3)
	for {
		base := 0
		for {
			n, err := fr.Read(buf[base:])
			if err == io.ErrShortBuffer {
				require.Positive(t, n)
				base += n
				buf = append(buf, make([]byte, len(buf))...)
				continue
			}
			if err != nil {
				return frames, err
			}
			base += n
			break
		}
		frames = append(frames, string(buf[:base]))
	}
}

func TestFrameReader(t *testing.T) {
	stream := frameAdded + "\n" + frameModified + "\n\n  " + frameDeleted + frameBookmark + "\r\n\t" + frameGone + "\n"
	want := []string{frameAdded, frameModified, frameDeleted, frameBookmark, frameGone}
	for name, r := range map[string]func() io.Reader{
		"whole":    func() io.Reader { return strings.NewReader(stream) },
		"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(stream)) },
		"half":     func() io.Reader { return iotest.HalfReader(strings.NewReader(stream)) },
	} {
		t.Run(name, func(t *testing.T) {
			frames, err := readFrames(t, r())
			assert.Equal(t, io.EOF, err)
			assert.Equal(t, want, frames)
		})
	}
	t.Run("truncated", func(t *testing.T) {
		frames, err := readFrames(t, strings.NewReader(frameAdded+"\n"+frameModified[:30]))
		assert.Equal(t, io.ErrUnexpectedEOF, err)
		assert.Equal(t, []string{frameAdded}, frames)
	})
	t.Run("garbage between frames", func(t *testing.T) {
		_, err := readFrames(t, strings.NewReader(frameAdded+"\nx"+frameModified))
		var se *SyntaxError
		require.True(t, errors.As(err, &se), "%v", err)
		assert.EqualValues(t, len(frameAdded)+1, se.Offset)
		assert.ErrorIs(t, err, ErrMalformed)
	})
	t.Run("read error passes through", func(t *testing.T) {
		boom := errors.New("connection reset")
		_, err := readFrames(t, io.MultiReader(strings.NewReader(frameAdded[:20]), iotest.ErrReader(boom)))
		assert.ErrorIs(t, err, boom)
	})
}

// newPipeline reads a watch stream as client-go's rest client does (Request.Watch): the
// negotiated serializer's framer, stream serializer and codec, rest/watch's decoder and a
// StreamWatcher.
func newPipeline(r io.Reader) (watch.Interface, *handoff) {
	ns := newNegotiatedSerializer(&Decoder{})
	info := ns.SupportedMediaTypes()[0]
	fr := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(r))
	dec := restclientwatch.NewDecoder(streaming.NewDecoder(fr, info.StreamSerializer.Serializer), ns.DecoderToVersion(info.Serializer, nil))
	return watch.NewStreamWatcher(dec, apierrors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding")), ns.c.h
}

// TestWatchPipeline runs frames through the same pipeline as client-go's rest client.
func TestWatchPipeline(t *testing.T) {
	stream := strings.Join([]string{frameAdded, frameModified, frameBookmark, frameDeleted, frameGone}, "\n") + "\n"
	w, h := newPipeline(iotest.HalfReader(strings.NewReader(stream)))
	defer w.Stop()
	var got []watch.EventType
	var objs []any
	for ev := range w.ResultChan() {
		got = append(got, ev.Type)
		objs = append(objs, ev.Object)
	}
	require.Equal(t, []watch.EventType{watch.Added, watch.Modified, watch.Bookmark, watch.Deleted, watch.Error}, got)
	assert.Equal(t, "a", objs[0].(*Object).GetName())
	assert.Equal(t, "11", objs[1].(*Object).GetResourceVersion())
	assert.Equal(t, "true", objs[2].(*Object).GetAnnotations()[metav1.InitialEventsAnnotationKey])
	assert.True(t, apierrors.IsResourceExpired(apierrors.FromObject(objs[4].(*metav1.Status))))
	// Objects do not share the streaming decoder's buffer.
	assert.NotContains(t, string(objs[0].(*Object).RawJSON()), "MODIFIED")
	assert.Equal(t, "10", objs[0].(*Object).GetResourceVersion())
	// Every decoded object was taken from the handoff.
	h.mu.Lock()
	assert.Empty(t, h.m)
	h.mu.Unlock()
}

// TestHandoff: objects not taken are dropped (bounded); bytes not handed off, or equal
// bytes elsewhere, are decoded as usual.
func TestHandoff(t *testing.T) {
	d := &Decoder{}
	h := &handoff{}
	c := codec{d: d, h: h}
	first := mustDecode(t, d, []byte(`{"metadata":{"name":"first"}}`))
	h.put(first)
	for i := range handoffMax + 10 {
		h.put(mustDecode(t, d, []byte(fmt.Sprintf(`{"metadata":{"name":"o%d"}}`, i))))
	}
	assert.LessOrEqual(t, len(h.m), handoffMax)
	assert.Nil(t, h.take(first.RawJSON()), "dropped")
	out, _, err := c.Decode(first.RawJSON(), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "first", out.(*Object).GetName(), "decoded instead")
	assert.NotSame(t, first, out)

	o := mustDecode(t, d, []byte(`{"metadata":{"name":"x"}}`))
	h.put(o)
	assert.Nil(t, h.take(append([]byte(nil), o.RawJSON()...)), "same JSON elsewhere is not the handed-off object")
	assert.Nil(t, h.take(o.RawJSON()[:5]), "a prefix is not the object")
	out, _, err = c.Decode(o.RawJSON(), nil, nil)
	require.NoError(t, err)
	assert.Same(t, o, out)
	assert.Nil(t, (*handoff)(nil).take(o.RawJSON()))
}

// TestWatchPipelineMalformed: a frame that does not decode ends the watch with an error
// event, as with client-go's own decoder.
func TestWatchPipelineMalformed(t *testing.T) {
	stream := frameAdded + "\n" + `{"type":"ADDED","object":{"metadata":{"name":tru}}}` + "\n" + frameModified
	w, _ := newPipeline(bytes.NewReader([]byte(stream)))
	defer w.Stop()
	var got []watch.EventType
	for ev := range w.ResultChan() {
		got = append(got, ev.Type)
	}
	assert.Equal(t, []watch.EventType{watch.Added, watch.Error}, got)
}

func TestEventDecoderRejectsOtherTargets(t *testing.T) {
	_, _, err := eventDecoder{}.Decode([]byte(frameAdded), nil, &metav1.Status{})
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorIs(t, eventDecoder{}.Encode(&metav1.Status{}, io.Discard), ErrUnsupported)
}
