"""Optimizer updates (training_ops): signatures against TensorFlow's, numpy expectations on
ref and resource variables, and 20 update steps compared with TensorFlow's raw ops."""

from __future__ import annotations

import numpy as np
import pytest

from common.dtypes import DataType
from common.errors import FailedPreconditionError, InvalidArgumentError
from common.ops import registry, training_ops
from common.ops.state_ops import Var
from common.resource_mgr import ResourceMgr

from .kernel_harness import fake_step, run
from .signatures import assert_signature_matches_tensorflow, module_ops

f32 = np.float32
MY_OPS = module_ops("common.ops.training_ops")
RMS = {"lr": f32(0.01), "rho": f32(0.9), "momentum": f32(0.5), "epsilon": f32(1e-6)}
ADADELTA = {"lr": f32(1.0), "rho": f32(0.95), "epsilon": f32(1e-6)}
FTRL = {"lr": f32(0.1), "l1": f32(0.01), "l2": f32(0.02), "lr_power": f32(-0.5)}
FTRL_POW = {**FTRL, "lr_power": f32(-0.6)}
FTRL_V2 = {**FTRL, "l2_shrinkage": f32(0.05)}
PROX_GD = {"alpha": f32(0.1), "l1": f32(0.05), "l2": f32(0.1)}
PROX_ADAGRAD = {"lr": f32(0.1), "l1": f32(0.05), "l2": f32(0.1)}
FTRL_SLOTS = ("var", "accum", "linear")
DA_SLOTS = ("var", "gradient_accumulator", "gradient_squared_accumulator")


def _da(l1: float):
    return lambda t: {"lr": f32(0.1), "l1": f32(l1), "l2": f32(0.01), "global_step": np.int64(t)}


def test_registered_the_whole_family():
    assert len(MY_OPS) == 52
    for name in (
        "ApplyAdam",
        "ResourceApplyAdam",
        "ResourceApplyKerasMomentum",
        "ResourceSparseApplyAdagrad",
        "ApplyCenteredRMSProp",
        "SparseApplyFtrlV2",
        "ResourceSparseApplyAdagradDA",
        "ApplyProximalGradientDescent",
        "ResourceSparseApplyCenteredRMSProp",
    ):
        assert name in MY_OPS


@pytest.mark.parametrize("name", MY_OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


# ---------------------------------------------------------------------------------------
# Our side: variables in a ResourceMgr, kernels run through the harness
# ---------------------------------------------------------------------------------------


class Vars:
    """Resource variables in one ResourceMgr, addressed by name."""

    def __init__(self) -> None:
        self.step = fake_step(ResourceMgr())

    def create(self, name: str, value: np.ndarray) -> np.ndarray:
        value = np.asarray(value)
        handle = run(
            "VarHandleOp",
            [],
            {"dtype": DataType.DT_FLOAT, "shape": value.shape, "shared_name": name},
            step=self.step,
        )[0]
        run("AssignVariableOp", [handle, value], step=self.step)
        return handle

    def read(self, handle) -> np.ndarray:
        return run("ReadVariableOp", [handle], {"dtype": DataType.DT_FLOAT}, step=self.step)[0]

    def apply(self, op: str, inputs: list, **attrs) -> list:
        return run(op, inputs, {"T": DataType.DT_FLOAT, **attrs}, step=self.step)


def _ref(value) -> Var:
    v = Var(DataType.DT_FLOAT, np.shape(value), "v")
    v.set(value)
    return v


def test_ref_gradient_descent_outputs_the_variable():
    var = _ref(np.array([1.0, 2.0], f32))
    out = run(
        "ApplyGradientDescent", [var, f32(0.5), np.array([2.0, 4.0], f32)], {"T": DataType.DT_FLOAT}
    )
    assert out == [var]
    np.testing.assert_array_equal(var.value, [0.0, 0.0])


def test_ref_momentum_nesterov():
    var, accum = _ref(np.array([1.0], f32)), _ref(np.array([2.0], f32))
    run(
        "ApplyMomentum",
        [var, accum, f32(0.1), np.array([1.0], f32), f32(0.5)],
        {"T": DataType.DT_FLOAT, "use_nesterov": True},
    )
    # accum = 2*0.5 + 1 = 2; var -= 1*0.1 + 2*0.5*0.1
    np.testing.assert_array_equal(accum.value, [2.0])
    np.testing.assert_allclose(var.value, [1.0 - 0.1 - 0.1], rtol=1e-7)


def test_resource_adagrad_update_slots_false_keeps_accum():
    vs = Vars()
    var, acc = vs.create("v", np.array([1.0], f32)), vs.create("a", np.array([4.0], f32))
    vs.apply("ResourceApplyAdagrad", [var, acc, f32(1.0), np.array([2.0], f32)], update_slots=False)
    np.testing.assert_array_equal(vs.read(acc), [4.0])
    np.testing.assert_array_equal(vs.read(var), [0.0])


def test_shape_and_scalar_checks():
    vs = Vars()
    var, acc = vs.create("v", np.zeros(2, f32)), vs.create("a", np.zeros(3, f32))
    with pytest.raises(
        InvalidArgumentError,
        match=r"var and accum do not have the same "
        r"shape\[2\] \[3\]",
    ):
        vs.apply("ResourceApplyMomentum", [var, acc, f32(1), np.zeros(2, f32), f32(1)])
    with pytest.raises(InvalidArgumentError, match=r"alpha is not a scalar: \[2\]"):
        vs.apply("ResourceApplyGradientDescent", [var, np.ones(2, f32), np.zeros(2, f32)])
    with pytest.raises(InvalidArgumentError, match=r"var and delta do not have the same"):
        vs.apply("ResourceApplyGradientDescent", [var, f32(1), np.zeros(3, f32)])


def test_uninitialized_variables():
    with pytest.raises(FailedPreconditionError, match="uninitialized value v"):
        run(
            "ApplyGradientDescent",
            [Var(DataType.DT_FLOAT, (2,), "v"), f32(1), np.zeros(2, f32)],
            {"T": DataType.DT_FLOAT},
        )
    vs = Vars()
    handle = run(
        "VarHandleOp",
        [],
        {"dtype": DataType.DT_FLOAT, "shape": (2,), "shared_name": "nope"},
        step=vs.step,
    )[0]
    with pytest.raises(FailedPreconditionError, match="Could not find variable nope"):
        vs.apply("ResourceApplyGradientDescent", [handle, f32(1), np.zeros(2, f32)])


def test_same_variable_twice_does_not_deadlock():
    vs = Vars()
    var = vs.create("v", np.ones(2, f32))
    vs.apply("ResourceApplyMomentum", [var, var, f32(1), np.ones(2, f32), f32(0)])
    assert vs.read(var).shape == (2,)


def test_sparse_momentum_repeated_indices_apply_in_order():
    vs = Vars()
    var, acc = vs.create("v", np.zeros((3, 2), f32)), vs.create("a", np.zeros((3, 2), f32))
    grad = np.ones((3, 2), f32)
    vs.apply(
        "ResourceSparseApplyMomentum",
        [var, acc, f32(1), grad, np.array([0, 2, 0]), f32(1)],
        Tindices=DataType.DT_INT64,
    )
    # row 0: accum 1 -> var -1, then accum 2 -> var -3; row 2: accum 1 -> var -1
    np.testing.assert_array_equal(vs.read(var), [[-3, -3], [0, 0], [-1, -1]])
    with pytest.raises(InvalidArgumentError, match="indices"):
        vs.apply(
            "ResourceSparseApplyMomentum",
            [var, acc, f32(1), np.ones((1, 2), f32), np.array([3]), f32(1)],
            Tindices=DataType.DT_INT64,
        )


# ---------------------------------------------------------------------------------------
# TensorFlow oracle: 20 steps on both sides, compared after every step
# ---------------------------------------------------------------------------------------

# (op, slots, per-step scalar inputs(step) in TF order around "grad", attrs)
ADAM_B1, ADAM_B2 = f32(0.9), f32(0.999)


def _adam_scalars(t: int) -> dict:
    return {
        "beta1_power": ADAM_B1 ** f32(t),
        "beta2_power": ADAM_B2 ** f32(t),
        "lr": f32(0.01),
        "beta1": ADAM_B1,
        "beta2": ADAM_B2,
        "epsilon": f32(1e-7),
    }


ORACLE = [
    ("GradientDescent", ("var",), lambda t: {"alpha": f32(0.1)}, {}),
    ("Momentum", ("var", "accum"), lambda t: {"lr": f32(0.05), "momentum": f32(0.9)}, {}),
    (
        "Momentum",
        ("var", "accum"),
        lambda t: {"lr": f32(0.05), "momentum": f32(0.9)},
        {"use_nesterov": True},
    ),
    (
        "KerasMomentum",
        ("var", "accum"),
        lambda t: {"lr": f32(0.05), "momentum": f32(0.9)},
        {"use_nesterov": True},
    ),
    ("Adam", ("var", "m", "v"), _adam_scalars, {}),
    ("Adam", ("var", "m", "v"), _adam_scalars, {"use_nesterov": True}),
    (
        "AdaMax",
        ("var", "m", "v"),
        lambda t: {k: v for k, v in _adam_scalars(t).items() if k != "beta2_power"},
        {},
    ),
    ("Adagrad", ("var", "accum"), lambda t: {"lr": f32(0.1)}, {}),
    ("AdagradV2", ("var", "accum"), lambda t: {"lr": f32(0.1), "epsilon": f32(1e-6)}, {}),
    ("RMSProp", ("var", "ms", "mom"), lambda t: RMS, {}),
    ("CenteredRMSProp", ("var", "mg", "ms", "mom"), lambda t: RMS, {}),
    ("Adadelta", ("var", "accum", "accum_update"), lambda t: ADADELTA, {}),
    ("AdagradDA", DA_SLOTS, _da(0.01), {}),
    ("AdagradDA", DA_SLOTS, _da(0.0), {}),
    ("Ftrl", FTRL_SLOTS, lambda t: FTRL, {}),
    ("Ftrl", FTRL_SLOTS, lambda t: FTRL_POW, {}),
    ("Ftrl", FTRL_SLOTS, lambda t: FTRL, {"multiply_linear_by_lr": True}),
    ("FtrlV2", FTRL_SLOTS, lambda t: FTRL_V2, {}),
    ("ProximalGradientDescent", ("var",), lambda t: PROX_GD, {}),
    ("ProximalGradientDescent", ("var",), lambda t: {**PROX_GD, "l1": f32(0)}, {}),
    ("ProximalAdagrad", ("var", "accum"), lambda t: PROX_ADAGRAD, {}),
    ("ProximalAdagrad", ("var", "accum"), lambda t: {**PROX_ADAGRAD, "l1": f32(0)}, {}),
]


def _initial(slots, rng) -> dict:
    init = {"var": rng.standard_normal((3, 4)).astype(f32)}
    for s in slots[1:]:
        init[s] = (rng.random((3, 4)) * 0.1).astype(f32)  # non-negative: ms, v, accum
    return init


def _ordered(op: str, slot_values: dict, scalars: dict, grad, indices=None) -> tuple:
    op_def = registry.lookup_op(op)
    names = [a.name for a in op_def.input_args]
    values = {**slot_values, **scalars, ("delta" if "delta" in names else "grad"): grad}
    if indices is not None:
        values["indices"] = indices
    return names, [values[n] for n in names]


@pytest.mark.parametrize(
    "opt,slots,scalars,attrs",
    ORACLE,
    ids=[f"{o[0]}-{i}" for i, o in enumerate(ORACLE)],
)
def test_oracle_twenty_steps(opt, slots, scalars, attrs):
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(7)
    init = _initial(slots, rng)
    op = "ResourceApply" + opt
    theirs = {s: tf.Variable(init[s]) for s in slots}
    vs = Vars()
    ours = {s: vs.create(s, init[s]) for s in slots}
    refs = {s: _ref(init[s]) for s in slots} if registry.find_op("Apply" + opt) else None
    for t in range(1, 21):
        grad = rng.standard_normal((3, 4)).astype(f32)
        names, values = _ordered(op, {s: theirs[s].handle for s in slots}, scalars(t), grad)
        getattr(tf.raw_ops, op)(**dict(zip(names, values)), **attrs)
        _, values = _ordered(op, ours, scalars(t), grad)
        vs.apply(op, values, **attrs)
        if refs is not None:
            _, values = _ordered("Apply" + opt, refs, scalars(t), grad)
            run("Apply" + opt, values, {"T": DataType.DT_FLOAT, **attrs})
        for s in slots:
            want = theirs[s].numpy()
            # atol scales with the slot's magnitude: Ftrl's linear is a difference of
            # large accumulations (pow's last-ulp differences show there).
            atol = 1e-6 * max(1.0, float(np.abs(want).max()))
            np.testing.assert_allclose(
                vs.read(ours[s]), want, rtol=1e-5, atol=atol, err_msg=f"{op} {s} step {t}"
            )
            if refs is not None:
                np.testing.assert_array_equal(refs[s].value, vs.read(ours[s]))


SPARSE_ORACLE = [
    ("Momentum", ("var", "accum"), {"lr": f32(0.05), "momentum": f32(0.9)}),
    ("KerasMomentum", ("var", "accum"), {"lr": f32(0.05), "momentum": f32(0.9)}),
    ("Adagrad", ("var", "accum"), {"lr": f32(0.1)}),
    ("AdagradV2", ("var", "accum"), {"lr": f32(0.1), "epsilon": f32(1e-6)}),
    ("RMSProp", ("var", "ms", "mom"), RMS),
    ("CenteredRMSProp", ("var", "mg", "ms", "mom"), RMS),
    ("Adadelta", ("var", "accum", "accum_update"), ADADELTA),
    ("AdagradDA", DA_SLOTS, _da(0.01)(3)),
    ("AdagradDA", DA_SLOTS, _da(0.0)(3)),
    ("Ftrl", FTRL_SLOTS, FTRL),
    ("Ftrl", FTRL_SLOTS, FTRL_POW),
    ("FtrlV2", FTRL_SLOTS, FTRL_V2),
    ("ProximalGradientDescent", ("var",), PROX_GD),
    ("ProximalAdagrad", ("var", "accum"), PROX_ADAGRAD),
]


@pytest.mark.parametrize(
    "opt,slots,scalars",
    SPARSE_ORACLE,
    ids=[f"{o[0]}-{i}" for i, o in enumerate(SPARSE_ORACLE)],
)
def test_oracle_sparse_twenty_steps(opt, slots, scalars):
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(3)
    init = _initial(slots, rng)
    op = "ResourceSparseApply" + opt
    theirs = {s: tf.Variable(init[s]) for s in slots}
    vs = Vars()
    ours = {s: vs.create(s, init[s]) for s in slots}
    for t in range(20):
        indices = rng.integers(0, 3, size=2).astype(np.int32)
        grad = rng.standard_normal((2, 4)).astype(f32)
        names, values = _ordered(op, {s: theirs[s].handle for s in slots}, scalars, grad, indices)
        getattr(tf.raw_ops, op)(**dict(zip(names, values)))
        _, values = _ordered(op, ours, scalars, grad, indices)
        vs.apply(op, values, Tindices=DataType.DT_INT32)
        for s in slots:
            np.testing.assert_allclose(
                vs.read(ours[s]),
                theirs[s].numpy(),
                rtol=1e-5,
                atol=1e-6,
                err_msg=f"{op} {s} step {t}",
            )


# ---------------------------------------------------------------------------------------
# End to end: tf.compat.v1 optimizers' graphs, 20 steps in our Session and TF's
# ---------------------------------------------------------------------------------------


def _optimizers(tf):
    train = tf.compat.v1.train
    return {
        "GradientDescent": lambda: train.GradientDescentOptimizer(0.1),
        "Momentum": lambda: train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
        "Adam": lambda: train.AdamOptimizer(0.01),
    }


@pytest.mark.parametrize(
    "optimizer,use_resource",
    [("GradientDescent", True), ("Momentum", True), ("Adam", True), ("Adam", False)],
)
def test_end_to_end_training_steps(optimizer, use_resource):
    tf = pytest.importorskip("tensorflow")
    from common.session import Session

    tf1 = tf.compat.v1
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((8, 5)).astype(f32)
    ys = np.eye(3, dtype=f32)[rng.integers(0, 3, 8)]
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [None, 5], name="x")
        y = tf1.placeholder(tf.float32, [None, 3], name="y")
        w = tf1.get_variable(
            "w",
            initializer=tf.constant(rng.standard_normal((5, 3)).astype(f32)),
            use_resource=use_resource,
        )
        b = tf1.get_variable("b", initializer=tf.zeros([3]), use_resource=use_resource)
        loss = tf.reduce_mean(
            tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, w) + b)
        )
        train = _optimizers(tf)[optimizer]().minimize(loss)
        init = tf1.global_variables_initializer()
        reads = [tf.identity(w), tf.identity(b)]
    apply_op = ("Resource" if use_resource else "") + "Apply" + optimizer
    assert apply_op in {n.op for n in g.as_graph_def().node}
    ours = Session(g.as_graph_def().SerializeToString())
    ours.run([], targets=[init.name])
    feeds = {"x:0": xs, "y:0": ys}
    with tf1.Session(graph=g) as sess:
        sess.run(init)
        for step in range(20):
            sess.run(train, {x: xs, y: ys})
            ours.run([], feeds, targets=[train.name])
            want = sess.run(reads)
            got = ours.run([t.name for t in reads])
            for a, e in zip(got, want):
                np.testing.assert_allclose(
                    a, e, rtol=1e-4, atol=1e-6, err_msg=f"{optimizer} step {step}"
                )
    ours.close()


@pytest.mark.parametrize(
    "opt,slots,scalars,attrs",
    ORACLE,
    ids=[f"{o[0]}-{i}" for i, o in enumerate(ORACLE)],
)
def test_large_update_by_chunks_equals_one_pass(opt, slots, scalars, attrs):
    # Past 2 * UPDATE_CHUNK elements the dense rule runs chunk by chunk (the last one
    # shorter): bit-identical to one pass of the rule over the whole arrays.
    rng = np.random.default_rng(3)
    shape = (training_ops.UPDATE_CHUNK // 256 * 3 + 5, 256)
    init = {"var": rng.standard_normal(shape).astype(f32)}
    for s in slots[1:]:
        init[s] = (rng.random(shape) * 0.1).astype(f32)
    rule = next(o for o in training_ops.OPTIMIZERS if o.name == opt)
    vs = Vars()
    ours = {s: vs.create(s, init[s]) for s in slots}
    want = [init[s].copy() for s in slots]
    for t in (1, 2):
        grad = rng.standard_normal(shape).astype(f32)
        _, values = _ordered("ResourceApply" + opt, ours, scalars(t), grad)
        vs.apply("ResourceApply" + opt, values, **attrs)
        op_def = registry.lookup_op("ResourceApply" + opt)
        full = {a.name: a.default for a in op_def.attrs if a.has_default} | attrs
        with np.errstate(all="ignore"):
            # The kernel's scalars in the variable's dtype (global_step too).
            rule.update(want, {k: f32(v) for k, v in scalars(t).items()}, grad, full)
    for s, w in zip(slots, want):
        np.testing.assert_array_equal(vs.read(ours[s]), w, err_msg=f"{opt} {s}")


def test_adam_in_place_update_is_the_formula_bit_for_bit():
    # _adam evaluates TF's Adam in two temporaries: the bits are the plain formula's.
    rng = np.random.default_rng(3)
    var, m, v, g = (rng.standard_normal((64, 48)).astype(f32) for _ in range(4))
    v = np.abs(v)
    a = {
        "lr": f32(1e-3), "beta1": f32(0.9), "beta2": f32(0.999), "epsilon": f32(1e-8),
        "beta1_power": f32(0.9**3), "beta2_power": f32(0.999**3),
    }  # fmt: skip
    one = f32(1)
    alpha = a["lr"] * np.sqrt(one - a["beta2_power"]) / (one - a["beta1_power"])
    m2 = m + (g - m) * (one - a["beta1"])
    v2 = v + (g * g - v) * (one - a["beta2"])
    var2 = var - (m2 * alpha) / (np.sqrt(v2) + a["epsilon"])
    slots = [var.copy(), m.copy(), v.copy()]
    training_ops._adam(slots, a, g, {"use_nesterov": False})
    for got, want in zip(slots, (var2, m2, v2)):
        np.testing.assert_array_equal(got, want)
