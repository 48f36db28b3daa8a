"""Ops (executor stage), tf.data shuffling: ShuffleDataset (V1, V2, V3),
ShuffleAndRepeatDataset (V1, V2) and the seed generator resources they draw seeds from
(DummySeedGenerator, AnonymousSeedGenerator, DeleteSeedGenerator).

The order is TensorFlow's, bit for bit (shuffle_dataset_op.cc, seed_generator.cc): a
buffer of `buffer_size` slots filled from the input; each element out is slot
`(start + Random() % filled) % buffer_size`, swapped with the slot at `start`. Random()
is TensorFlow's Philox4x32-10 through its SingleSampleAdapter (four uint32 per block),
keyed by the iterator's seeds. Each iterator draws its seeds from the dataset's seed
generator: fixed (reshuffle_each_iteration=False: every iterator gets (seed, seed2)) or
random (each iterator takes the next two uint32 of a Philox stream keyed by (seed,
seed2)). Seeds (0, 0) mean "random" (TF's RandomSeeds). With a repeat count
(ShuffleAndRepeat) the buffer holds slices of consecutive epochs, at most three; an epoch's
elements all leave before the next epoch's, which draws new seeds from the generator.
Verified element for element against TensorFlow 2.21 (tests/common/ops/test_dataset_ops.py).

Generators are shared by every iterator of a dataset and guarded by their own lock.
"""

from __future__ import annotations

import collections
import random
import threading

from common.errors import InvalidArgumentError, NotFoundError
from common.ops.data.base import (
    INFINITE,
    UNKNOWN,
    Dataset,
    DatasetFn,
    DatasetIterator,
    Element,
    IteratorContext,
    ResourceDeleter,
    dataset_kernel,
    dataset_of,
    scalar_arg,
    unique_id,
)
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.ops.variant_ops import variant_scalar
from common.resource_mgr import ResourceHandle, handle_of

_SPEC = ["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1"]
_METADATA = "metadata: string = ''"
_RESHUFFLE = "reshuffle_each_iteration: bool = true"

register_op("ShuffleDataset",
            inputs=["input_dataset: variant", "buffer_size: int64", "seed: int64",
                    "seed2: int64"],
            outputs=["handle: variant"], attrs=[_RESHUFFLE, *_SPEC, _METADATA])  # fmt: skip
register_op("ShuffleDatasetV2",
            inputs=["input_dataset: variant", "buffer_size: int64", "seed_generator: resource"],
            outputs=["handle: variant"], attrs=[*_SPEC, _METADATA], stateful=True)  # fmt: skip
register_op("ShuffleDatasetV3",
            inputs=["input_dataset: variant", "buffer_size: int64", "seed: int64",
                    "seed2: int64", "seed_generator: resource"],
            outputs=["handle: variant"], attrs=[_RESHUFFLE, *_SPEC, _METADATA],
            stateful=True)  # fmt: skip
register_op("ShuffleAndRepeatDataset",
            inputs=["input_dataset: variant", "buffer_size: int64", "seed: int64",
                    "seed2: int64", "count: int64"],
            outputs=["handle: variant"], attrs=[*_SPEC, _RESHUFFLE, _METADATA])  # fmt: skip
register_op("ShuffleAndRepeatDatasetV2",
            inputs=["input_dataset: variant", "buffer_size: int64", "seed: int64",
                    "seed2: int64", "count: int64", "seed_generator: resource"],
            outputs=["handle: variant"], attrs=[_RESHUFFLE, *_SPEC, _METADATA],
            stateful=True)  # fmt: skip
register_op("DummySeedGenerator", outputs=["handle: resource"], stateful=True)
register_op("AnonymousSeedGenerator", inputs=["seed: int64", "seed2: int64", "reshuffle: bool"],
            outputs=["handle: resource", "deleter: variant"], stateful=True)  # fmt: skip
register_op("DeleteSeedGenerator", inputs=["handle: resource", "deleter: variant"],
            stateful=True)  # fmt: skip

# -- Philox4x32-10 (tensorflow/core/lib/random/philox_random.h) ------------------------------
_M32 = 0xFFFFFFFF
_MUL_A, _MUL_B = 0xD2511F53, 0xCD9E8D57
_KEY_A, _KEY_B = 0x9E3779B9, 0xBB67AE85


class Philox:
    """TF's PhiloxRandom(seed_lo, seed_hi) behind a SingleSampleAdapter: one uint32 per
    call. Not thread-safe (its owner locks)."""

    def __init__(self, seed: int, seed2: int) -> None:
        lo, hi = seed & 0xFFFFFFFFFFFFFFFF, seed2 & 0xFFFFFFFFFFFFFFFF
        self.key = (lo & _M32, lo >> 32)
        self.counter = [0, 0, hi & _M32, hi >> 32]
        self.results: tuple[int, ...] = ()
        self.used = 4

    def block(self) -> tuple[int, int, int, int]:
        c0, c1, c2, c3 = self.counter
        k0, k1 = self.key
        for round_ in range(10):
            p0, p1 = _MUL_A * c0, _MUL_B * c2
            c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & _M32, p1 & _M32, \
                ((p0 >> 32) ^ c3 ^ k1) & _M32, p0 & _M32  # fmt: skip
            if round_ < 9:
                k0, k1 = (k0 + _KEY_A) & _M32, (k1 + _KEY_B) & _M32
        for i in range(4):  # SkipOne: a 128-bit increment
            self.counter[i] = (self.counter[i] + 1) & _M32
            if self.counter[i]:
                break
        return c0, c1, c2, c3

    def __call__(self) -> int:
        if self.used == 4:
            self.results = self.block()
            self.used = 0
        self.used += 1
        return self.results[self.used - 1]


def random_seeds(seed: int, seed2: int) -> tuple[int, int]:
    """TF's RandomSeeds: (0, 0) becomes two random 64-bit seeds."""
    if seed == 0 and seed2 == 0:
        return random.getrandbits(64), random.getrandbits(64)
    return seed, seed2


class SeedGenerator:
    """TF's Fixed/RandomSeedGenerator: the seeds of each new shuffle iterator. Thread-safe."""

    def __init__(self, seed: int, seed2: int, reshuffle: bool) -> None:
        self.seed, self.seed2 = random_seeds(seed, seed2)
        self.reshuffle = reshuffle
        self._lock = threading.Lock()
        self._stream = Philox(self.seed, self.seed2)

    def generate(self) -> tuple[int, int]:
        if not self.reshuffle:
            return self.seed, self.seed2
        with self._lock:
            return self._stream(), self._stream()


# -- the shuffle dataset --------------------------------------------------------------------
class ShuffleDataset(Dataset):
    def __init__(self, input_ds: Dataset, buffer_size: int, generator: SeedGenerator,
                 count: int = 1) -> None:  # fmt: skip
        super().__init__(input_ds.output_types, input_ds.output_shapes)
        self.input, self.buffer_size, self.generator = input_ds, buffer_size, generator
        self.count = count

    def make_iterator(self) -> DatasetIterator:
        return _ShuffleIterator(self, *self.generator.generate())

    def cardinality(self) -> int:
        n = self.input.cardinality()
        if self.count == -1 or n == INFINITE:
            return INFINITE if n != 0 else 0
        return UNKNOWN if n == UNKNOWN else n * self.count


class _Slice:
    __slots__ = ("start", "end")

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end


_MAX_EPOCHS_IN_BUFFER = 3


class _ShuffleIterator(DatasetIterator):
    def __init__(self, ds: ShuffleDataset, seed: int, seed2: int) -> None:
        super().__init__()
        self.ds = ds
        self.random = Philox(seed, seed2)
        self.buffer: list[Element | None] = [None] * ds.buffer_size
        self.slices: collections.deque[_Slice] = collections.deque()
        self.input: DatasetIterator | None = None
        self.epoch = 0
        self.num_elements = 0
        self.data_produced = False

    def _should_fill(self) -> bool:
        if self.input is None and self.ds.count != -1 and self.epoch >= self.ds.count:
            return False
        if len(self.slices) > _MAX_EPOCHS_IN_BUFFER and self.num_elements > 0:
            return False
        return self.num_elements < len(self.buffer)

    def _next_epoch(self) -> None:
        end = self.slices[-1].end if self.slices else 0
        self.slices.append(_Slice(end, end))
        self.input = self.ds.input.make_iterator()
        self.epoch += 1

    def _fill(self, ctx: IteratorContext) -> None:
        while self._should_fill():
            if self.input is None:
                self._next_epoch()
            assert self.input is not None
            element = self.input.get_next(ctx)
            if element is not None:
                self.data_produced = True
                self.buffer[self.slices[-1].end % len(self.buffer)] = element
                self.slices[-1].end += 1
                self.num_elements += 1
                continue
            self.input = None
            if not self.data_produced and self.ds.count == -1:
                return  # an empty input repeated forever: end rather than spin

    def _next(self, ctx: IteratorContext) -> Element | None:
        self._fill(ctx)
        if self.num_elements == 0:
            return None
        while self.slices[0].start == self.slices[0].end:
            self.slices.popleft()  # an epoch done: the next one draws new seeds
            self.random = Philox(*self.ds.generator.generate())
        first = self.slices[0]
        size = len(self.buffer)
        index = (first.start + self.random() % (first.end - first.start)) % size
        element = self.buffer[index]
        self.buffer[index] = self.buffer[first.start % size]
        self.buffer[first.start % size] = None
        first.start += 1
        self.num_elements -= 1
        assert element is not None
        return element


# -- kernels --------------------------------------------------------------------------------
def _buffer_size(value: object, node: str) -> int:
    size = int(scalar_arg(value, "buffer_size", node))
    if size <= 0:
        raise InvalidArgumentError("buffer_size must be greater than zero.", node)
    return size


def _seeds(inputs: list, node: str) -> tuple[int, int]:
    return int(scalar_arg(inputs[2], "seed", node)), int(scalar_arg(inputs[3], "seed2", node))


def _lookup_generator(ctx: OpKernelContext, value: object, node: str) -> SeedGenerator | None:
    h = handle_of(value, node)
    found = ctx.step.resource_mgr.find(h.container, h.name)
    return found if isinstance(found, SeedGenerator) else None


def _shuffle_factory(k: KernelConstruction) -> DatasetFn:
    op = k.op
    reshuffle = bool(k.attrs.get("reshuffle_each_iteration", True))
    repeats = op.startswith("ShuffleAndRepeat")

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        node = k.node_name
        input_ds = dataset_of(inputs[0], node)
        size = _buffer_size(inputs[1], node)
        generator: SeedGenerator | None = None
        if op == "ShuffleDatasetV2":
            generator = _lookup_generator(ctx, inputs[2], node)
            if generator is None:
                h = handle_of(inputs[2], node)
                raise NotFoundError(f"Resource {h.container}/{h.name} does not exist.", node)
        elif op in ("ShuffleDatasetV3", "ShuffleAndRepeatDatasetV2"):
            generator = _lookup_generator(ctx, inputs[-1], node)
        if generator is None:  # V1, or a dummy handle: a generator of this dataset's own
            generator = SeedGenerator(*_seeds(inputs, node), reshuffle)
        count = int(scalar_arg(inputs[4], "count", node)) if repeats else 1
        return ShuffleDataset(input_ds, size, generator, count)

    return make


for _op in ("ShuffleDataset", "ShuffleDatasetV2", "ShuffleDatasetV3", "ShuffleAndRepeatDataset",
            "ShuffleAndRepeatDatasetV2"):  # fmt: skip
    dataset_kernel(_op)(_shuffle_factory)

_CONTAINER = "tf_data"


@register_kernel("DummySeedGenerator")
def _dummy_seed_generator(k: KernelConstruction):  # noqa: ANN202
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [ResourceHandle(ctx.step.device, _CONTAINER, "dummy_seed_generator",
                               "SeedGeneratorManager").as_tensor()]  # fmt: skip

    return compute


@register_kernel("AnonymousSeedGenerator")
def _anonymous_seed_generator(k: KernelConstruction):  # noqa: ANN202
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        seed = int(scalar_arg(inputs[0], "seed", k.node_name))
        seed2 = int(scalar_arg(inputs[1], "seed2", k.node_name))
        reshuffle = bool(scalar_arg(inputs[2], "reshuffle", k.node_name))
        rm = ctx.step.resource_mgr
        name = f"_anonymous_seed_generator_{unique_id(rm)}"
        rm.create(_CONTAINER, name, SeedGenerator(seed, seed2, reshuffle))
        handle = ResourceHandle(ctx.step.device, _CONTAINER, name, "SeedGeneratorManager")
        return [handle.as_tensor(), variant_scalar(ResourceDeleter(handle))]

    return compute


@register_kernel("DeleteSeedGenerator")
def _delete_seed_generator(k: KernelConstruction):  # noqa: ANN202
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        h = handle_of(inputs[0], k.node_name)
        ctx.step.resource_mgr.delete(h.container, h.name)
        return []

    return compute
