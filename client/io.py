"""Client: the tf.io namespace (and tf.python_io): file and record I/O, Example parsing
and image codecs, gathered from the modules that build them."""

from __future__ import annotations

from client import gfile  # noqa: F401
from client.ops.base64_ops import decode_base64, encode_base64  # noqa: F401
from client.ops.image_ops import (  # noqa: F401
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
)
from client.ops.io_ops import matching_files, read_file, write_file  # noqa: F401
from client.ops.parsing_ops import (  # noqa: F401
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    VarLenFeature,
    decode_csv,
    decode_raw,
    parse_example,
    parse_sequence_example,
    parse_single_example,
    parse_single_sequence_example,
)
from client.ops.sparse_extra_ops import (  # noqa: E402, F401
    deserialize_many_sparse,
    serialize_many_sparse,
    serialize_sparse,
)
from client.ops.tensor_serialize_ops import parse_tensor, serialize_tensor  # noqa: F401
from client.python_io import (  # noqa: F401
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
