"""Client, training: tf.train.SyncReplicasOptimizer — synchronous data parallelism over
between-graph replicas, as tensorflow.compat.v1 builds it (same node names).

Each replica applies its gradients to one conditional accumulator per variable (on the
variable's device, shared by name across the replicas' graphs) tagged with its local step;
gradients older than the accumulator's step are dropped. The chief's queue runner takes
the average once `replicas_to_aggregate` gradients are in, applies it with the wrapped
optimizer, and puts `tokens_per_step` copies of the new global step on the shared token
queue; a replica's train op waits for a token, which becomes its next local step."""

from __future__ import annotations

import logging
from typing import Any

from client.framework import ops as _ops
from client.framework.indexed_slices import IndexedSlices
from client.ops import array_ops, control_flow_ops, data_flow_ops, state_ops
from client.ops import variables as _variables
from client.ops.queues import FIFOQueue
from client.training.monitored_session import report_uninitialized_variables
from client.training.optimizer import Optimizer
from client.training.queue_runner import QueueRunner
from client.training.session_run_hook import SessionRunHook

_LOG = logging.getLogger("tensorflow")


class SyncReplicasOptimizer(Optimizer):
    def __init__(
        self,
        opt: Optimizer,
        replicas_to_aggregate: int,
        total_num_replicas: int | None = None,
        variable_averages: Any = None,
        variables_to_average: Any = None,
        use_locking: bool = False,
        name: str = "sync_replicas",
    ) -> None:
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        _LOG.info(
            "SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
            replicas_to_aggregate,
            total_num_replicas,
        )
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._gradients_applied = False
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._global_step: Any = None
        self._sync_token_queue: Any = None
        self._chief_queue_runner: Any = None
        self._accumulator_list: list[tuple[Any, str]] = []

    def compute_gradients(self, *args: Any, **kwargs: Any) -> Any:
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars: Any, global_step: Any = None,
                        name: str | None = None) -> Any:  # fmt: skip
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        local_anchor = control_flow_ops.no_op()
        with _ops.colocate_with(local_anchor):
            self._local_step = _variables.Variable(
                initial_value=0,
                trainable=False,
                collections=[_ops.GraphKeys.LOCAL_VARIABLES],
                dtype=global_step.dtype.base_dtype,
                name="sync_rep_local_step",
            )
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = report_uninitialized_variables(_variables.global_variables())
        with _ops.name_scope(None, self._name):
            train_ops, aggregated = self._accumulate(grads_and_vars)
            var_list = [v for _, v in grads_and_vars]
            with _ops.device(global_step.device), _ops.name_scope(""):
                update_op = self._opt.apply_gradients(zip(aggregated, var_list), global_step)
                self._sync_token_queue = FIFOQueue(
                    -1,
                    global_step.dtype.base_dtype,
                    shapes=(),
                    name="sync_token_q",
                    shared_name="sync_token_q",
                )
                with _ops.control_dependencies(train_ops):
                    token = self._sync_token_queue.dequeue()
                train_op = state_ops.assign(self._local_step, token)
                with _ops.control_dependencies([update_op]):
                    tokens = array_ops.fill([self._tokens_per_step], global_step)
                    sync_op = self._sync_token_queue.enqueue_many((tokens,))
                if self._variable_averages is not None:
                    with _ops.control_dependencies([sync_op]), _ops.name_scope(""):
                        sync_op = self._variable_averages.apply(self._variables_to_average)
                self._chief_queue_runner = QueueRunner(self._sync_token_queue, [sync_op])
            for accum, dev in self._accumulator_list:
                with _ops.device(dev):
                    chief_init_ops.append(accum.set_global_step(global_step, name="SetGlobalStep"))
            self.chief_init_op = control_flow_ops.group(*chief_init_ops)
            self._gradients_applied = True
            return train_op

    def _accumulate(self, grads_and_vars: list) -> tuple[list, list]:
        """One accumulator per variable on its device: the apply ops and the averages."""
        train_ops: list = []
        aggregated: list = []
        for grad, var in grads_and_vars:
            with _ops.device(var.device):
                if grad is None:
                    aggregated.append(None)
                    continue
                if isinstance(grad, IndexedSlices):
                    sparse = data_flow_ops.SparseConditionalAccumulator(
                        grad.dtype, shape=(), shared_name=var.name + "/grad_accum"
                    )
                    train_ops.append(
                        sparse.apply_indexed_slices_grad(grad, local_step=self._local_step)
                    )
                    aggregated.append(sparse.take_indexed_slices_grad(self._replicas_to_aggregate))
                    self._accumulator_list.append((sparse, var.device))
                    continue
                dense = data_flow_ops.ConditionalAccumulator(
                    grad.dtype, shape=var.get_shape(), shared_name=var.name + "/grad_accum"
                )
                train_ops.append(dense.apply_grad(grad, local_step=self._local_step))
                aggregated.append(dense.take_grad(self._replicas_to_aggregate))
                self._accumulator_list.append((dense, var.device))
        return train_ops, aggregated

    def _resource_apply_dense(self, grad: Any, var: Any) -> Any:
        raise NotImplementedError("SyncReplicasOptimizer applies through its wrapped optimizer")

    def get_chief_queue_runner(self) -> QueueRunner:
        if self._gradients_applied is False:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_slot(self, *args: Any, **kwargs: Any) -> Any:
        return self._opt.get_slot(*args, **kwargs)

    def variables(self) -> Any:
        return self._opt.variables()

    def get_slot_names(self, *args: Any, **kwargs: Any) -> Any:
        return self._opt.get_slot_names(*args, **kwargs)

    def get_init_tokens_op(self, num_tokens: int = -1) -> Any:
        if self._gradients_applied is False:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(
                f"Too few tokens to finish the first step: {num_tokens} (given) vs "
                f"{tokens_needed} (needed)"
            )
        if num_tokens > 0:
            with _ops.device(self._global_step.device), _ops.name_scope(""):
                tokens = array_ops.fill([num_tokens], self._global_step)
                return self._sync_token_queue.enqueue_many((tokens,))
        return control_flow_ops.no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief: bool, num_tokens: int = -1) -> SessionRunHook:
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    """Runs the local init (the chief's: local step and accumulators' step) once the
    global variables are ready, puts the first tokens on the queue and starts the chief's
    queue runner."""

    def __init__(self, sync_optimizer: SyncReplicasOptimizer, is_chief: bool,
                 num_tokens: int) -> None:  # fmt: skip
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self) -> None:
        opt = self._sync_optimizer
        if opt._gradients_applied is False:
            raise ValueError(
                "SyncReplicasOptimizer.apply_gradient should be called before using the hook."
            )
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        self._q_runner: QueueRunner | None = None
        self._init_tokens_op: Any = None
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op

    def after_create_session(self, session: Any, coord: Any) -> None:
        not_ready = session.run(self._ready_for_local_init_op)
        if len(not_ready):
            names = ", ".join(n.decode() if isinstance(n, bytes) else str(n) for n in not_ready)
            raise RuntimeError(
                "Init operations did not make model ready for SyncReplicasOptimizer "
                f"local_init. Init op: {self._local_init_op.name}, error: Variables not "
                f"initialized: {names}"
            )
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
