"""Client API: tf.compat. `import client.compat.v1 as tf` gives the `client` module itself,
as TF1 programs import `tensorflow.compat.v1`: this client is the v1 API."""

import sys as _sys

v1 = _sys.modules["client"]
_sys.modules[__name__ + ".v1"] = v1
