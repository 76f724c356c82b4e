"""What a run leaves on disk: ``results`` (the run folder, args.json, metrics.jsonl, atomic
writes), ``checkpoint`` (adapters, optimizers, RNG states; crash-safe) and ``manifest`` (the
checkpoint's file list with sizes and sha256, fsync helpers) and ``data_fingerprint`` (what the
run's data held, which ``--resume`` checks)."""
