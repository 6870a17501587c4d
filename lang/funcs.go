package lang

import (
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Shows index big collections of references in every layer
// (local.all[i % length(local.all)]). cty's Call walks every argument deeply
// looking for marks before calling a function, which makes length() cost
// O(size of the collection). onair never marks values, so length and
// element declare AllowMarked and skip the walk; their results are those of
// the stdlib functions.

var lengthFunc = function.New(&function.Spec{
	Description: "The number of elements of a list, set, tuple, map or object, or the characters of a string.",
	Params: []function.Parameter{{
		Name: "value", Type: cty.DynamicPseudoType, AllowMarked: true, AllowDynamicType: true, AllowUnknown: true,
	}},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty := args[0].Type()
		if ty == cty.String || ty == cty.DynamicPseudoType || ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType() {
			return cty.Number, nil
		}
		return cty.NilType, function.NewArgErrorf(0, "length takes a collection or a string, not %s", ty.FriendlyName())
	},
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v := args[0]
		if v.Type() == cty.String {
			return stdlib.Strlen(v)
		}
		if !v.IsKnown() {
			return cty.UnknownVal(cty.Number), nil
		}
		if v.IsNull() {
			return cty.NilVal, function.NewArgErrorf(0, "length of null")
		}
		return cty.NumberIntVal(int64(v.LengthInt())), nil
	},
})

var elementFunc = function.New(&function.Spec{
	Description: "The element of a list or tuple at an index, wrapping around at the end.",
	Params: []function.Parameter{
		{Name: "list", Type: cty.DynamicPseudoType, AllowMarked: true, AllowDynamicType: true},
		{Name: "index", Type: cty.Number},
	},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty := args[0].Type()
		switch {
		case ty.IsListType():
			return ty.ElementType(), nil
		case ty.IsTupleType():
			if !args[1].IsKnown() {
				return cty.DynamicPseudoType, nil
			}
			n := len(ty.TupleElementTypes())
			if n == 0 {
				return cty.NilType, function.NewArgErrorf(0, "cannot use element on an empty tuple")
			}
			i, ok := wholeNumber(args[1])
			if !ok || i < 0 {
				return cty.NilType, function.NewArgErrorf(1, "index must be a whole number, 0 or more")
			}
			return ty.TupleElementTypes()[i%n], nil
		case ty == cty.DynamicPseudoType:
			return cty.DynamicPseudoType, nil
		}
		return cty.NilType, function.NewArgErrorf(0, "element takes a list or tuple, not %s", ty.FriendlyName())
	},
	Impl: func(args []cty.Value, ret cty.Type) (cty.Value, error) {
		list := args[0]
		if !list.IsKnown() {
			return cty.UnknownVal(ret), nil
		}
		n := list.LengthInt()
		if n == 0 {
			return cty.NilVal, function.NewArgErrorf(0, "cannot use element on an empty list")
		}
		i, ok := wholeNumber(args[1])
		if !ok || i < 0 {
			return cty.NilVal, function.NewArgErrorf(1, "index must be a whole number, 0 or more")
		}
		return list.Index(cty.NumberIntVal(int64(i % n))), nil
	},
})
