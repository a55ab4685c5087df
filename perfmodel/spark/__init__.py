"""The Spark front end: event-log events, SQL plans and PySpark work → the generic DAG.

Everything that knows Spark's event names, settings and plan operators lives here; the
model it fills (`perfmodel.dag`) knows no framework.
"""
