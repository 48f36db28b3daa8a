"""Function library: the FunctionDefs a graph may call as ops (TF's FunctionLibraryDefinition).

Holds FunctionDef protos by name with their gradients, and answers `find_op` with the
function's signature as a registry OpDef so that a node whose op names a function is
built and validated like any other node (`Graph.lookup_op` consults the library first).
Instantiating a function body into a Graph is a later stage (`instantiate`, reserved).

Mutated while a graph is being built or extended (one owner at a time, like Graph);
lookups afterwards are read-only and safe from any thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from common.errors import InvalidArgumentError, OpError, UnimplementedError
from common.ops import registry
from common.ops.registry import OpDef


class FunctionLibrary:
    """FunctionDefs by name, their gradients, and their signatures as OpDefs."""

    def __init__(self, fdef_lib_proto: Any = None) -> None:
        self._functions: dict[str, Any] = {}  # name -> FunctionDef proto (our copy)
        self._gradients: dict[str, str] = {}  # function name -> gradient function name
        self._registered_gradients: list[Any] = []  # RegisteredGradient protos, kept as is
        self._op_defs: dict[str, OpDef] = {}  # signature cache, filled by find_op
        if fdef_lib_proto is not None:
            self.add_library(fdef_lib_proto)

    # -- lookups ---------------------------------------------------------------------
    def find(self, name: str) -> Any | None:
        """The FunctionDef proto named `name`, or None."""
        return self._functions.get(name)

    def find_op(self, name: str) -> OpDef | None:
        """The signature of function `name` as an OpDef (cached), or None if no such function."""
        op = self._op_defs.get(name)
        if op is not None:
            return op
        fdef = self._functions.get(name)
        if fdef is None:
            return None
        op = _signature_op_def(fdef)
        self._op_defs[name] = op
        return op

    def gradient(self, func_name: str) -> str | None:
        """The name of the gradient function of `func_name`, or None."""
        return self._gradients.get(func_name)

    def names(self) -> list[str]:
        return sorted(self._functions)

    def __contains__(self, name: object) -> bool:
        return name in self._functions

    def __len__(self) -> int:
        return len(self._functions)

    # -- mutation ----------------------------------------------------------------------
    def add_function(self, fdef: Any) -> None:
        """Add one FunctionDef. An identical duplicate is accepted; a different function
        under an existing name, or a function named like a registered op, is not."""
        name = fdef.signature.name
        if not name:
            raise InvalidArgumentError("Cannot add a function with an empty name to the library")
        existing = self._functions.get(name)
        if existing is not None:
            if _same(existing, fdef):
                return
            raise InvalidArgumentError(
                f"Cannot add function '{name}' because a different function with the same "
                "name already exists."
            )
        if registry.find_op(name) is not None:
            raise InvalidArgumentError(
                f"Cannot add function '{name}' because an op with the same name already exists."
            )
        copy = type(fdef)()
        copy.CopyFrom(fdef)
        self._functions[name] = copy

    def add_gradient(self, func_name: str, grad_name: str) -> None:
        existing = self._gradients.get(func_name)
        if existing is not None and existing != grad_name:
            raise InvalidArgumentError(
                f"Cannot assign gradient function '{grad_name}' to '{func_name}' because it "
                f"already has gradient function '{existing}'"
            )
        self._gradients[func_name] = grad_name

    def add_library(self, proto: Any) -> None:
        """Merge a FunctionDefLibrary proto (all or nothing)."""
        seen: dict[str, Any] = {}
        for fdef in proto.function:
            name = fdef.signature.name
            other = seen.get(name)
            if other is not None and not _same(other, fdef):
                raise InvalidArgumentError(
                    f"Cannot add function '{name}' because a different function with the "
                    "same name already exists."
                )
            seen[name] = fdef
        added: list[str] = []
        grads = dict(self._gradients)
        try:
            for fdef in seen.values():
                if fdef.signature.name not in self._functions:
                    added.append(fdef.signature.name)
                self.add_function(fdef)
            for g in proto.gradient:
                self.add_gradient(g.function_name, g.gradient_func)
            if added:
                self.check_not_recursive(added)
        except OpError:
            for name in added:
                self._functions.pop(name, None)
                self._op_defs.pop(name, None)
            self._gradients = grads
            raise
        self._registered_gradients.extend(proto.registered_gradients)

    def remove_function(self, name: str) -> None:
        if name not in self._functions:
            raise InvalidArgumentError(f"Tried to remove non-existent function '{name}'.")
        del self._functions[name]
        self._op_defs.pop(name, None)

    # -- conversion ----------------------------------------------------------------------
    def to_proto(self) -> Any:
        """The library as a FunctionDefLibrary proto (functions in name order)."""
        from protos import function_pb2

        lib = function_pb2.FunctionDefLibrary()
        for name in sorted(self._functions):
            lib.function.add().CopyFrom(self._functions[name])
        for fname in sorted(self._gradients):
            g = lib.gradient.add()
            g.function_name = fname
            g.gradient_func = self._gradients[fname]
        for rg in self._registered_gradients:
            lib.registered_gradients.add().CopyFrom(rg)
        return lib

    def reachable_functions(self, roots: Iterable[str]) -> set[str]:
        """Names of the functions `roots` call, directly or through other functions
        (including via func-valued attrs), the roots among them."""
        out: set[str] = set()
        stack = [r for r in roots if r in self._functions]
        while stack:
            name = stack.pop()
            if name in out:
                continue
            out.add(name)
            for callee in functions_called_by(self._functions[name]):
                if callee in self._functions and callee not in out:
                    stack.append(callee)
        return out

    def check_not_recursive(self, roots: Iterable[str]) -> None:
        """InvalidArgument naming the cycle if a function reachable from `roots` calls
        itself, directly or through other functions (a call op or a func attr such as a
        While body). Inlining or instantiating one would never end; TensorFlow's runtime
        crashes on them."""
        state: dict[str, int] = {}  # 1: on the current path, 2: done
        for root in roots:
            if root not in self._functions or state.get(root) == 2:
                continue
            path = [root]
            state[root] = 1
            stack = [iter(sorted(self._callees(root)))]
            while stack:
                callee = next(stack[-1], None)
                if callee is None:
                    stack.pop()
                    state[path.pop()] = 2
                    continue
                if state.get(callee) == 1:
                    cycle = path[path.index(callee) :] + [callee]
                    raise InvalidArgumentError(
                        f"Function '{callee}' is recursive ({' -> '.join(cycle)}): "
                        "recursive functions are not supported"
                    )
                if state.get(callee) is None:
                    state[callee] = 1
                    path.append(callee)
                    stack.append(iter(sorted(self._callees(callee))))

    def _callees(self, name: str) -> set[str]:
        return {f for f in functions_called_by(self._functions[name]) if f in self._functions}

    # -- instantiation (later stage) -------------------------------------------------
    def instantiate(self, name: str, attrs: dict[str, Any]) -> Any:
        """Instantiate function `name` with `attrs` into a Graph (FunctionDefToBodyHelper).
        Reserved for the function runtime stage."""
        raise UnimplementedError(f"Instantiating function '{name}' is not implemented yet")


def functions_called_by(fdef: Any) -> set[str]:
    """Op names of a FunctionDef's body nodes and function names in their func attrs."""
    out: set[str] = set()
    for nd in fdef.node_def:
        out.add(nd.op)
        for v in nd.attr.values():
            collect_func_names(v, out)
    return out


def collect_func_names(attr: Any, out: set[str]) -> None:
    kind = attr.WhichOneof("value")
    if kind == "func":
        out.add(attr.func.name)
        for v in attr.func.attr.values():
            collect_func_names(v, out)
    elif kind == "list":
        for f in attr.list.func:
            out.add(f.name)
            for v in f.attr.values():
                collect_func_names(v, out)


def _same(a: Any, b: Any) -> bool:
    return a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def _signature_op_def(fdef: Any) -> OpDef:
    from common import attr_value  # late: attr_value needs the generated protos

    name = fdef.signature.name
    try:
        return attr_value.op_def_from_proto(fdef.signature)
    except OpError as e:
        raise InvalidArgumentError(f"Invalid signature of function '{name}': {e.message}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise InvalidArgumentError(
            f"Invalid signature of function '{name}': {type(e).__name__}: {e}"
        ) from None
