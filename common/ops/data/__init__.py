"""Ops (executor stage): tf.data in graph mode — dataset ops producing DT_VARIANT datasets
and the iterator resources that run them, as TensorFlow's tf.compat.v1 clients and exported
GraphDefs use them (make_one_shot_iterator, make_initializable_iterator, get_next).

The family is split by stage of a pipeline (as TensorFlow's core/kernels/data/), each
module registering its own ops:
  base                the Dataset value, the iterator protocol, captured functions
  sources             TensorDataset, TensorSliceDataset, RangeDataset
  sparse_sources      SparseTensorSliceDataset
  transforms          Repeat, Take, Skip, Batch, PaddedBatch, Zip, Concatenate, Cache,
                      Cardinality, and pass-throughs (Prefetch, Optimize, Model ...)
  shuffle             Shuffle(V1-V3), ShuffleAndRepeat(V1-V2), seed generators (TF's order)
  functions           Map, ParallelMap, Filter, FlatMap, Interleave
  generator           GeneratorDataset (from_generator's source)
  readers             TFRecordDataset(V2), TextLineDataset, FixedLengthRecordDataset(V2)
  iterators           OneShotIterator, IteratorV2, Anonymous iterators, MakeIterator,
                      IteratorGetNext(Sync/AsOptional), string handles
"""

from __future__ import annotations

from common.ops.data import (  # noqa: F401  (imported for their registrations)
    base,
    functions,
    generator,
    iterators,
    readers,
    shuffle,
    sources,
    sparse_sources,
    transforms,
    unbatch,
)
from common.ops.data.base import (  # noqa: F401  (the family's public names)
    INFINITE,
    UNKNOWN,
    Dataset,
    DatasetIterator,
    IteratorContext,
    dataset_of,
    dataset_value,
)
from common.ops.data.iterators import IteratorResource  # noqa: F401
