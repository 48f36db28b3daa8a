"""Client, graph building: tf.case as TF's control_flow_case builds it: a chain of v1
conds, the last predicate's branch (or `default`) innermost, with TF's asserts that at
most one predicate holds (exclusive=True) and, without a default, that the last one does."""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import constant
from client.ops import array_ops, control_flow_ops, math_ops
from client.ops.control_flow_assert import Assert


def _assert_at_most_n_true(predicates: Any, n: int, msg: str) -> Any:
    preds_c = array_ops.stack(predicates, name="preds_c")
    num_true = math_ops.reduce_sum(math_ops.cast(preds_c, dtypes.int32), name="num_true_conds")
    condition = math_ops.less_equal(num_true, constant(n, name="n_true_conds"))
    preds_names = ", ".join(getattr(p, "name", "?") for p in predicates)
    error_msg = [f"{msg}: more than {n} conditions ({preds_names}) evaluated as True:", preds_c]
    return Assert(condition, data=error_msg, summarize=len(predicates))


def _create_default_action(predicates: Any, actions: Any) -> Any:
    k = len(predicates) - 1
    predicate, action = predicates[k], actions[k]
    other_predicates, other_actions = predicates[:k], actions[:k]

    def default_action() -> Any:
        others_msg = (
            f"Implementation error: selected default action #{k} was called, but some of "
            "other predicates are True: "
        )
        default_msg = (
            "Input error: None of conditions evaluated as True:",
            array_ops.stack(predicates, name="preds_c"),
        )
        with _ops.control_dependencies(
            [
                _assert_at_most_n_true(other_predicates, n=0, msg=others_msg),
                Assert(predicate, data=default_msg),
            ]
        ):
            return action()

    return default_action, other_predicates, other_actions


def _verify_and_canonicalize(pred_fn_pairs: Any, exclusive: bool) -> Any:
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(
            f"'pred_fn_pairs' must be a list, tuple, or dict. Received: {type(pred_fn_pairs)}"
        )
    if isinstance(pred_fn_pairs, collections.OrderedDict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    elif isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = sorted(pred_fn_pairs.items(), key=lambda item: item[0].name)
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}.")
        pred, fn = pair
        if not isinstance(pred, _ops.Tensor):
            raise TypeError(f"pred must be a Tensor, got: {pred}")
        if pred.dtype != dtypes.bool:
            raise TypeError(f"pred must be Tensor of type bool: {pred.name}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
    predicates, actions = zip(*pred_fn_pairs)
    return predicates, actions


def case(
    pred_fn_pairs: Any,
    default: Callable[[], Any] | None = None,
    exclusive: bool = False,
    strict: bool = False,
    name: str = "case",
) -> Any:
    """tf.compat.v1.case: the result of the first pair whose predicate holds, else
    `default`'s."""
    predicates, actions = _verify_and_canonicalize(pred_fn_pairs, exclusive)
    with _ops.name_scope(name, "case", [predicates]):
        if default is None:
            default, predicates, actions = _create_default_action(predicates, actions)
        fn = default
        for predicate, action in reversed(list(zip(predicates, actions))):
            fn = functools.partial(
                control_flow_ops.cond, predicate, true_fn=action, false_fn=fn, strict=strict
            )
        if exclusive:
            with _ops.control_dependencies(
                [_assert_at_most_n_true(predicates, n=1, msg="Input error: exclusive=True")]
            ):
                return fn()
        return fn()
