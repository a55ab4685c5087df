"""The framework-independent hierarchical DAG execution profile and its Spark front end."""
