"""Client API: what a user imports in place of `tensorflow.compat.v1` (`import client as tf`).

Graph building (client.framework), ops (client.ops), gradients, control flow, training
(client.train) and Session (client.session) with TensorFlow's names and signatures.
"""

import builtins as _builtins
from types import SimpleNamespace as _NS

from client import data, errors, layers, nn, summary, train  # noqa: F401
from client.data.structure import SparseTensorSpec, TensorSpec  # noqa: F401
from client.framework.dtypes import (  # noqa: F401
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from client.framework.importer import import_graph_def  # noqa: F401
from client.framework.indexed_slices import (  # noqa: F401
    IndexedSlices,
    IndexedSlicesValue,
    convert_to_tensor_or_indexed_slices,
)
from client.framework.op_builder import constant, convert_to_tensor  # noqa: F401
from client.framework.ops import (  # noqa: F401
    Graph,
    GraphKeys,
    Operation,
    Tensor,
    add_to_collection,
    colocate_with,
    control_dependencies,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    name_scope,
    register_tensor_conversion_function,
    reset_default_graph,
)
from client.framework.tensor_shape import Dimension, TensorShape, dimension_value  # noqa: F401
from client.gradients import NotDifferentiable, RegisterGradient, gradients, no_gradient  # noqa: F401
from client.ops import init_ops as _init_ops
from client.ops import linalg_ops as _linalg_ops
from client.ops import random_ops as _random_ops
from client.ops import stateful_random_ops as _stateful_random_ops
from client.ops.array_ops import (  # noqa: F401
    batch_to_space,
    batch_to_space_nd,
    boolean_mask,
    broadcast_to,
    check_numerics,
    concat,
    ensure_shape,
    expand_dims,
    fill,
    gather,
    identity,
    identity_n,
    newaxis,
    one_hot,
    ones,
    ones_like,
    pad,
    placeholder,
    placeholder_with_default,
    rank,
    reshape,
    reverse,
    reverse_v2,
    shape,
    shape_n,
    size,
    slice,
    space_to_batch,
    space_to_batch_nd,
    split,
    squeeze,
    stack,
    stop_gradient,
    strided_slice,
    tile,
    transpose,
    unstack,
    where,
    where_v2,
    zeros,
    zeros_like,
)
from client.ops.clip_ops import clip_by_global_norm, clip_by_norm, global_norm  # noqa: F401
from client.ops.control_flow_ops import cond, group, no_op, tuple, while_loop, with_dependencies  # noqa: F401
from client.ops.init_ops import (  # noqa: F401
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    orthogonal_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    truncated_normal_initializer,
    uniform_unit_scaling_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from client.ops.linalg_norm_ops import conj, norm  # noqa: F401
from client.ops.linalg_ops import (  # noqa: F401
    cholesky,
    cholesky_solve,
    cross,
    eye,
    matrix_band_part,
    matrix_determinant,
    matrix_diag,
    matrix_diag_part,
    matrix_inverse,
    matrix_set_diag,
    matrix_solve,
    matrix_triangular_solve,
    qr,
    self_adjoint_eig,
    self_adjoint_eigvals,
    svd,
    trace,
)
from client.ops.logging_ops import Print, print_v2  # noqa: F401
from client.ops.math_ops import (  # noqa: F401
    abs,
    add,
    add_n,
    argmax,
    argmin,
    cast,
    ceil,
    clip_by_value,
    cos,
    count_nonzero,
    cumprod,
    cumsum,
    div,
    div_no_nan,
    divide,
    equal,
    erf,
    exp,
    floor,
    floordiv,
    floormod,
    greater,
    greater_equal,
    is_finite,
    is_inf,
    is_nan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    matmul,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    pow,
    range,
    realdiv,
    reciprocal,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    squared_difference,
    subtract,
    tanh,
    to_float,
    to_int32,
    truediv,
)
from client.ops.partitioned_variables import (  # noqa: F401
    fixed_size_partitioner,
    min_max_variable_partitioner,
    variable_axis_size_partitioner,
)
from client.ops.queues import FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue  # noqa: F401
from client.ops.random_ops import (  # noqa: F401
    multinomial,
    random_gamma,
    random_normal,
    random_poisson,
    random_shuffle,
    random_uniform,
    set_random_seed,
    truncated_normal,
)
from client.ops.variable_scope import (  # noqa: F401
    AUTO_REUSE,
    VariableScope,
    create_partitioned_variables,  # noqa: E402, F401
    get_variable,
    get_variable_scope,
    variable_scope,
)
from client.ops.variables import (  # noqa: F401
    Variable,
    VariableAggregation,
    VariableSynchronization,
    all_variables,
    global_variables,
    global_variables_initializer,
    initialize_all_variables,
    is_variable_initialized,
    local_variables,
    local_variables_initializer,
    trainable_variables,
    variables_initializer,
)
from client.session import InteractiveSession, Session, get_default_session  # noqa: F401
from common.credentials import Credentials  # noqa: F401
from common.credentials import load as load_credentials  # noqa: F401
from protos.config_pb2 import CallableOptions, ConfigProto, GraphOptions, RunMetadata, RunOptions  # noqa: F401
from protos.event_pb2 import Event, SessionLog  # noqa: F401
from protos.meta_graph_pb2 import MetaGraphDef  # noqa: F401
from protos.summary_pb2 import Summary  # noqa: F401

print = print_v2  # tf.print (TF's module attribute shadows the builtin the same way)

random = _NS(
    normal=random_normal,
    uniform=random_uniform,
    truncated_normal=truncated_normal,
    shuffle=random_shuffle,
    multinomial=multinomial,
    categorical=_random_ops.categorical,
    gamma=_random_ops.random_gamma,
    poisson=_random_ops.random_poisson,
    set_random_seed=set_random_seed,
    get_seed=_random_ops.get_seed,
    stateless_uniform=_random_ops.stateless_random_uniform,
    stateless_normal=_random_ops.stateless_random_normal,
    stateless_truncated_normal=_random_ops.stateless_truncated_normal,
    stateless_multinomial=_random_ops.stateless_multinomial,
    stateless_categorical=_random_ops.stateless_categorical,
    stateless_gamma=_random_ops.stateless_random_gamma,
    stateless_poisson=_random_ops.stateless_random_poisson,
    stateless_binomial=_random_ops.stateless_random_binomial,
    Generator=_stateful_random_ops.Generator,
    create_rng_state=_stateful_random_ops.create_rng_state,
    experimental=_NS(
        stateless_shuffle=_random_ops.stateless_shuffle,
        Generator=_stateful_random_ops.Generator,
        create_rng_state=_stateful_random_ops.create_rng_state,
    ),
)
# tf.compat.v1.initializers: TF1's init_ops under their short names.
initializers = _NS(
    zeros=_init_ops.Zeros,
    ones=_init_ops.Ones,
    constant=_init_ops.Constant,
    random_uniform=_init_ops.RandomUniform,
    random_normal=_init_ops.RandomNormal,
    truncated_normal=_init_ops.TruncatedNormal,
    uniform_unit_scaling=_init_ops.UniformUnitScaling,
    variance_scaling=_init_ops.VarianceScaling,
    orthogonal=_init_ops.Orthogonal,
    glorot_uniform=_init_ops.GlorotUniform,
    glorot_normal=_init_ops.GlorotNormal,
    he_normal=_init_ops.he_normal,
    he_uniform=_init_ops.he_uniform,
    lecun_normal=_init_ops.lecun_normal,
    lecun_uniform=_init_ops.lecun_uniform,
    global_variables=global_variables_initializer,
    local_variables=local_variables_initializer,
    variables=variables_initializer,
)
math = _NS(
    add=add,
    conj=conj,
    subtract=subtract,
    multiply=multiply,
    divide=divide,
    exp=exp,
    log=log,
    sqrt=sqrt,
    square=square,
    abs=abs,
    reduce_sum=reduce_sum,
    reduce_mean=reduce_mean,
    maximum=maximum,
    minimum=minimum,
    sigmoid=sigmoid,
    tanh=tanh,
    argmax=argmax,
    argmin=argmin,
    cumsum=cumsum,
    equal=equal,
    less=less,
    greater=greater,
    pow=pow,
    floormod=floormod,
    logical_and=logical_and,
    logical_or=logical_or,
    logical_not=logical_not,
    logical_xor=logical_xor,
    reduce_max=reduce_max,
    reduce_min=reduce_min,
    reduce_prod=reduce_prod,
    negative=negative,
    reciprocal=reciprocal,
)
# tf.linalg, tf.signal and TF1's tf.spectral: linear algebra and FFTs.
from client.ops.math_ops import matvec as _matvec  # noqa: E402  (tf.linalg only, as TF1)

linalg = _NS(
    adjoint=_linalg_ops.adjoint,
    band_part=matrix_band_part,
    cholesky=cholesky,
    cholesky_solve=cholesky_solve,
    cross=cross,
    det=matrix_determinant,
    diag=matrix_diag,
    diag_part=matrix_diag_part,
    eigh=self_adjoint_eig,
    eigvalsh=self_adjoint_eigvals,
    eye=eye,
    inv=matrix_inverse,
    logdet=_linalg_ops.logdet,
    matmul=matmul,
    matvec=_matvec,
    norm=norm,
    qr=qr,
    set_diag=matrix_set_diag,
    slogdet=_linalg_ops.slogdet,
    solve=matrix_solve,
    svd=svd,
    tensor_diag=_linalg_ops.tensor_diag,
    tensor_diag_part=_linalg_ops.tensor_diag_part,
    trace=trace,
    triangular_solve=matrix_triangular_solve,
)
diag, diag_part = _linalg_ops.tensor_diag, _linalg_ops.tensor_diag_part  # TF1's names
signal = spectral = _NS(
    fft=_linalg_ops.fft,
    fft2d=_linalg_ops.fft2d,
    fft3d=_linalg_ops.fft3d,
    ifft=_linalg_ops.ifft,
    ifft2d=_linalg_ops.ifft2d,
    ifft3d=_linalg_ops.ifft3d,
)
# tf.debugging: the checks TF1 also exports at top level.
debugging = _NS(check_numerics=check_numerics)
# TF1 programs' extra top-level names: tf.app/flags/logging, tf.compat.v1, tf.assign ...
from client import app, compat, flags, logging, losses, metrics  # noqa: E402, F401
from client.ops import logsumexp_scan_ops as _logsumexp_scan_ops  # noqa: E402
from client.ops.manip_search_ops import roll, searchsorted, unravel_index  # noqa: E402, F401
from client.ops.next_after_ops import nextafter as _nextafter  # noqa: E402

manip = _NS(roll=roll)  # tf.manip: TF1's home of tf.roll
math.cumulative_logsumexp = _logsumexp_scan_ops.cumulative_logsumexp
math.nextafter = _nextafter
from client.ops.math_ops import (  # noqa: E402, F401
    acos,
    arg_max,
    arg_min,
    asin,
    atan,
    atan2,
    cosh,
    digamma,
    erfc,
    expm1,
    floor_div,
    invert_permutation,
    lgamma,
    lin_space,
    linspace,
    log_sigmoid,
    rint,
    saturate_cast,
    scalar_mul,
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    segment_sum,
    sinh,
    sparse_segment_mean,
    sparse_segment_sqrt_n,
    sparse_segment_sum,
    tan,
    to_double,
    to_int64,
    truncatediv,
    truncatemod,
    unique,
    unsorted_segment_max,
    unsorted_segment_min,
    unsorted_segment_prod,
    unsorted_segment_sum,
)
from client.ops.rnn import reverse_sequence  # noqa: E402, F401
from client.ops.state_ops import (  # noqa: E402, F401
    assign,
    assign_add,
    assign_sub,
    scatter_add,
    scatter_div,
    scatter_max,
    scatter_min,
    scatter_mul,
    scatter_sub,
    scatter_update,
)
from client.ops.tensor_array_ops import TensorArray  # noqa: E402, F401
from client.ops.tf1_extras import (  # noqa: E402, F401
    gather_nd,
    get_local_variable,
    is_tensor,
    matrix_transpose,
    model_variables,
    moving_average_variables,
    sequence_mask,
    tables_initializer,
)
from protos.attr_value_pb2 import AttrValue, NameAttrList  # noqa: E402, F401
from protos.graph_pb2 import GraphDef  # noqa: E402, F401
from protos.node_def_pb2 import NodeDef  # noqa: E402, F401

__version__ = "1.15-compatible"


from client.framework import tf2 as _tf2  # noqa: E402
from client.ops.control_flow_util import (  # noqa: E402, F401
    control_flow_v2_enabled,
    disable_control_flow_v2,
    enable_control_flow_v2,
)
from client.ops.ref_variable import RefVariable  # noqa: E402, F401
from client.ops.resource_variables_toggle import (  # noqa: E402, F401
    disable_resource_variables,
    enable_resource_variables,
    resource_variables_enabled,
)
from client.ops.state_ops import count_up_to  # noqa: E402, F401


def disable_eager_execution() -> None:
    """No-op, as in a TF1 program's preamble: this client only ever builds graphs."""


def disable_v2_behavior() -> None:
    """The client already behaves as TensorFlow 1.x (graphs and sessions); as in
    TensorFlow, this also turns control flow v2 off (tf.Assert's guard becomes a v1 cond)
    and resource variables off (tf.Variable and get_variable build VariableV2), and the
    tf2 switch tf_keras reads (its initializer names then give TF's v1 initializers)."""
    disable_control_flow_v2()
    disable_resource_variables()
    _tf2.disable()


def enable_v2_behavior() -> None:
    """TensorFlow's enable_v2_behavior, for the switches this client has: control flow v2,
    resource variables and tf2 back on."""
    enable_control_flow_v2()
    enable_resource_variables()
    _tf2.enable()


def executing_eagerly() -> _builtins.bool:
    """Always False: ops build graph nodes; values come from Session.run."""
    return False


# Input pipelines: tf.io, tf.gfile (TF1's CamelCase names), tf.python_io, tf.image,
# Example protos and parsing, SparseTensor.
from client import gfile as _gfile  # noqa: E402
from client import image, io, python_io  # noqa: E402, F401
from client.framework.ragged_tensor import RaggedTensor  # noqa: E402, F401
from client.framework.sparse_tensor import SparseTensor, SparseTensorValue  # noqa: E402, F401
from client.ops.base64_ops import decode_base64, encode_base64  # noqa: E402, F401
from client.ops.image_pipeline_ops import random_crop  # noqa: E402, F401  (tf.random_crop)
from client.ops.io_ops import matching_files, read_file, write_file  # noqa: E402, F401
from client.ops.parsing_ops import (  # noqa: E402, F401
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    decode_csv,
    decode_raw,
    parse_example,
    parse_single_example,
)
from client.ops.reader_ops import (  # noqa: E402, F401
    FixedLengthRecordReader,
    ReaderBase,
    TextLineReader,
    TFRecordReader,
    WholeFileReader,
)
from client.ops.script_ops import numpy_function, py_func, py_function  # noqa: E402, F401

gfile = _gfile.v1

# Sparse tensors: tf.sparse and its TF1 aliases.
from client import sparse  # noqa: E402, F401

# Routing of partitioned embedding lookups (TF's data_flow_ops).
from client.ops.data_flow_ops import dynamic_partition, dynamic_stitch  # noqa: E402, F401
from client.ops.histogram_ops import histogram_fixed_width  # noqa: E402, F401
from client.ops.sets_ops import sets  # noqa: E402, F401
from client.ops.sparse_extra_ops import (  # noqa: E402, F401
    deserialize_many_sparse,
    serialize_many_sparse,
    serialize_sparse,
    sparse_concat,
    sparse_maximum,
    sparse_minimum,
    sparse_reshape,
    sparse_slice,
    sparse_softmax,
    sparse_split,
)
from client.sparse import (  # noqa: E402, F401
    sparse_placeholder,
    sparse_tensor_dense_matmul,
    sparse_tensor_to_dense,
)

# isort: split
# TF1's everyday APIs: tf.case, tf.map_fn / foldl / foldr / scan, tf.assert_* (also under
# tf.debugging), and tf.Assert guarding data other than int32 and strings with an
# AssertGuard cond as TF's control_flow_assert does (it replaces tf1_extras' Assert).
from client.ops.check_ops import (  # noqa: E402
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_less,
    assert_less_equal,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_rank,
    assert_type,
)
from client.ops.control_flow_assert import Assert  # noqa: E402, F811
from client.ops.control_flow_case import case  # noqa: E402, F401
from client.ops.functional_ops import foldl, foldr, map_fn, scan  # noqa: E402, F401

debugging.Assert = Assert
debugging.assert_equal = assert_equal
debugging.assert_none_equal = assert_none_equal
debugging.assert_greater = assert_greater
debugging.assert_greater_equal = assert_greater_equal
debugging.assert_less = assert_less
debugging.assert_less_equal = assert_less_equal
debugging.assert_negative = assert_negative
debugging.assert_non_negative = assert_non_negative
debugging.assert_non_positive = assert_non_positive
debugging.assert_positive = assert_positive
debugging.assert_rank = assert_rank
debugging.assert_type = assert_type

# tf.assert_near and tf.assert_rank_at_least (also under tf.debugging), which the
# distributions' validate_args checks use.
from client.ops.check_ops import assert_near, assert_rank_at_least  # noqa: E402

debugging.assert_near = assert_near
debugging.assert_rank_at_least = assert_rank_at_least

# isort: split
# Strings (TF1's top-level names and tf.strings), tf.unique's namedtuples, tf.setdiff1d,
# tf.clip_by_average_norm.
from client.ops import string_ops as _string_ops  # noqa: E402
from client.ops.clip_ops import clip_by_average_norm  # noqa: E402, F401
from client.ops.math_ops import setdiff1d, unique_with_counts  # noqa: E402, F401
from client.ops.string_ops import (  # noqa: E402, F401
    as_string,
    regex_replace,
    string_join,
    string_split,
    string_to_hash_bucket_fast,
    string_to_hash_bucket_strong,
    string_to_number,
    substr,
)

strings = _NS(
    join=string_join,
    split=_string_ops.strings_split,
    substr=substr,
    length=_string_ops.string_length,
    strip=_string_ops.strip,
    to_number=string_to_number,
    to_hash_bucket_fast=string_to_hash_bucket_fast,
    to_hash_bucket_strong=string_to_hash_bucket_strong,
    regex_replace=regex_replace,
    regex_full_match=_string_ops.regex_full_match,
    as_string=as_string,
)

# isort: split
# tf.confusion_matrix (TF1's top-level name) and tf.math.confusion_matrix.
from client.ops.confusion_matrix import confusion_matrix  # noqa: E402, F401

math.confusion_matrix = confusion_matrix

# isort: split
# tf.tensordot and tf.linalg.tensordot.
from client.ops.tensordot import tensordot  # noqa: E402, F401

linalg.tensordot = tensordot
from client.ops.edit_distance import edit_distance  # noqa: E402, F401

# isort: split
# Lookup tables: tf.lookup (compat.v1's names) and tf.initialize_all_tables.
from client.ops import lookup_ops as _lookup_ops  # noqa: E402
from client.ops.lookup_ops import initialize_all_tables  # noqa: E402, F401

lookup = _NS(
    StaticHashTable=_lookup_ops.StaticHashTable,
    KeyValueTensorInitializer=_lookup_ops.KeyValueTensorInitializer,
    StaticVocabularyTable=_lookup_ops.StaticVocabularyTable,
    experimental=_NS(MutableHashTable=_lookup_ops.MutableHashTable),
)
initializers.tables_initializer = tables_initializer

# isort: split
# tf.PriorityQueue and tf.queue (TF1's queue classes under their v2 namespace).
from client.ops.data_flow_extra import PriorityQueue  # noqa: E402, F401

queue = _NS(
    QueueBase=QueueBase,
    FIFOQueue=FIFOQueue,
    PaddingFIFOQueue=PaddingFIFOQueue,
    RandomShuffleQueue=RandomShuffleQueue,
    PriorityQueue=PriorityQueue,
)

# isort: split
# Vocabulary-file tables: tf.lookup.TextFileInitializer and tf.lookup.TextFileIndex.
lookup.TextFileInitializer = _lookup_ops.TextFileInitializer
lookup.TextFileIndex = _lookup_ops.TextFileIndex
lookup.experimental.DenseHashTable = _lookup_ops.DenseHashTable

# isort: split
# tf.linalg's Python-composed APIs (lstsq, expm, LU), eig and matrix functions, the real
# FFTs of tf.signal, complex parts, and TF1's tf.hessians.
from client.hessians import hessians  # noqa: E402, F401
from client.ops import linalg_impl as _linalg_impl  # noqa: E402
from client.ops import spectral_ops as _spectral_ops  # noqa: E402
from client.ops.complex_ops import complex, imag, real  # noqa: E402, F401
from client.ops.linalg_expm import matrix_exponential as _expm  # noqa: E402
from client.ops.linalg_impl import matrix_solve_ls  # noqa: E402, F401

for _name, _fn in (
    ("lstsq", matrix_solve_ls),
    ("expm", _expm),
    ("lu", _linalg_impl.lu),
    ("lu_solve", _linalg_impl.lu_solve),
    ("lu_matrix_inverse", _linalg_impl.lu_matrix_inverse),
    ("sqrtm", _linalg_impl.sqrtm),
    ("logm", _linalg_impl.logm),
    ("eig", _linalg_impl.eig),
    ("eigvals", _linalg_impl.eigvals),
):
    setattr(linalg, _name, _fn)
for _name in ("rfft", "irfft", "rfft2d", "irfft2d", "rfft3d", "irfft3d"):
    setattr(signal, _name, getattr(_spectral_ops, _name))
math.complex, math.real, math.imag = complex, real, imag

# tf.extract_image_patches, tf.extract_volume_patches, tf.space_to_depth, tf.depth_to_space.
# Special functions: tf.math.* and tf.math.special.*, TF1's top-level betainc/zeta/...
from client.ops import special_math_ops as _special  # noqa: E402
from client.ops.nn_conv_variants import (  # noqa: E402, F401
    depth_to_space,
    extract_image_patches,
    extract_volume_patches,
    space_to_depth,
)
from client.ops.special_math_ops import (  # noqa: E402, F401
    betainc,
    igamma,
    igammac,
    lbeta,
    polygamma,
    zeta,
)

for _name in ("betainc", "zeta", "polygamma", "erfinv", "erfcinv", "ndtri", "lbeta"):
    setattr(math, _name, getattr(_special, _name))
for _name in ("igamma", "igammac"):
    setattr(math, _name, getattr(_special, _name))
for _name in ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"):
    setattr(math, _name, getattr(_special, _name))
math.erf, math.erfc, math.lgamma, math.digamma = erf, erfc, lgamma, digamma
math.xlogy, math.xlog1py, math.xdivy = _special.math_ops.xlogy, _special.xlog1py, _special.xdivy
# (a list: `tuple` here is tf.tuple)
_special_names = ["dawsn", "expint", "fresnel_cos", "fresnel_sin", "spence"]
_special_names += [
    f"bessel_{f}"
    for f in ["i0", "i0e", "i1", "i1e", "j0", "j1", "k0", "k0e", "k1", "k1e", "y0", "y1"]
]
math.special = _NS(**{n: getattr(_special, n) for n in _special_names})

# isort: split
# tf.compat.v1.distributions (TF1's deprecated distributions library).
from client import distributions  # noqa: E402, F401

# isort: split
# N-d scatters (tensors and variables), tf.einsum, tf.bincount.
from client.ops import bincount_ops as _bincount_ops  # noqa: E402
from client.ops.einsum_ops import einsum  # noqa: E402, F401
from client.ops.scatter_nd_ops import (  # noqa: E402, F401
    scatter_nd,
    tensor_scatter_add,
    tensor_scatter_nd_add,
    tensor_scatter_nd_max,
    tensor_scatter_nd_min,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
    tensor_scatter_sub,
    tensor_scatter_update,
)
from client.ops.state_ops import scatter_nd_add, scatter_nd_sub, scatter_nd_update  # noqa: E402, F401

bincount = math.bincount = _bincount_ops.bincount_v1
linalg.einsum = einsum

# isort: split
# tf.math's segment reductions, and tf.unsorted_segment_mean / sqrt_n.
from client.ops.math_ops import unsorted_segment_mean, unsorted_segment_sqrt_n  # noqa: E402, F401

math.segment_sum, math.segment_mean = segment_sum, segment_mean
math.segment_max, math.segment_min, math.segment_prod = segment_max, segment_min, segment_prod
math.unsorted_segment_sum, math.unsorted_segment_prod = unsorted_segment_sum, unsorted_segment_prod
math.unsorted_segment_max, math.unsorted_segment_min = unsorted_segment_max, unsorted_segment_min
math.unsorted_segment_mean, math.unsorted_segment_sqrt_n = (
    unsorted_segment_mean,
    unsorted_segment_sqrt_n,
)

# isort: split
# tf.math's names for ops built elsewhere (TF exports the same functions in both places),
# tf.strings.upper/lower and tf.initializers.identity.
from client.ops import math_ops as _math_ops  # noqa: E402
from client.ops import nn_impl as _nn_impl  # noqa: E402
from client.ops import nn_ops as _nn_ops  # noqa: E402

for _name in [
    "acos",
    "add_n",
    "asin",
    "atan",
    "atan2",
    "ceil",
    "cos",
    "cosh",
    "count_nonzero",
    "cumprod",
    "digamma",
    "erf",
    "erfc",
    "expm1",
    "floor",
    "floordiv",
    "greater_equal",
    "invert_permutation",
    "is_finite",
    "is_inf",
    "is_nan",
    "less_equal",
    "lgamma",
    "log1p",
    "log_sigmoid",
    "mod",
    "not_equal",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "rint",
    "round",
    "rsqrt",
    "scalar_mul",
    "segment_max",
    "segment_mean",
    "segment_min",
    "segment_prod",
    "segment_sum",
    "sign",
    "sin",
    "sinh",
    "squared_difference",
    "tan",
    "truediv",
    "unsorted_segment_max",
    "unsorted_segment_min",
    "unsorted_segment_prod",
    "unsorted_segment_sum",
    "xlogy",
]:  # (tf.math.xdivy is special_math_ops.xdivy above: TF scopes it "xdivy/Xdivy")
    setattr(math, _name, getattr(_math_ops, _name))
for _name in ("softplus", "softmax", "log_softmax", "in_top_k"):
    setattr(math, _name, getattr(_nn_ops, _name))
for _name in ("l2_normalize", "zero_fraction", "top_k"):
    setattr(math, _name, getattr(_nn_impl, _name))
math.divide_no_nan = div_no_nan
strings.upper, strings.lower = _string_ops.upper, _string_ops.lower
initializers.identity = _init_ops.Identity

# TF1 probe gaps (math): tf.sort/argsort, tf.meshgrid, tf.bitwise, tf.fft/ifft, tf.angle,
# tf.math.reduce_std/reduce_variance/polyval/accumulate_n.
from client.ops import probe_gaps_math as _probe_gaps_math  # noqa: E402

sort, argsort = _probe_gaps_math.sort, _probe_gaps_math.argsort
meshgrid = _probe_gaps_math.meshgrid
broadcast_dynamic_shape = _probe_gaps_math.broadcast_dynamic_shape
bitwise = _NS(
    bitwise_and=_probe_gaps_math.bitwise_and,
    bitwise_or=_probe_gaps_math.bitwise_or,
    bitwise_xor=_probe_gaps_math.bitwise_xor,
    left_shift=_probe_gaps_math.left_shift,
    right_shift=_probe_gaps_math.right_shift,
    invert=_probe_gaps_math.invert,
)
fft, ifft = _linalg_ops.fft, _linalg_ops.ifft  # TF1's top-level spectral aliases
fft2d, ifft2d, fft3d, ifft3d = (
    _linalg_ops.fft2d,
    _linalg_ops.ifft2d,
    _linalg_ops.fft3d,
    _linalg_ops.ifft3d,
)
angle = math.angle = _probe_gaps_math.angle
accumulate_n = math.accumulate_n = _probe_gaps_math.accumulate_n
math.reduce_std = _probe_gaps_math.reduce_std
math.reduce_variance = _probe_gaps_math.reduce_variance
math.polyval = _probe_gaps_math.polyval

from client.ops.probe_gaps_data import reduce_join  # noqa: E402, F401
from client.ops.sparse_gap_ops import (  # noqa: E402, F401
    sparse_add,
    sparse_fill_empty_rows,
    sparse_reduce_max,
    sparse_reduce_sum,
    sparse_reorder,
    sparse_retain,
    sparse_transpose,
)

strings.reduce_join = reduce_join

# tf.strings.format (StringFormat, the op tf.print formats with).
from client.ops.logging_ops import string_format as _string_format  # noqa: E402

strings.format = _string_format

# tf.serialize_tensor / tf.parse_tensor (TF1's top-level names; tf.io has them too).
from client.ops.tensor_serialize_ops import parse_tensor, serialize_tensor  # noqa: E402, F401

# isort: split
# RaggedTensors from strings: tf.strings.unicode_*, bytes_split; tf.ragged (compat.v1's).
from client.framework.ragged_tensor import RaggedTensorValue as _RaggedTensorValue  # noqa: E402
from client.ops import ragged_ops as _ragged_ops  # noqa: E402

strings.unicode_decode = _ragged_ops.unicode_decode
strings.unicode_decode_with_offsets = _ragged_ops.unicode_decode_with_offsets
strings.unicode_split = _ragged_ops.unicode_split
strings.unicode_encode = _ragged_ops.unicode_encode
strings.bytes_split = _ragged_ops.bytes_split
ragged = _NS(RaggedTensorValue=_RaggedTensorValue)
from client.ops import ragged_conversion_ops as _ragged_conversion_ops  # noqa: E402, F401
from client.ops import ragged_factory_ops as _ragged_factory_ops  # noqa: E402
from client.ops import ragged_functional_ops as _ragged_functional_ops  # noqa: E402
from client.ops import ragged_gather_ops as _ragged_gather_ops  # noqa: E402

gather = _ragged_gather_ops.gather  # noqa: F811  (TF's ragged dispatch of tf.gather)
ragged.constant = _ragged_factory_ops.constant
ragged.range = _ragged_factory_ops.range
ragged.map_flat_values = _ragged_functional_ops.map_flat_values
# TF's ragged dispatch of the elementwise APIs (tf.add(rt, 1), tf.abs(rt), rt * rt ...).
from client.ops import ragged_dispatch as _ragged_dispatch  # noqa: E402

_ragged_dispatch.install(globals(), math)
from client.ops import ragged_math_ops as _ragged_math_ops  # noqa: E402

_ragged_math_ops.install(globals(), math)  # tf.reduce_* on RaggedTensors
from client.ops import ragged_concat_ops as _ragged_concat_ops  # noqa: E402
from client.ops import ragged_getitem as _ragged_getitem  # noqa: E402, F401  (rt[...])

_ragged_concat_ops.install(globals())  # tf.concat / tf.stack of RaggedTensors
ragged.stack = _ragged_concat_ops.stack

# isort: split
from client.ops.custom_gradient import custom_gradient  # noqa: E402,F401
from client.training.monitored_session import (  # noqa: E402, F401  (tf.report_uninitialized_variables)
    report_uninitialized_variables,
)

# isort: split
# tf.keras (tf_keras) for graph programs: layers, models, losses, backend.
from client import keras  # noqa: E402, F401
