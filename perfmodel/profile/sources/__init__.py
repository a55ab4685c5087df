"""Where an event log's bytes live: local disk, an object store, HDFS or a History Server.

Everything that reads a log path goes through this package, so resolving a log (rolling
directories, attempts, in-progress files), decompressing it under the cap and counting its
damage work the same whatever holds the bytes:

* `uri` parses what the user typed (``s3://``, ``s3a://``, ``gs://``, ``abfs[s]://``,
  ``hdfs://``, ``http(s)://`` History Server addresses) and scrubs it for messages;
* `stores` is the one filesystem layer (local disk, and ``pyarrow.fs`` for the rest):
  stat, incremental listing and streamed reads, with the platforms' errors turned into
  clear `PerfmodelError`\\ s; `RemotePath` lets path resolution walk a remote prefix;
* `history` is the Spark History Server's REST API as a source (an application's zip of
  event-log files, the application listing);
* `follow` reads only the bytes appended to a log that is still being written;
* `locate` is the entry point: what the user typed → a local path or a `RemotePath`.
"""
