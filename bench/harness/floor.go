package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tidwall/gjson"
	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

const (
	contentTypeJSON       = "application/json"
	contentTypeProtobuf   = "application/vnd.kubernetes.protobuf"
	chunkSize             = 1 << 20
	maxErrorBodyBytes     = 4096
	protobufMagic         = "k8s\x00"
	protobufListItemField = 2 // items in every *List message; 1 is ListMeta
)

// listFloor issues one unpaginated LIST, reads the whole body without decoding it and keeps
// it until stop, so that its heap figure is the size of the raw response. Its time, CPU and
// allocation figures end at the last body byte: counting the items afterwards is not part of
// them. Like client-go, it accepts gzip unless noGzip is set.
type listFloor struct {
	name   string
	accept string
	noGzip bool
	count  func(body []byte) (int, error)
	end    syncEnd
}

func (f *listFloor) Name() string { return f.name }

func (f *listFloor) syncEnd() syncEnd { return f.end }

func (f *listFloor) Sync(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) (int, func(), error) {
	if f.noGzip {
		cfg = rest.CopyConfig(cfg)
		cfg.DisableCompression = true
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, nil, err
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return 0, nil, err
	}
	u := base.JoinPath(resourcePath(gvr, namespace)...)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", f.accept)
	// A client-go user agent: the apiserver pretty-prints JSON for curl-like agents.
	req.Header.Set("User-Agent", rest.DefaultKubernetesUserAgent())

	start := time.Now()
	f.end = syncEnd{}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("LIST %s: %w", u, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		if resp.StatusCode == http.StatusNotAcceptable {
			return 0, nil, fmt.Errorf("%w: the apiserver does not serve %s as %s", ErrNotSupported, gvr.GroupResource(), f.accept)
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
		return 0, nil, fmt.Errorf("LIST %s as %s: %s: %s", u, f.accept, resp.Status, bytes.TrimSpace(msg))
	}
	chunks, err := readChunks(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("LIST %s: reading the body: %w", u, err)
	}
	f.end = syncEndNow(start)

	// The joined copy is garbage by the time the harness measures the heap; chunks are not.
	n, err := f.count(bytes.Join(chunks, nil))
	if err != nil {
		return 0, nil, fmt.Errorf("LIST %s: counting items: %w", u, err)
	}
	return n, func() { clear(chunks) }, nil
}

// resourcePath returns the path segments of a LIST of gvr in namespace ("" for all).
func resourcePath(gvr schema.GroupVersionResource, namespace string) []string {
	p := []string{"apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		p = []string{"api", gvr.Version}
	}
	if namespace != "" {
		p = append(p, "namespaces", namespace)
	}
	return append(p, gvr.Resource)
}

// readChunks reads r to the end into 1 MiB chunks, so that a 150 MB body costs no copying
// while it arrives. The last chunk is cut to size, so that the chunks hold the body exactly.
func readChunks(r io.Reader) ([][]byte, error) {
	var chunks [][]byte
	for {
		buf := make([]byte, chunkSize)
		n, err := io.ReadFull(r, buf)
		switch {
		case err == nil:
			chunks = append(chunks, buf)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			if n > 0 {
				chunks = append(chunks, bytes.Clone(buf[:n]))
			}
			return chunks, nil
		default:
			return nil, err
		}
	}
}

func countJSONItems(body []byte) (int, error) {
	if !gjson.ValidBytes(body) {
		return 0, errors.New("response is not valid JSON")
	}
	items := gjson.GetBytes(body, "items")
	if !items.IsArray() {
		return 0, errors.New("response has no items array")
	}
	return int(gjson.GetBytes(body, "items.#").Int()), nil
}

// countProtobufItems counts the items of a protobuf-encoded *List without decoding them: the
// body is the "k8s\0" magic and a runtime.Unknown whose Raw is the list message.
func countProtobufItems(body []byte) (int, error) {
	if !bytes.HasPrefix(body, []byte(protobufMagic)) {
		return 0, errors.New("response lacks the protobuf magic prefix")
	}
	var u runtime.Unknown
	if err := u.Unmarshal(body[len(protobufMagic):]); err != nil {
		return 0, fmt.Errorf("decoding the envelope: %w", err)
	}
	n := 0
	for b := u.Raw; len(b) > 0; {
		num, typ, tagLen := protowire.ConsumeTag(b)
		if tagLen < 0 {
			return 0, protowire.ParseError(tagLen)
		}
		valLen := protowire.ConsumeFieldValue(num, typ, b[tagLen:])
		if valLen < 0 {
			return 0, protowire.ParseError(valLen)
		}
		if num == protobufListItemField && typ == protowire.BytesType {
			n++
		}
		b = b[tagLen+valLen:]
	}
	return n, nil
}
