"""Random number engines shared by the random kernels: TensorFlow's Philox-4x32-10
(philox) and its conversions from bits to samples (distributions). Pure numpy, no I/O."""
