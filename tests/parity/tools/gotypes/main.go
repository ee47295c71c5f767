// Command syncagent-gotypes prints the facts Go's encoding/json uses to encode upstream's
// DynamoComponentDeploymentSpec and every type reachable from it: for each struct, its fields in
// encoding order after embedded structs are flattened (json name, omitempty, omitzero, the
// ",string" option, and which embedded pointer a promoted field sits behind), and for every other
// type its kind (pointer, slice, map, array, basic) or the custom MarshalJSON that replaces it.
//
// It is compiled inside an extracted copy of upstream's deploy/operator module, as the
// differential harness is, and reads the types by reflection: the same information
// encoding/json reads, from the same compiled source. The parity tier compares its output with
// syncagent/render/gotypes.json, the committed table syncagent's Go-JSON encoder runs on.
package main

import (
	"encoding"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	nvidiacomv1beta1 "github.com/ai-dynamo/dynamo/deploy/operator/api/v1beta1"
)

type field struct {
	JSON      string `json:"json"`
	Type      any    `json:"type"`
	OmitEmpty bool   `json:"omitempty,omitempty"`
	OmitZero  bool   `json:"omitzero,omitempty"`
	Quoted    bool   `json:"string,omitempty"`
	// EmbeddedPointer names the embedded pointer field a promoted field is reached through:
	// Go skips the field when that pointer is nil.
	EmbeddedPointer string `json:"embeddedPointer,omitempty"`
}

type table struct {
	Root  string             `json:"root"`
	Types map[string][]field `json:"structs"`
}

var (
	marshaler     = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

func typeName(t reflect.Type) string {
	return t.PkgPath() + "." + t.Name()
}

// ref describes t; named structs are described once in the table and referred to by name.
func ref(t reflect.Type, out *table) any {
	if t.Kind() != reflect.Pointer && (t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler)) {
		return map[string]any{"kind": "marshaler", "name": typeName(t)}
	}
	if t.Kind() != reflect.Pointer && (t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)) {
		return map[string]any{"kind": "textmarshaler", "name": typeName(t)}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return map[string]any{"kind": "ptr", "elem": ref(t.Elem(), out)}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"kind": "bytes"}
		}
		return map[string]any{"kind": "slice", "elem": ref(t.Elem(), out)}
	case reflect.Array:
		return map[string]any{"kind": "array", "elem": ref(t.Elem(), out), "len": t.Len()}
	case reflect.Map:
		return map[string]any{"kind": "map", "key": ref(t.Key(), out), "elem": ref(t.Elem(), out)}
	case reflect.Interface:
		return map[string]any{"kind": "interface"}
	case reflect.Struct:
		name := typeName(t)
		if _, seen := out.Types[name]; !seen {
			out.Types[name] = nil // a recursive type refers to itself while being described
			out.Types[name] = fields(t, out)
		}
		return map[string]any{"kind": "struct", "name": name}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"kind": "int"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"kind": "uint"}
	case reflect.Float32:
		return map[string]any{"kind": "float32"}
	case reflect.Float64:
		return map[string]any{"kind": "float64"}
	case reflect.Bool:
		return map[string]any{"kind": "bool"}
	case reflect.String:
		return map[string]any{"kind": "string"}
	}
	panic(fmt.Sprintf("unsupported type %s", t))
}

// candidate is one field as encoding/json's typeFields sees it before dominance is applied.
type candidate struct {
	field
	index  []int
	tagged bool
	goType reflect.Type
}

// fields flattens t as encoding/json's typeFields does: embedded structs without a json name
// promote their fields; a name at a shallower depth wins, then a tagged one; ties drop both.
func fields(t reflect.Type, out *table) []field {
	var found []candidate
	collect(t, nil, "", &found)
	byName := map[string][]candidate{}
	for _, c := range found {
		byName[c.JSON] = append(byName[c.JSON], c)
	}
	var kept []candidate
	for _, group := range byName {
		if winner, ok := dominant(group); ok {
			kept = append(kept, winner)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return lessIndex(kept[i].index, kept[j].index) })
	result := make([]field, 0, len(kept))
	for _, c := range kept {
		c.Type = ref(c.goType, out)
		result = append(result, c.field)
	}
	return result
}

func collect(t reflect.Type, index []int, viaPointer string, found *[]candidate) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if !sf.IsExported() && ft.Kind() != reflect.Struct {
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		path := append(append([]int{}, index...), i)
		if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			via := viaPointer
			if sf.Type.Kind() == reflect.Pointer {
				via = strings.Trim(fmt.Sprint(path), "[]")
			}
			collect(ft, path, via, found)
			continue
		}
		c := candidate{index: path, tagged: name != "", goType: sf.Type}
		c.JSON = name
		if name == "" {
			c.JSON = sf.Name
		}
		c.OmitEmpty = hasOption(opts, "omitempty")
		c.OmitZero = hasOption(opts, "omitzero")
		c.Quoted = hasOption(opts, "string")
		c.EmbeddedPointer = viaPointer
		*found = append(*found, c)
	}
}

func hasOption(opts, name string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

func dominant(group []candidate) (candidate, bool) {
	sort.Slice(group, func(i, j int) bool {
		if len(group[i].index) != len(group[j].index) {
			return len(group[i].index) < len(group[j].index)
		}
		return group[i].tagged && !group[j].tagged
	})
	if len(group) > 1 && len(group[0].index) == len(group[1].index) && group[0].tagged == group[1].tagged {
		return candidate{}, false
	}
	return group[0], true
}

func lessIndex(a, b []int) bool {
	for k := range a {
		if k >= len(b) {
			return false
		}
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return len(a) < len(b)
}

func main() {
	out := &table{Types: map[string][]field{}}
	root := ref(reflect.TypeFor[nvidiacomv1beta1.DynamoComponentDeploymentSpec](), out)
	out.Root = root.(map[string]any)["name"].(string)
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", " ")
	if err := encoder.Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "syncagent-gotypes: %v\n", err)
		os.Exit(2)
	}
}
