"""Experiment harvesting: run workloads under a grid of configurations, store what was
measured, and compare predictions with it (docs/experiments.md).

Sits at the end of the data flow: it runs `perfmodel.profile.record.run`, reads profiles with
`perfmodel.dag`, and replays them with `perfmodel.simulate`.
"""
