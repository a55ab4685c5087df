"""Performance-resource model: what-if configurations (one grammar), runtime laws, replay,
bottlenecks and advice.

Reads only `perfmodel.dag` (profiles, resource vectors); the facade (`perfmodel.analysis`)
calls in. The package imports nothing on its own: the CLI reads the what-if grammar
(`perfmodel.simulate.whatif`) to build its options without loading the replay.
"""
