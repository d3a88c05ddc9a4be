"""Engines: where the traces are scored (this process, a process pool, a Ray cluster), with the same rows."""
