"""The Dask front end: a ``dask.distributed`` run recorded by ``perfmodel record`` → the
framework-independent DAG (`perfmodel.dag.model`), analysed by the same facade as Spark.

`perfmodel.dask.plugin` is what runs inside Dask while recording (loaded by file path);
`perfmodel.dask.stream` reads what it wrote, `perfmodel.dask.build` turns it into the DAG,
and `perfmodel.dask.frontend`, the one entry point the facade calls, ties stack samples and
lock probes to the tasks on their threads (`perfmodel.dag.thread_spans`). docs/dask.md.
"""
