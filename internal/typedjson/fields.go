package typedjson

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// The JSON fields of a struct type, by encoding/json's rules: exported fields under the
// name of their json tag (or their Go name), "-" left out, the fields of embedded structs
// (exported or not, by value or pointer, untagged) promoted as if they were the outer
// struct's, and of several fields with one name only the shallowest, and among those the
// tagged one, if exactly one stands out; otherwise none.

// fieldInfo is one JSON field: its name, the path of Go field indexes to it, and how to
// decode it.
type fieldInfo struct {
	name   string
	tagged bool
	index  []int
	typ    reflect.Type
	quoted bool // the ",string" option, for the kinds it applies to
}

// jsonFields returns the JSON fields of struct type t in the order of their index paths
// (the order encoding/json writes them in).
func jsonFields(t reflect.Type) []fieldInfo {
	type embedded struct {
		typ   reflect.Type
		index []int
	}
	var all []fieldInfo
	visited := map[reflect.Type]bool{}
	level := []embedded{{typ: t}}
	var times map[reflect.Type]int // how often each type of level is embedded at its depth
	for len(level) > 0 {
		var next []embedded
		nextTimes := map[reflect.Type]int{}
		for _, e := range level {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for k := 0; k < e.typ.NumField(); k++ {
				sf := e.typ.Field(k)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validName(name) {
					name = ""
				}
				index := append(slices.Clip(e.index), k)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					// Promote its fields, at the next depth.
					if nextTimes[ft]++; nextTimes[ft] == 1 {
						next = append(next, embedded{typ: ft, index: index})
					}
					continue
				}
				f := fieldInfo{name: name, tagged: name != "", index: index, typ: sf.Type, quoted: hasOption(opts, "string") && quotable(ft.Kind())}
				if f.name == "" {
					f.name = sf.Name
				}
				all = append(all, f)
				if times[e.typ] > 1 {
					// The type is embedded twice at this depth: its fields collide.
					all = append(all, f)
				}
			}
		}
		level, times = next, nextTimes
	}

	byName := map[string][]fieldInfo{}
	for _, f := range all {
		byName[f.name] = append(byName[f.name], f)
	}
	var out []fieldInfo
	for _, fs := range byName {
		if f, ok := dominant(fs); ok {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b fieldInfo) int { return slices.Compare(a.index, b.index) })
	return out
}

// dominant picks, of the fields with one name, the one that hides the others: the only
// one at the least depth, or the only tagged one there.
func dominant(fs []fieldInfo) (fieldInfo, bool) {
	slices.SortStableFunc(fs, func(a, b fieldInfo) int {
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return 0
	})
	if len(fs) > 1 && len(fs[0].index) == len(fs[1].index) && fs[0].tagged == fs[1].tagged {
		return fieldInfo{}, false
	}
	return fs[0], true
}

// validName reports whether a json tag's name is used as the field's name (encoding/json
// ignores names with other characters).
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) {
			continue
		}
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// quotable reports whether the ",string" option applies to a field of kind k.
func quotable(k reflect.Kind) bool {
	switch k {
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}
