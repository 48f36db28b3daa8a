"""Client, graph building: printing and summary ops (TensorFlow's logging_ops.py and the
generated gen_logging_ops wrappers): tf.print (StringFormat + PrintV2), tf.compat.v1.Print,
and the ScalarSummary / HistogramSummary / MergeSummary / TensorSummaryV2 nodes that
client.summary names and collects.

Graph building only (not thread-safe, as every graph builder); the kernels run in the task
the node is placed on, which is where tf.print writes.
"""

from __future__ import annotations

import logging
import os
import pprint
import random
import sys
from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.nest import flatten as _flatten
from client.framework.nest import pack_sequence_as as _pack_as
from client.framework.op_builder import apply_op
from client.framework.tensor_shape import TensorShape
from client.ops.variables import Variable


# -- summaries (gen_logging_ops) ------------------------------------------------------------
def scalar_summary(tags: Any, values: Any, name: str | None = None) -> Any:
    return apply_op("ScalarSummary", [tags, values], {}, name).outputs[0]


def histogram_summary(tag: Any, values: Any, name: str | None = None) -> Any:
    return apply_op("HistogramSummary", [tag, values], {}, name).outputs[0]


def merge_summary(inputs: Any, name: str | None = None) -> Any:
    return apply_op("MergeSummary", [list(inputs)], {}, name).outputs[0]


def tensor_summary_v2(
    tag: Any, tensor: Any, serialized_summary_metadata: Any, name: str | None = None
) -> Any:
    return apply_op(
        "TensorSummaryV2", [tag, tensor, serialized_summary_metadata], {}, name
    ).outputs[0]


# -- printing -------------------------------------------------------------------------------
def string_format(
    template: str,
    inputs: Any,
    placeholder: str = "{}",
    summarize: int = 3,
    name: str | None = None,
) -> Any:
    """tf.strings.format: `template` with each `placeholder` replaced by a tensor summary."""
    if _is_tensor(inputs):
        inputs = [inputs]
    if template.count(placeholder) != len(inputs):
        raise ValueError(
            f"{template.count(placeholder)} placeholder(s) in template does not match "
            f"{len(inputs)} tensor(s) provided as input"
        )
    return apply_op(
        "StringFormat",
        [list(inputs)],
        {"template": template, "placeholder": placeholder, "summarize": summarize},
        name,
    ).outputs[0]


# StringFormat's output is one string, whatever its inputs (TF's shape function).
shape_fns.SHAPE_FNS["StringFormat"] = lambda op: [TensorShape([])]


def _is_tensor(x: Any) -> bool:
    return isinstance(x, (_ops.Tensor, Variable))


def _output_stream(output_stream: Any) -> str:
    """PrintV2's output_stream attr for a Python stream, logging level or file:// path
    (the streams looked up when called, as TensorFlow: sys.stderr may have been replaced)."""
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    streams: list[tuple[Any, str]] = [
        (sys.stdout, "stdout"),
        (sys.stderr, "stderr"),
        (logging.INFO, "log(info)"),
        (logging.info, "log(info)"),
        (logging.WARNING, "log(warning)"),
        (logging.warning, "log(warning)"),
        (logging.ERROR, "log(error)"),
        (logging.error, "log(error)"),
    ]
    for stream, attr in streams:
        if output_stream is stream or (isinstance(stream, int) and output_stream == stream):
            return attr
    raise ValueError(
        f"Unsupported output stream, logging level, or file.{output_stream}. Supported "
        "streams are sys.stdout, sys.stderr, tf.logging.info, tf.logging.warning, "
        "tf.logging.error. File needs to be in the form of 'file://<filepath>'."
    )


def _generate_placeholder_string(x: str, default_placeholder: str = "{}") -> str:
    """A placeholder that does not occur in `x` (TF's, with the same seeded digits)."""
    placeholder = default_placeholder
    rng = random.Random(5)
    while placeholder in x:
        placeholder = placeholder + str(rng.randint(0, 9))
    return placeholder


def _without_tensors(x: Any) -> Any:
    return _pack_as(x, ["" if _is_tensor(v) else v for v in _flatten(x)])


def print_v2(
    *inputs: Any,
    output_stream: Any = None,
    summarize: int = 3,
    sep: str = " ",
    end: str = os.linesep,
    name: str | None = None,
) -> Any:
    """tf.print: a PrintV2 op writing the inputs (tensors summarized, other values as
    Python prints them) joined by `sep`; run it, or depend on it, to print."""
    stream = _output_stream(sys.stderr if output_stream is None else output_stream)
    if (
        len(inputs) == 1
        and isinstance(inputs[0], _ops.Tensor)
        and inputs[0].shape.ndims == 0
        and inputs[0].dtype == dtypes.string
    ):
        formatted = inputs[0]
    else:
        formatted = _format_inputs(inputs, summarize, sep, None if not name else name + "_format")
    return apply_op("PrintV2", [formatted], {"output_stream": stream, "end": end}, name)


def _format_inputs(inputs: tuple[Any, ...], summarize: int, sep: str, name: str | None) -> Any:
    """print_v2's StringFormat: a template with one placeholder per tensor."""
    tensor_free = " ".join(pprint.pformat(_without_tensors(x)) for x in inputs)
    placeholder = _generate_placeholder_string(tensor_free)
    templates, tensors = [], []
    for x in inputs:
        parts = []
        for leaf in _flatten(x):
            if _is_tensor(leaf):
                tensors.append(leaf)
                parts.append(placeholder)
            else:
                parts.append(leaf)
        templates.append(x if isinstance(x, str) else pprint.pformat(_pack_as(x, parts)))
    template = sep.join(templates).replace(f"'{placeholder}'", placeholder)
    return string_format(template, tensors, placeholder, summarize, name)


def Print(  # noqa: N802 (TensorFlow's name)
    input_: Any,
    data: Any,
    message: str | None = None,
    first_n: int | None = None,
    summarize: int | None = None,
    name: str | None = None,
) -> Any:
    """tf.compat.v1.Print: `input_` passed through, logging `message` and `data` to stderr
    of the task that runs it, the first `first_n` times (-1: always)."""
    attrs = {"message": message, "first_n": first_n, "summarize": summarize}
    return apply_op(
        "Print", [input_, list(data)], {k: v for k, v in attrs.items() if v is not None}, name
    ).outputs[0]
