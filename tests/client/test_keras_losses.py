"""tf.keras.losses (function and class forms, with and without sample weights) and
tf.keras.backend basics, client.keras against tf_keras in graph mode: the same GraphDef
node for node and the same values."""

from __future__ import annotations

import numpy as np
import pytest

import client
from tests.client.keras_oracle import compare, tf1, tf_real

RNG = np.random.default_rng(2)
LOGITS = RNG.standard_normal((5, 4)).astype(np.float32)
ONE_HOT = np.eye(4, dtype=np.float32)[[0, 3, 1, 1, 2]]
SPARSE = np.array([0, 3, 1, 1, 2], np.int32)
BINARY = (RNG.random((5, 4)) > 0.5).astype(np.float32)
WEIGHTS = np.array([1.0, 0.5, 0.0, 2.0, 1.0], np.float32)
FEEDS = {"logits": LOGITS, "onehot": ONE_HOT, "sparse": SPARSE, "binary": BINARY, "w": WEIGHTS}


def _inputs(api):
    f = api.float32
    return (
        api.placeholder(f, [None, 4], name="logits"),
        api.placeholder(f, [None, 4], name="onehot"),
        api.placeholder(api.int32, [None], name="sparse"),
        api.placeholder(f, [None, 4], name="binary"),
        api.placeholder(f, [None], name="w"),
    )


def _function_forms(api, keras):
    logits, onehot, sparse, binary, _ = _inputs(api)
    probs = api.nn.softmax(logits)
    sig = api.sigmoid(logits)
    L = keras.losses
    return [
        L.mean_squared_error(onehot, logits),
        L.mean_absolute_error(onehot, logits),
        L.categorical_crossentropy(onehot, logits, from_logits=True),
        L.categorical_crossentropy(onehot, probs, from_logits=True),
        L.categorical_crossentropy(onehot, probs),
        L.categorical_crossentropy(onehot, probs * 0.5),
        L.sparse_categorical_crossentropy(sparse, logits, from_logits=True),
        L.sparse_categorical_crossentropy(sparse, probs),
        L.sparse_categorical_crossentropy(sparse, probs * 0.5),
        L.binary_crossentropy(binary, logits, from_logits=True),
        L.binary_crossentropy(binary, sig),
        L.binary_crossentropy(binary, sig * 0.5),
    ]


def test_function_forms():
    compare(_function_forms, FEEDS)


@pytest.mark.parametrize(
    "make,labels",
    [
        (lambda L: L.MeanSquaredError(), "onehot"),
        (lambda L: L.MeanAbsoluteError(), "onehot"),
        (lambda L: L.CategoricalCrossentropy(from_logits=True), "onehot"),
        (lambda L: L.CategoricalCrossentropy(label_smoothing=0.1), "onehot"),
        (lambda L: L.SparseCategoricalCrossentropy(from_logits=True), "sparse"),
        (lambda L: L.SparseCategoricalCrossentropy(), "sparse"),
        (lambda L: L.BinaryCrossentropy(from_logits=True), "binary"),
        (lambda L: L.BinaryCrossentropy(label_smoothing=0.2), "binary"),
    ],
)
@pytest.mark.parametrize("weighted", [False, True])
def test_class_forms(make, labels, weighted):
    def build(api, keras):
        logits, onehot, sparse, binary, w = _inputs(api)
        y = {"onehot": onehot, "sparse": sparse, "binary": binary}[labels]
        loss = make(keras.losses)
        pred = logits if loss._fn_kwargs.get("from_logits") else api.nn.softmax(logits)
        return loss(y, pred, sample_weight=w if weighted else None)

    compare(build, FEEDS)


def test_losses_by_name():
    assert client.keras.losses.get("mse") is client.keras.losses.mean_squared_error
    with pytest.raises(ValueError):
        client.keras.losses.get("no_such_loss")


def test_backend_session_and_names():
    K = client.keras.backend
    g = client.Graph()
    with g.as_default():
        assert K.unique_object_name("dense") == "dense"
        assert K.unique_object_name("dense") == "dense_1"
        v = client.Variable(3.0)
        sess = client.Session(graph=g)
        K.set_session(sess)
        assert K.get_session() is sess
        sess.run(v.initializer)
        assert K.get_value(v) == 3.0
        K.set_value(v, 5.0)
        assert K.get_value(v) == 5.0
        phase = K.learning_phase()
        assert phase.op.type == "PlaceholderWithDefault" and phase.name == "keras_learning_phase:0"
        assert K.learning_phase() is phase
        sess.close()
    K.clear_session()
    assert K.get_session() is not sess
    assert client.get_default_graph() is not g
    assert K.floatx() == "float32"
    assert tf_real.keras.backend.floatx() == K.floatx()
    _ = tf1
