"""Client API: tf.nn."""

from client.layers.normalization import batch_normalization  # noqa: E402, F401
from client.ops import rnn_cell_impl as rnn_cell  # noqa: E402, F401
from client.ops.array_ops import space_to_batch  # noqa: F401
from client.ops.candidate_sampling_ops import (  # noqa: F401
    all_candidate_sampler,
    compute_accidental_hits,
    fixed_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from client.ops.embedding_ops import embedding_lookup, embedding_lookup_sparse  # noqa: F401
from client.ops.nn_impl import (  # noqa: E402, F401
    avg_pool3d,
    conv2d_transpose,
    conv3d,
    l2_normalize,
    max_pool3d,
    nce_loss,
    relu_layer,
    sampled_softmax_loss,
    selu,
    silu,
    softsign,
    swish,
    top_k,
    weighted_cross_entropy_with_logits,
    xw_plus_b,
    zero_fraction,
)
from client.ops.nn_ops import (  # noqa: F401
    avg_pool,
    avg_pool2d,
    bias_add,
    conv2d,
    dropout,
    elu,
    fused_batch_norm,
    in_top_k,
    l2_loss,
    leaky_relu,
    log_softmax,
    max_pool,
    max_pool2d,
    moments,
    relu,
    relu6,
    sigmoid,
    sigmoid_cross_entropy_with_logits,
    softmax,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    softplus,
    sparse_softmax_cross_entropy_with_logits,
    tanh,
)
from client.ops.rnn import (  # noqa: E402, F401
    bidirectional_dynamic_rnn,
    dynamic_rnn,
    static_bidirectional_rnn,
    static_rnn,
)

# isort: split
from client.ops.nn_impl import crelu, log_poisson_loss  # noqa: E402, F401

# isort: split
from client.ops.ctc_ops import (  # noqa: E402, F401
    ctc_beam_search_decoder,
    ctc_greedy_decoder,
    ctc_loss,
    ctc_loss_v2,
)

# Convolution and pooling variants (client.ops.nn_conv_variants).
from client.ops.nn_conv_variants import (  # noqa: E402, F401
    atrous_conv2d,
    atrous_conv2d_transpose,
    conv3d_transpose,
    depth_to_space,
    depthwise_conv2d,
    depthwise_conv2d_native,
    dilation2d,
    fractional_avg_pool,
    fractional_max_pool,
    local_response_normalization,
    lrn,
    max_pool_with_argmax,
    separable_conv2d,
    space_to_depth,
)
from client.ops.probe_gaps_data import conv1d  # noqa: E402, F401

# isort: split
from client.ops.nn_space_to_batch import with_space_to_batch  # noqa: E402, F401

# isort: split
from client.ops.nn_convolution import convolution, pool  # noqa: E402, F401
