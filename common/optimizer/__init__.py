"""Graph optimization passes the master runs before placement (TensorFlow's
common_runtime/graph_optimizer passes): common-subexpression elimination (`cse`),
constant folding (`constant_folding`), Identity and dead-node removal (`simplify`).

The entry point that orders them and loops to a fixpoint is `graph_optimizer`.
"""
