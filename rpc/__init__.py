"""Transport: how flowrt's processes talk. Channels and their options (channels), the
worker cache (one channel and stub per task), the cached call pool, the same-host Unix
socket RPC (local_rpc) and shared memory (shm), the chunked tensor stream and the
RecvTensor client, status <-> OpError conversion (status, the one place each way), the
gRPC method paths and stubs with our extension methods (service_paths), and the master's
calls to workers (worker_calls, with the batched step cleanup). master/, worker/ and
client/ import this package; it imports common/ and protos/ only."""
