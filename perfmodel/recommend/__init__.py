"""``perfmodel recommend``: the cheapest VM configuration that meets a deadline.

`api.recommend` is the entry point; `catalog` reads the machine catalog, `layouts` fits
executors onto a VM type, `search` predicts and prices every point through the facade
(with `bounds` to skip hopeless ones), `pareto` keeps the front, `pricing` bills,
`uncertainty` gives the interval a deadline is checked on, `history` calibrates on stored
runs, `tuning` chooses the Spark settings (shuffle partitions or AQE's advisory size) the
search tries. See docs/recommend.md.
"""
