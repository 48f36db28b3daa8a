"""Ops (executor stage), a tf.data source calling functions: GeneratorDataset (TensorFlow's
generator_dataset_op.cc), what tf.data.Dataset.from_generator builds on.

An iterator runs `init_func` once, on its first get_next, for a state; then `next_func` on
that state for each element, until `next_func` fails with OutOfRange, which ends the
sequence; then `finalize_func` on the state, once. Functions run as child steps of the step
asking for the element (base.CapturedFunction). An iterator dropped before its end does not
run `finalize_func` (TensorFlow's destructor does): its function would need a step to run in.
"""

from __future__ import annotations

from common.errors import OutOfRangeError
from common.ops.data.base import (
    CapturedFunction,
    Dataset,
    DatasetFn,
    DatasetIterator,
    Element,
    IteratorContext,
    as_element,
    dataset_kernel,
    function_factory,
    spec_of,
)
from common.ops.registry import KernelConstruction, OpKernelContext, register_op

register_op("GeneratorDataset",
            inputs=["init_func_other_args: Tinit_func_args",
                    "next_func_other_args: Tnext_func_args",
                    "finalize_func_other_args: Tfinalize_func_args"],
            outputs=["handle: variant"],
            attrs=["init_func: func", "next_func: func", "finalize_func: func",
                   "Tinit_func_args: list(type) >= 0", "Tnext_func_args: list(type) >= 0",
                   "Tfinalize_func_args: list(type) >= 0", "output_types: list(type) >= 1",
                   "output_shapes: list(shape) >= 1", "metadata: string = ''"],
            stateful=True)  # fmt: skip


class GeneratorDataset(Dataset):
    def __init__(
        self,
        init_func: CapturedFunction,
        next_func: CapturedFunction,
        finalize_func: CapturedFunction,
        types: list,
        shapes: list,
    ) -> None:
        super().__init__(types, shapes)
        self.init_func, self.next_func, self.finalize_func = init_func, next_func, finalize_func

    def make_iterator(self) -> DatasetIterator:
        return _GeneratorIterator(self)


class _GeneratorIterator(DatasetIterator):
    def __init__(self, ds: GeneratorDataset) -> None:
        super().__init__()
        self.ds = ds
        self.state: list | None = None
        self.finalized = False

    def _next(self, ctx: IteratorContext) -> Element | None:
        if self.state is None:
            self.state = self.ds.init_func(ctx, [])
        if self.finalized:
            return None
        try:
            outputs = self.ds.next_func(ctx, self.state)
        except OutOfRangeError:
            # next_func ends the sequence by failing with OutOfRange (TF's contract);
            # what finalize_func returns is ignored.
            self.finalized = True
            self.ds.finalize_func(ctx, self.state)
            return None
        return as_element(outputs, self.ds.output_types)


@dataset_kernel("GeneratorDataset")
def _generator_dataset(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k)
    make_init = function_factory(k, "init_func")
    make_next = function_factory(k, "next_func")
    make_finalize = function_factory(k, "finalize_func")
    n_init = len(k.attr("Tinit_func_args"))
    n_next = len(k.attr("Tnext_func_args"))

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        init_args = inputs[:n_init]
        next_args = inputs[n_init : n_init + n_next]
        finalize_args = inputs[n_init + n_next :]
        return GeneratorDataset(
            make_init(ctx, init_args),
            make_next(ctx, next_args),
            make_finalize(ctx, finalize_args),
            types,
            shapes,
        )

    return make
