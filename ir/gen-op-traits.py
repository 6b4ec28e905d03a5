#!/usr/bin/env python3
"""Writes the operator traits table (OpTraits.inc) from the installed torch.

Every registered aten operator overload gets one row built from what torch
records about it: its schema's alias annotations, its tags, and whether
torch.fx counts it as side-effectful. Rows are sorted by the overload's
qualified name (`aten::add.Tensor`; an overload without a name is
`.default`, as the graph IR spells it) so OpTraits.cpp can binary-search.

    gen-op-traits.py --output OpTraits.inc   write the C++ table
    gen-op-traits.py --dump                  print one fact line per overload
"""

import argparse
import os
import sys

import torch
import torch.fx.node

# The rule shared with capture, beside this script (no bytecode left there).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from draw_switches import switch_kind, switches_off  # noqa: E402

FIELDS = [
    "mutatesArgument",
    "returnsAlias",
    "randomSeeded",
    "pointwise",
    "reduction",
    "dataDependent",
    "core",
    "sideEffect",
    "functionalTwin",
]


def qualified_name(op_name):
    """`aten::add.Tensor` for a registry name; `.default` when unnamed."""
    return op_name if "." in op_name.split("::", 1)[1] else op_name + ".default"


def overload_packet(op_name):
    """The torch.ops.aten overload object for a registry name, or None."""
    base = op_name.split("::", 1)[1]
    name, _, overload = base.partition(".")
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        return None
    try:
        return getattr(packet, overload or "default")
    except AttributeError:
        return None


def side_effectful_overloads():
    """Overloads torch.fx never eliminates as dead code (assertions, ...)."""
    result = set()
    for fn in getattr(torch.fx.node, "_side_effectful_functions", ()):
        if isinstance(fn, torch._ops.OpOverload):
            result.add(qualified_name(fn._schema.name + (
                "." + fn._schema.overload_name if fn._schema.overload_name else "")))
    return result


def plain_arguments(schema):
    """The arguments as (name, type, default, keyword-only), without alias
    annotations."""
    return [(a.name, str(a.type), str(a.default_value), a.kwarg_only) for a in schema.arguments]


def has_functional_twin(op):
    """An in-place overload (`add_.Tensor`: writes and returns its first
    argument, nothing else) whose out-of-place twin (`add.Tensor`) takes the
    same arguments and returns one fresh tensor."""
    schema = op._schema
    base = schema.name.split("::", 1)[1]
    if not base.endswith("_") or base.endswith("__") or not schema.arguments:
        return False
    first = schema.arguments[0]
    if first.alias_info is None or not first.alias_info.is_write:
        return False
    if any(a.alias_info is not None for a in schema.arguments[1:]):
        return False
    if len(schema.returns) != 1 or schema.returns[0].alias_info is None:
        return False
    packet = getattr(torch.ops.aten, base[:-1], None)
    twin = getattr(packet, schema.overload_name or "default", None) if packet else None
    if twin is None:
        return False
    tschema = twin._schema
    return (plain_arguments(tschema) == plain_arguments(schema)
            and len(tschema.returns) == 1 and tschema.returns[0].alias_info is None
            and str(tschema.returns[0].type) == "Tensor" and not tschema.is_mutable)


def draw_switches(op):
    """[(position, name, training, off by default)] of a random operator's
    arguments that switch its draws off (at most two), by the rule capture
    applies too (draw_switches.py)."""
    found = []
    for position, argument in enumerate(op._schema.arguments):
        training = switch_kind(argument)
        if training is None:
            continue
        default = argument.default_value if argument.has_default_value() else None
        found.append((position, argument.name, training, switches_off(training, default)))
    return found[:2]


# Overloads whose schema leaves out writes their kernels make, each with the
# overload torch gives as its correctly annotated form. native_batch_norm
# updates running_mean and running_var in place when training, yet its
# schema marks neither (kept so for compatibility, says torch's comment on
# native_batch_norm_decomposition in torch/_decomp/decompositions.py); the
# Python dispatcher's kernel for its autograd key calls
# _native_batch_norm_legit, which declares both. A graph that records
# autograd is traced without the Python dispatcher and keeps
# native_batch_norm, so without this its writes would be invisible to the
# passes, the aliasing guards and the fall-back checks.
UNDECLARED_WRITES = {
    "aten::native_batch_norm.default": "aten::_native_batch_norm_legit.default",
}


def writes_arguments(schema):
    """Whether `schema` writes an argument, alone or in a list
    (`Tensor(a!)`, `Tensor(a!)[]`)."""
    return schema.is_mutable or any(
        a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


def corrected_writes(op, name):
    """Whether the correct form UNDECLARED_WRITES gives for `name` writes
    an argument; None when `name` has no entry. The two must take the same
    arguments by name (the correct form makes the written ones required),
    or the entry no longer describes torch."""
    correct_name = UNDECLARED_WRITES.get(name)
    if correct_name is None:
        return None
    correct = overload_packet(correct_name)
    names = [a.name for a in op._schema.arguments]
    if correct is None or [a.name for a in correct._schema.arguments] != names:
        raise SystemExit(f"gen-op-traits.py: {correct_name} is no longer {name} with its writes "
                         "declared; update UNDECLARED_WRITES")
    return writes_arguments(correct._schema)


def traits_of(op, side_effectful, name):
    schema = op._schema
    tags = set(op.tags)
    mutates = writes_arguments(schema) or bool(corrected_writes(op, name))
    # Any result that shares storage with an argument: views, and the
    # argument an in-place or out= overload returns.
    aliases = any(r.alias_info is not None for r in schema.returns)
    return {
        "mutatesArgument": mutates,
        "returnsAlias": aliases,
        "randomSeeded": torch.Tag.nondeterministic_seeded in tags,
        "pointwise": torch.Tag.pointwise in tags,
        "reduction": torch.Tag.reduction in tags,
        "dataDependent": torch.Tag.dynamic_output_shape in tags
        or torch.Tag.data_dependent_output in tags,
        "core": torch.Tag.core in tags,
        "sideEffect": name in side_effectful,
        "functionalTwin": has_functional_twin(op),
        "drawSwitches": draw_switches(op) if torch.Tag.nondeterministic_seeded in tags else [],
    }


def collect():
    side_effectful = side_effectful_overloads()
    rows = {}
    for op_name in torch._C._dispatch_get_all_op_names():
        if not op_name.startswith("aten::"):
            continue
        op = overload_packet(op_name)
        if op is None:
            continue
        name = qualified_name(op_name)
        rows[name] = traits_of(op, side_effectful, name)
    return sorted(rows.items())


def dump(rows, out):
    for name, traits in rows:
        switches = " ".join(f"switch:{arg}@{position}" for position, arg, _, _ in traits["drawSwitches"])
        out.write(name + " " + " ".join(f for f in FIELDS if traits[f]) +
                  (" " + switches if switches else "") + "\n")


def write_inc(rows, out):
    out.write("// Generated by ir/gen-op-traits.py from torch "
              f"{torch.__version__}; do not edit.\n")
    out.write("// {name, {" + ", ".join(FIELDS) + "}}, sorted by name.\n")
    for name, traits in rows:
        flags = ", ".join("true" if traits[f] else "false" for f in FIELDS)
        switches = traits["drawSwitches"]
        if switches:
            flags += ", {" + ", ".join(
                f'{{{position}, "{arg}", {str(training).lower()}, {str(off).lower()}}}'
                for position, arg, training, off in switches) + "}"
        out.write(f'{{"{name}", {{{flags}}}}},\n')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", help="write the C++ table here")
    parser.add_argument("--dump", action="store_true", help="print the facts")
    args = parser.parse_args()
    rows = collect()
    if args.dump:
        dump(rows, sys.stdout)
    if args.output:
        # Write through a temporary name so an interrupted build never
        # leaves a truncated table behind.
        tmp = args.output + ".tmp"
        with open(tmp, "w") as out:
            write_inc(rows, out)
        os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
