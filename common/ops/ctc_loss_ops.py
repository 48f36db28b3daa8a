"""Ops (executor stage): CTCLoss (tf.compat.v1.nn.ctc_loss), the connectionist temporal
classification loss and its gradient w.r.t. the logits, as TensorFlow's ctc_loss_op.cc and
util/ctc/ctc_loss_calculator.h compute them: a softmax per time step, forward (alpha) and
backward (beta) variables in log space over the label sequence with blanks interleaved,
blank = num_classes - 1. The arithmetic runs in the input's dtype, time step by time step
and vectorized over the label positions, so values agree with TF's to a few ulps.
CTCLossV2 (blank 0) is declared for graph compatibility only: TF has no CPU kernel for it.
Stateless numpy kernel, safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.array_ops import shape_str
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.sparse_to_dense_ops import indices_valid

_LOSS_ATTRS = [
    "preprocess_collapse_repeated: bool = false",
    "ctc_merge_repeated: bool = true",
    "ignore_longer_outputs_than_inputs: bool = false",
]
_LOSS_INPUTS = ["labels_indices: int64", "labels_values: int32", "sequence_length: int32"]

register_op(
    "CTCLoss",
    inputs=["inputs: T", *_LOSS_INPUTS],
    outputs=["loss: T", "gradient: T"],
    attrs=[*_LOSS_ATTRS, "T: {float, double} = DT_FLOAT"],
)
register_op(
    "CTCLossV2",
    inputs=["inputs: float", *_LOSS_INPUTS],
    outputs=["loss: float", "gradient: float"],
    attrs=_LOSS_ATTRS,
)


def _check_inputs(
    inputs: np.ndarray, ix: np.ndarray, vals: np.ndarray, seq_len: np.ndarray
) -> None:
    """CTCLossOp::Compute's checks, in its order."""
    if inputs.ndim != 3:
        raise InvalidArgumentError("inputs is not a 3-Tensor")
    if seq_len.ndim != 1:
        raise InvalidArgumentError("sequence_length is not a vector")
    if ix.ndim != 2:
        raise InvalidArgumentError("labels_indices is not a matrix")
    if ix.shape[1] <= 1:
        raise InvalidArgumentError(
            f"labels_indices second dimension must be >= 1. Received {ix.shape[1]}"
        )
    if vals.ndim != 1:
        raise InvalidArgumentError("labels_values is not a vector")
    max_time, batch_size = inputs.shape[:2]
    if max_time == 0:
        raise InvalidArgumentError("Max time or first dimension of input cannot be 0.")
    if batch_size != seq_len.shape[0]:
        raise InvalidArgumentError(
            "len(sequence_length) != batch_size.  len(sequence_length):  "
            f"{seq_len.shape[0]} batch_size: {batch_size}"
        )
    if ix.shape[0] != vals.shape[0]:
        raise InvalidArgumentError(
            "labels_indices and labels_values must contain the same number of rows, but saw "
            f"shapes: {shape_str(ix.shape)} vs. {shape_str(vals.shape)}"
        )
    if batch_size == 0:
        raise InvalidArgumentError("batch_size must not be 0")
    if inputs.shape[2] == 0:
        # TF's kernel reads out of bounds here (and crashes); refuse instead.
        raise InvalidArgumentError("num_classes must not be 0")


def label_sequences(ix: np.ndarray, vals: np.ndarray, batch_size: int) -> list[list[int]]:
    """The labels SparseTensor ([batch, max_label_len], row-major order) as one sequence per
    batch entry: TF validates it like SparseTensor::IndicesValid, then groups by batch."""
    if ix.shape[1] != 2:
        raise InvalidArgumentError("Order length must be SparseTensor rank.")
    max_label_len = int(max(0, (ix[:, 1].max() + 1) if ix.shape[0] else 0))
    try:
        indices_valid(ix, [batch_size, max_label_len])
    except InvalidArgumentError as e:
        raise InvalidArgumentError(f"label SparseTensor is not valid: {e}") from None
    labels: list[list[int]] = [[] for _ in range(batch_size)]
    for b, v in zip(ix[:, 0].tolist(), vals.tolist()):
        labels[b].append(v)
    return labels


def _l_prime(
    label: list[int], b: int, num_classes: int, collapse: bool, time: int, ignore_longer: bool
) -> list[int]:
    """CTCLossCalculator::PopulateLPrimes for one batch entry: the label with repeats
    optionally collapsed, cut at the first label >= blank, blanks interleaved."""
    if not label:
        raise InvalidArgumentError(f"Labels length is zero in batch {b}")
    blank = num_classes - 1
    seq: list[int] = []
    finished = False
    for i, v in enumerate(label):
        if i and collapse and v == label[i - 1]:
            continue
        if v >= blank:
            finished = True
        elif finished:
            raise InvalidArgumentError(
                "Saw a non-null label (index >= num_classes - 1) following a null label, "
                f"batch: {b} num_classes: {num_classes} labels: {','.join(map(str, label))} "
                f"labels seen so far: {','.join(map(str, seq))}"
            )
        else:
            seq.append(v)
    if any(v < 0 for v in seq):
        raise InvalidArgumentError(
            f"All labels must be nonnegative integers, batch: {b} labels: {','.join(map(str, seq))}"
        )
    if not ignore_longer and len(label) > time:
        raise InvalidArgumentError(
            f"Not enough time for target transition sequence (required: {len(label)}, "
            f"available: {time}){b}You can turn this error into a warning by using the flag "
            "ignore_longer_outputs_than_inputs"
        )
    out = [blank]
    for v in seq:
        out += [v, blank]
    return out


def _softmax(logits: np.ndarray) -> np.ndarray:
    """Softmax over classes of a [T, C] block, in its dtype, as the calculator does it."""
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _log_sum_exp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ctc::LogSumExp elementwise: the larger plus log1pf(expf(smaller - larger)); TF takes
    the correction term in single precision for both dtypes."""
    with np.errstate(invalid="ignore"):
        hi, lo = np.maximum(a, b), np.minimum(a, b)
        term = np.log1p(np.exp((lo - hi).astype(np.float32))).astype(hi.dtype)
        out = hi + term
    return np.where(a == -np.inf, b, np.where(b == -np.inf, a, out))


def _log_sum_exp_rows(x: np.ndarray) -> np.ndarray:
    """LogSumExp folded over the rows of x in order, from log(0)."""
    acc = np.full(x.shape[1:], -np.inf, x.dtype)
    for row in x:
        acc = _log_sum_exp(acc, row)
    return acc


def _valid_rows(U: int, T: int, t: int) -> slice:
    """The label positions that can still reach (or have reached) a full path at t."""
    return slice(max(0, U - 2 * (T - t)), min(U, 2 * (t + 1)))


def _forward(lp: np.ndarray, log_y: np.ndarray, merge: bool, blank: int) -> np.ndarray:
    """log alpha [U, T] (GravesTh Eq 7.5-7.9)."""
    U, T = lp.size, log_y.shape[1]
    zero = log_y.dtype.type(-np.inf)
    alpha = np.full((U, T), zero, log_y.dtype)
    alpha[0, 0] = log_y[blank, 0]
    if U > 1:
        alpha[1, 0] = log_y[lp[1], 0]
    stay = merge | (lp == blank)
    skip = np.zeros(U, bool)
    skip[2:] = (lp[2:] != blank) & ~(merge & (lp[2:] == lp[:-2]))
    for t in range(1, T):
        prev = alpha[:, t - 1]
        s = np.where(stay, prev, zero)
        s[1:] = _log_sum_exp(s[1:], prev[:-1])
        s[2:] = np.where(skip[2:], _log_sum_exp(s[2:], prev[:-2]), s[2:])
        rows = _valid_rows(U, T, t)
        alpha[rows, t] = log_y[lp[rows], t] + s[rows]
    return alpha


def _backward(lp: np.ndarray, log_y: np.ndarray, merge: bool, blank: int) -> np.ndarray:
    """log beta [U, T] (GravesTh Eq 7.13-7.15)."""
    U, T = lp.size, log_y.shape[1]
    zero = log_y.dtype.type(-np.inf)
    beta = np.full((U, T), zero, log_y.dtype)
    beta[max(0, U - 2) :, T - 1] = 0
    if U == 1 and T > 1:
        # TF writes beta(-1, T-1), which in its column-major matrix is beta(0, T-2).
        beta[0, T - 2] = 0
    stay = merge | (lp == blank)
    skip = np.zeros(U, bool)
    skip[:-2] = (lp[:-2] != blank) & ~(merge & (lp[:-2] == lp[2:]))
    for t in range(T - 2, -1, -1):
        nxt = beta[:, t + 1] + log_y[lp, t + 1]
        cur = beta[:, t].copy()
        cur = np.where(stay, _log_sum_exp(cur, nxt), cur)
        cur[:-1] = _log_sum_exp(cur[:-1], nxt[1:])
        cur[:-2] = np.where(skip[:-2], _log_sum_exp(cur[:-2], nxt[2:]), cur[:-2])
        rows = _valid_rows(U, T, t)
        beta[rows, t] = cur[rows]
    return beta


def _loss_and_gradient(
    logits: np.ndarray, lp: list[int], merge: bool
) -> tuple[np.floating, np.ndarray]:
    """-log p(z|x) and its gradient w.r.t. the logits ([T, C]) for one batch entry."""
    num_classes = logits.shape[1]
    blank = num_classes - 1
    y = _softmax(logits).T  # [C, T], as the calculator stores it
    labels = np.asarray(lp, np.int64)
    log_y = np.log(y)
    alpha = _forward(labels, log_y, merge, blank)
    beta = _backward(labels, log_y, merge, blank)
    log_p = _log_sum_exp_rows(alpha[:, :1] + beta[:, :1])[0]
    if log_p == -np.inf:  # no valid path: TF returns the softmax as the gradient
        return -log_p, y.T
    ab = alpha + beta
    prob_sum = np.full_like(y, -np.inf)
    for c in np.unique(labels):
        prob_sum[c] = _log_sum_exp_rows(ab[labels == c])
    # TF takes this exponential in single precision (expf) for both dtypes.
    negative = np.exp((prob_sum - log_p).astype(np.float32)).astype(y.dtype)
    return -log_p, (y - negative).T


def ctc_loss(
    inputs: np.ndarray,
    ix: np.ndarray,
    vals: np.ndarray,
    seq_len: np.ndarray,
    collapse: bool,
    merge: bool,
    ignore_longer: bool,
) -> tuple[np.ndarray, np.ndarray]:
    _check_inputs(inputs, ix, vals, seq_len)
    max_time, batch_size, num_classes = inputs.shape
    labels = label_sequences(ix, vals, batch_size)
    lens = seq_len.tolist()
    for b, n in enumerate(lens):
        if n > max_time:
            raise InvalidArgumentError(f"sequence_length({b}) <= {max_time}")
    for b, n in enumerate(lens):
        if n < 0:
            raise InvalidArgumentError(f"seq_len({b}) < 0")
    l_primes = [
        _l_prime(labels[b], b, num_classes, collapse, lens[b], ignore_longer)
        for b in range(batch_size)
    ]
    loss = np.zeros(batch_size, inputs.dtype)
    grad = np.zeros_like(inputs)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for b, n in enumerate(lens):
            if n == 0 or (ignore_longer and len(labels[b]) > n):
                continue  # TF leaves a zero loss and gradient
            loss[b], grad[:n, b] = _loss_and_gradient(inputs[:n, b], l_primes[b], merge)
    return loss, grad


@register_kernel("CTCLoss")
def _ctc_loss(k: KernelConstruction) -> Callable:
    collapse = bool(k.attr("preprocess_collapse_repeated"))
    merge = bool(k.attr("ctc_merge_repeated"))
    ignore_longer = bool(k.attr("ignore_longer_outputs_than_inputs"))

    def compute(ctx, inputs: list) -> list:
        logits, ix, vals, seq_len = (np.asarray(v) for v in inputs)
        return list(ctc_loss(logits, ix, vals, seq_len, collapse, merge, ignore_longer))

    return compute
