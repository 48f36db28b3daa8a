"""Client API: tf.compat.v1.metrics: streaming metrics whose state lives in local
variables and whose update ops accumulate it. metrics_impl holds the core (mean, accuracy,
the counts, precision/recall, auc); regression the means of errors and distances;
classification the per-class and per-threshold metrics; sensitivity the rates at a
given rate; ranking the metrics over the top k classes."""

from client.metrics.average_precision import (  # noqa: F401
    average_precision_at_k,
    sparse_average_precision_at_k,
)
from client.metrics.classification import (  # noqa: F401
    false_negatives_at_thresholds,
    false_positives_at_thresholds,
    mean_iou,
    mean_per_class_accuracy,
    precision_at_thresholds,
    recall_at_thresholds,
    true_negatives_at_thresholds,
    true_positives_at_thresholds,
)
from client.metrics.metrics_impl import (  # noqa: F401
    accuracy,
    auc,
    false_negatives,
    false_positives,
    mean,
    metric_variable,
    precision,
    recall,
    true_negatives,
    true_positives,
)
from client.metrics.ranking import (  # noqa: F401
    precision_at_k,
    precision_at_top_k,
    recall_at_k,
    recall_at_top_k,
    sparse_precision_at_k,
)
from client.metrics.regression import (  # noqa: F401
    mean_absolute_error,
    mean_cosine_distance,
    mean_relative_error,
    mean_squared_error,
    mean_tensor,
    percentage_below,
    root_mean_squared_error,
)
from client.metrics.sensitivity import (  # noqa: F401
    sensitivity_at_specificity,
    specificity_at_sensitivity,
)
