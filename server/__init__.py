"""`python -m server`: one task of a cluster in TensorFlow's layout (tf.distribute.Server)."""
