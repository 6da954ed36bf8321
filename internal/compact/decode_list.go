package compact

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// List is a LIST response decoded into compact objects. It satisfies what client-go's
// pager and Reflector need of a list (meta.ListAccessor, meta.ExtractList).
type List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []*Object `json:"items"`
}

var _ runtime.Object = (*List)(nil)

// DeepCopyObject copies the list; the items share their immutable bytes.
func (l *List) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	c := &List{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	if l.Items != nil {
		c.Items = make([]*Object, len(l.Items))
		for i, it := range l.Items {
			c.Items[i] = it.DeepCopy()
		}
	}
	return c
}

// DecodeList splits a LIST body ({"kind":"PodList","apiVersion":"v1","metadata":{...},
// "items":[...]}) into compact objects without building maps: one validating pass over the
// body, and one copy of each item (managedFields cut, projected) into an allocation of its
// own, so that the body is not retained. Items of typed lists, which the API server sends
// without kind and apiVersion, get them from the list, as client-go's unstructured
// decoding does. "items": null or no items give an empty list. Invalid JSON, an "items"
// that is not an array, or an item that is not an object is an error wrapping
// ErrMalformed.
func (d *Decoder) DecodeList(body []byte) (*List, error) {
	s := getScratch()
	defer putScratch(s)
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		if err := validDocument(body); err != nil {
			return nil, err
		}
		return nil, malformed("a list must be a JSON object")
	}
	var (
		kind, apiVersion string
		meta             []byte
		items            []*Object
		itemsAt          = -1 // start of the "items" array that counts
		itemsInject      string
	)
	end, err := eachMember(body, i, 0, func(m member) (int, error) {
		switch {
		case m.is(body, "items"):
			itemsAt, items = -1, nil
			if m.valStart < len(body) && body[m.valStart] == '[' {
				itemsAt, itemsInject = m.valStart, injection(kind, apiVersion)
				var end int
				var err error
				items, end, err = d.decodeItems(body, m.valStart, s, itemsInject)
				return end, err
			}
			end, err := skipValue(body, m.valStart, 1)
			if err == nil && string(body[m.valStart:end]) != "null" {
				err = malformed("list items are not an array")
			}
			return end, err
		case m.is(body, "kind"), m.is(body, "apiVersion"), m.is(body, "metadata"):
			end, err := skipValue(body, m.valStart, 1)
			if err != nil {
				return end, err
			}
			v := body[m.valStart:end]
			switch {
			case m.is(body, "kind"):
				kind = textOf(v)
			case m.is(body, "apiVersion"):
				apiVersion = textOf(v)
			default:
				meta = v
			}
			return end, nil
		}
		return skipValue(body, m.valStart, 1)
	})
	if err != nil {
		return nil, err
	}
	if j := skipSpace(body, end); j != len(body) {
		return nil, syntaxErr(j, "invalid character "+quoteChar(body[j])+" after top-level value")
	}
	if inject := injection(kind, apiVersion); itemsAt >= 0 && inject != itemsInject {
		// kind or apiVersion came after the items (or twice): the items that lacked them
		// must carry the list's final ones. Rare; the API server writes items last.
		if items, _, err = d.decodeItems(body, itemsAt, s, inject); err != nil {
			return nil, err
		}
	}
	list := &List{TypeMeta: metav1.TypeMeta{Kind: kind, APIVersion: apiVersion}, Items: items}
	if len(meta) > 0 && string(meta) != "null" {
		if err := json.Unmarshal(meta, &list.ListMeta); err != nil {
			return nil, fmt.Errorf("compact: list metadata: %w: %w", ErrMalformed, err)
		}
	}
	return list, nil
}

// decodeItems decodes the array starting at body[i] into objects.
func (d *Decoder) decodeItems(body []byte, i int, s *scratch, inject string) ([]*Object, int, error) {
	var items []*Object
	end, err := eachElement(body, i, 1, func(start int) (int, error) {
		if start >= len(body) || body[start] != '{' {
			end, err := skipValue(body, start, 2)
			if err == nil {
				err = malformed("list item %d is not an object", len(items))
			}
			return end, err
		}
		o, err := d.decodeAt(body, start, 0, s, inject) // judged on its own: decodeAt
		if err != nil {
			return o.end, fmt.Errorf("list item %d: %w", len(items), err)
		}
		items = append(items, o.obj)
		return o.end, nil
	})
	return items, end, err
}
