"""Client, training: the optimizers (optimizer.py and one module per family), the global
step, and checkpoints (tf.train.Saver and the `checkpoint` state file); client.train
gathers their public names as tf.train."""
