"""Client, training: the tf.train namespace. The optimizers live one family to a module in
client.training (optimizer.py is the base), the global step in client.training.training_util,
checkpoints in client.training.saver and checkpoint_management; this module gathers their
public names under TensorFlow's."""

from __future__ import annotations

from client.framework import ops as _ops
from client.summary import summary_iterator  # noqa: F401
from client.training.adadelta import AdadeltaOptimizer  # noqa: F401
from client.training.adagrad import AdagradOptimizer  # noqa: F401
from client.training.adagrad_da import AdagradDAOptimizer  # noqa: F401
from client.training.adam import AdamOptimizer  # noqa: F401
from client.training.basic_session_run_hooks import (  # noqa: F401
    CheckpointSaverHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    SecondOrStepTimer,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
)
from client.training.checkpoint_management import (  # noqa: F401
    checkpoint_exists,
    generate_checkpoint_state_proto,
    get_checkpoint_state,
    latest_checkpoint,
    update_checkpoint_state,
)
from client.training.checkpoint_utils import (  # noqa: F401
    NewCheckpointReader,
    list_variables,
    load_checkpoint,
    load_variable,
)
from client.training.coordinator import Coordinator  # noqa: F401
from client.training.device_setter import replica_device_setter  # noqa: F401
from client.training.ftrl import FtrlOptimizer  # noqa: F401
from client.training.gradient_descent import GradientDescentOptimizer  # noqa: F401
from client.training.input import (  # noqa: F401
    batch,
    batch_join,
    input_producer,
    limit_epochs,
    range_input_producer,
    shuffle_batch,
    shuffle_batch_join,
    slice_input_producer,
    string_input_producer,
)
from client.training.momentum import MomentumOptimizer  # noqa: F401
from client.training.monitored_session import (  # noqa: F401
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    Scaffold,
    SingularMonitoredSession,
    WorkerSessionCreator,
)
from client.training.optimizer import Optimizer  # noqa: F401
from client.training.proximal import (  # noqa: F401
    ProximalAdagradOptimizer,
    ProximalGradientDescentOptimizer,
)
from client.training.queue_runner import (  # noqa: F401
    QueueRunner,
    add_queue_runner,
    start_queue_runners,
)
from client.training.rmsprop import RMSPropOptimizer  # noqa: F401
from client.training.saver import (  # noqa: F401
    Saver,
    SaverDef,
    export_meta_graph,
    import_meta_graph,
)
from client.training.server_lib import ClusterSpec, Server  # noqa: F401
from client.training.session_run_hook import (  # noqa: F401
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from client.training.supervisor import Supervisor  # noqa: F401
from client.training.sync_replicas_optimizer import SyncReplicasOptimizer  # noqa: F401
from client.training.training_util import (  # noqa: F401
    create_global_step,
    get_global_step,
    get_or_create_global_step,
    global_step,
)
from protos.checkpoint_state_pb2 import CheckpointState  # noqa: F401
from protos.example_pb2 import Example, SequenceExample  # noqa: F401
from protos.feature_pb2 import (  # noqa: F401  (tf.train.Feature and friends)
    BytesList,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
)

GraphKeys = _ops.GraphKeys

from client.training.learning_rate_decay import (  # noqa: E402, F401
    cosine_decay,
    cosine_decay_restarts,
    exponential_decay,
    inverse_time_decay,
    linear_cosine_decay,
    natural_exp_decay,
    piecewise_constant,
    piecewise_constant_decay,
    polynomial_decay,
)
from client.training.moving_averages import ExponentialMovingAverage  # noqa: E402, F401
