"""`perfmodel fleet`: many event logs at once, as Parquet tables and a summary.

A History Server directory holds thousands of logs; a platform team asks which applications
waste the most core-hours, which bottleneck keeps coming back and which job got slower. Each
log is analysed alone through the library facade (`perfmodel.load`), so every figure equals
what `perfmodel diagnose --json` and `perfmodel predict` say about that log; the per-log work
runs in a local process pool or as a PySpark job, and both give the same tables.

Layout: `discover` (which logs), `analyse` (one log → rows),
`limits` (the per-log memory cap), `schema` and `store` (Parquet tables, manifest),
`local` and `spark` (engines), `regress` (regressions), `summary` (what the run tells, as
data), `run` (one fleet run end to end), `synth` (generated fleets for tests and
benchmarks). The what-if scenarios are `perfmodel.simulate.whatif` changes, as everywhere.
The package computes; `perfmodel.report` renders its summary (terminal, JSON,
``summary.html``).
"""
