"""Ops (executor stage): CTCGreedyDecoder and CTCBeamSearchDecoder
(tf.nn.ctc_greedy_decoder, tf.compat.v1.nn.ctc_beam_search_decoder) as TensorFlow's
ctc_decoder_ops.cc and util/ctc/ctc_beam_search.h decode: best path (the argmax per step,
blanks dropped, repeats optionally merged, -sum of the max logits as its score), and TF's
prefix beam search with its default scorer (softmax log probabilities per step, a fixed
beam of `beam_width` prefixes with TF's candidate and eviction rules). Decoded paths are
SparseTensors [batch, max_len] per top path. Stateless numpy kernels, safe from any thread.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from common.errors import FailedPreconditionError, InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op

register_op(
    "CTCGreedyDecoder",
    inputs=["inputs: T", "sequence_length: int32"],
    outputs=[
        "decoded_indices: int64",
        "decoded_values: int64",
        "decoded_shape: int64",
        "log_probability: T",
    ],
    attrs=[
        "merge_repeated: bool = false",
        "blank_index: int = -1",
        "T: {float, double} = DT_FLOAT",
    ],
)
register_op(
    "CTCBeamSearchDecoder",
    inputs=["inputs: T", "sequence_length: int32"],
    outputs=[
        "decoded_indices: top_paths * int64",
        "decoded_values: top_paths * int64",
        "decoded_shape: top_paths * int64",
        "log_probability: T",
    ],
    attrs=[
        "beam_width: int >= 1",
        "top_paths: int >= 1",
        "merge_repeated: bool = true",
        "T: {float, double} = DT_FLOAT",
    ],
)

_LOG_ZERO = -math.inf


def _check_inputs(inputs: np.ndarray, seq_len: np.ndarray) -> None:
    """CTCDecodeHelper::ValidateInputsGenerateOutputs."""
    if inputs.ndim != 3:
        raise InvalidArgumentError("inputs is not a 3-Tensor")
    if inputs.size == 0:
        raise InvalidArgumentError("inputs must not be empty")
    max_time, batch_size = inputs.shape[:2]
    if seq_len.ndim != 1:
        raise InvalidArgumentError("sequence_length is not a vector")
    if batch_size != seq_len.shape[0]:
        raise FailedPreconditionError(
            "len(sequence_length) != batch_size.  len(sequence_length):  "
            f"{seq_len.shape[0]} batch_size: {batch_size}"
        )
    for b, n in enumerate(seq_len.tolist()):
        if n > max_time:
            raise FailedPreconditionError(f"sequence_length({b}) <= {max_time}")


def store_sequences(paths: list[list[int]]) -> list[np.ndarray]:
    """CTCDecodeHelper::StoreAllDecodedSequences for one path rank: the batch's decoded
    sequences as SparseTensor indices, values and dense shape."""
    ix = [[b, t] for b, p in enumerate(paths) for t in range(len(p))]
    vals = [v for p in paths for v in p]
    longest = max((len(p) for p in paths), default=0)
    return [
        np.array(ix, np.int64).reshape(-1, 2),
        np.array(vals, np.int64),
        np.array([len(paths), longest], np.int64),
    ]


def greedy_decode(
    inputs: np.ndarray, seq_len: np.ndarray, merge_repeated: bool, blank_index: int
) -> list[np.ndarray]:
    _check_inputs(inputs, seq_len)
    num_classes = inputs.shape[2]
    blank = num_classes + blank_index if blank_index < 0 else blank_index
    if not 0 <= blank < num_classes:
        raise InvalidArgumentError(
            f"blank_index expected to be between {-num_classes} and {num_classes - 1} but "
            f"was {blank_index}"
        )
    batch_size = inputs.shape[1]
    log_prob = np.zeros((batch_size, 1), inputs.dtype)
    paths: list[list[int]] = []
    for b, n in enumerate(seq_len.tolist()):
        steps = inputs[: max(n, 0), b]
        best = steps.argmax(axis=1).tolist()  # first maximum, as TF's RowMax
        for t, c in enumerate(best):
            log_prob[b, 0] -= steps[t, c]  # accumulated step by step in T, as TF does
        path: list[int] = []
        prev = -1
        for c in best:
            if c != blank and not (merge_repeated and c == prev):
                path.append(c)
            prev = c
        paths.append(path)
    return [*store_sequences(paths), log_prob]


class _Probability:
    """ctc_beam_search::BeamProbability: log probabilities of a prefix ending in a blank,
    ending in its last label, and in total."""

    __slots__ = ("total", "blank", "label")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.total = self.blank = self.label = _LOG_ZERO

    def copy_from(self, other: _Probability) -> None:
        self.total, self.blank, self.label = other.total, other.blank, other.label


class _Entry:
    """ctc_beam_search::BeamEntry: one prefix in the tree of prefixes."""

    __slots__ = ("parent", "label", "children", "oldp", "newp")

    def __init__(self, parent: _Entry | None, label: int) -> None:
        self.parent = parent
        self.label = label
        self.children: dict[int, _Entry] = {}
        self.oldp = _Probability()
        self.newp = _Probability()

    def active(self) -> bool:
        return self.newp.total != _LOG_ZERO

    def child(self, label: int) -> _Entry:
        c = self.children.get(label)
        if c is None:
            c = self.children[label] = _Entry(self, label)
        return c

    def label_seq(self, merge_repeated: bool) -> list[int]:
        labels: list[int] = []
        prev = -1
        c: _Entry = self
        while c.parent is not None:
            if not merge_repeated or c.label != prev:
                labels.append(c.label)
            prev = c.label
            c = c.parent
        return labels[::-1]


def _log_sum_exp(a: float, b: float) -> float:
    """ctc::LogSumExp."""
    if a == _LOG_ZERO:
        return b
    if b == _LOG_ZERO:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


def _sorted(leaves: list[_Entry]) -> list[_Entry]:
    """TopN::Extract: the leaves by decreasing total probability."""
    return sorted(leaves, key=lambda e: e.newp.total, reverse=True)


class BeamSearch:
    """CTCBeamSearchDecoder with the default (identity) BaseBeamScorer, for one sequence.
    Probabilities are kept in double precision (TF keeps them in T)."""

    def __init__(self, num_classes: int, beam_width: int) -> None:
        self.num_classes = num_classes
        self.blank = num_classes - 1
        self.beam_width = beam_width
        self.root = _Entry(None, -1)
        self.root.newp.total = self.root.newp.blank = 0.0
        self.leaves: list[_Entry] = [self.root]
        self._low: _Entry | None = None  # the bottom leaf, None when not known

    def _bottom(self) -> _Entry:
        """TopN::peek_bottom: the least probable leaf (the first of equals)."""
        if self._low is None:
            self._low = min(self.leaves, key=lambda e: e.newp.total)
        return self._low

    def _push(self, c: _Entry) -> None:
        """Adds a leaf, evicting the bottom one when the beam is full."""
        if len(self.leaves) == self.beam_width:
            bottom = self._bottom()
            bottom.newp.reset()  # signals it left the beam
            self.leaves.remove(bottom)
            self._low = None
        elif self._low is not None and c.newp.total < self._low.newp.total:
            self._low = c
        self.leaves.append(c)

    def step(self, logits: np.ndarray) -> None:
        max_coeff = logits.max()
        # the softmax normalization, summed in order in the input's dtype
        norm = float(max_coeff) + float(np.log(np.cumsum(np.exp(logits - max_coeff))[-1]))
        raw = [float(v) - norm for v in logits.tolist()]
        branches = _sorted(self.leaves)
        self.leaves = []
        self._low = None
        for b in branches:
            b.oldp.copy_from(b.newp)
        for b in branches:
            if b.parent is not None:
                if b.parent.active():
                    p = b.parent.oldp
                    previous = p.blank if b.label == b.parent.label else p.total
                    b.newp.label = _log_sum_exp(b.newp.label, previous)
                b.newp.label += raw[b.label]
            b.newp.blank = b.oldp.total + raw[self.blank]
            b.newp.total = _log_sum_exp(b.newp.blank, b.newp.label)
            self.leaves.append(b)
        for b in branches:
            if not self._is_candidate(b.oldp.total):
                continue
            for label in range(self.num_classes - 1):
                c = b.children.get(label)
                if c is not None and c.active():
                    continue
                previous = b.oldp.blank if label == b.label else b.oldp.total
                total = raw[label] + previous
                if self._is_candidate(total):
                    c = b.child(label)
                    c.newp.blank = _LOG_ZERO
                    c.newp.label = c.newp.total = total
                    self._push(c)
                elif c is not None:
                    # TF deactivates the child; one never created is the same as reset
                    c.oldp.reset()
                    c.newp.reset()

    def _is_candidate(self, total: float) -> bool:
        return total > _LOG_ZERO and (
            len(self.leaves) < self.beam_width or total > self._bottom().newp.total
        )

    def top_paths(self, n: int, merge_repeated: bool) -> tuple[list[list[int]], list[float]]:
        if n > self.beam_width:
            raise InvalidArgumentError("requested more paths than the beam width.")
        if n > len(self.leaves):
            raise InvalidArgumentError("Less leaves in the beam search than requested.")
        best = _sorted(self.leaves)[:n]
        return [e.label_seq(merge_repeated) for e in best], [e.newp.total for e in best]


def beam_search_decode(
    inputs: np.ndarray, seq_len: np.ndarray, beam_width: int, top_paths: int, merge: bool
) -> list[np.ndarray]:
    _check_inputs(inputs, seq_len)
    batch_size, num_classes = inputs.shape[1:]
    log_prob = np.zeros((batch_size, top_paths), inputs.dtype)
    paths: list[list[list[int]]] = [[] for _ in range(top_paths)]
    for b, n in enumerate(seq_len.tolist()):
        search = BeamSearch(num_classes, beam_width)
        for t in range(max(n, 0)):
            search.step(inputs[t, b])
        best, scores = search.top_paths(top_paths, merge)
        for p in range(top_paths):
            paths[p].append(best[p])
        log_prob[b] = scores
    parts = [store_sequences(p) for p in paths]
    return [*(s[0] for s in parts), *(s[1] for s in parts), *(s[2] for s in parts), log_prob]


@register_kernel("CTCGreedyDecoder")
def _ctc_greedy_decoder(k: KernelConstruction) -> Callable:
    merge = bool(k.attr("merge_repeated"))
    blank_index = int(k.attr("blank_index"))

    def compute(ctx, inputs: list) -> list:
        logits, seq_len = (np.asarray(v) for v in inputs)
        return greedy_decode(logits, seq_len, merge, blank_index)

    return compute


@register_kernel("CTCBeamSearchDecoder")
def _ctc_beam_search_decoder(k: KernelConstruction) -> Callable:
    beam_width = int(k.attr("beam_width"))
    top_paths = int(k.attr("top_paths"))
    merge = bool(k.attr("merge_repeated"))

    def compute(ctx, inputs: list) -> list:
        logits, seq_len = (np.asarray(v) for v in inputs)
        return beam_search_decode(logits, seq_len, beam_width, top_paths, merge)

    return compute
