"""Client, tf.data: `tf.data` / `tf.compat.v1.data` for graph mode — Dataset (sources and
transformations emitting TensorFlow's dataset ops), iterators, element specs."""

from client.data.dataset_ops import AUTOTUNE, INFINITE, UNKNOWN, Dataset, DatasetV1  # noqa: F401
from client.data.from_generator import from_generator as _from_generator
from client.data.iterator_ops import (  # noqa: F401
    Iterator,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)
from client.data.readers import (  # noqa: F401
    FixedLengthRecordDataset,
    TextLineDataset,
    TFRecordDataset,
)
from client.data.structure import SparseTensorSpec, TensorSpec  # noqa: F401

# from_generator builds on Dataset, so the class gets it here rather than in its body (an
# import of from_generator.py from dataset_ops.py would be a circle).
Dataset.from_generator = staticmethod(_from_generator)

experimental = type(
    "experimental",
    (),
    {"AUTOTUNE": AUTOTUNE, "INFINITE_CARDINALITY": INFINITE, "UNKNOWN_CARDINALITY": UNKNOWN},
)
