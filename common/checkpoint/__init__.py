"""Checkpoint format: TensorFlow's V2 checkpoint (tensor bundle), byte for byte --
crc32c (masked CRC32C), table (the LevelDB-format index), slices (partitioned variables'
keys and extents), bundle (BundleWriter, BundleReader, merge_bundles)."""
