"""A small dask.distributed application for the end-to-end tests: a LocalCluster of two
single-threaded workers, an array computation and a delayed Python loop, two compute()
calls. Unchanged by recording; run as `python small_app.py`."""

import time

import dask
import dask.array as da
from dask.distributed import Client, LocalCluster


def count_odd(n: int) -> int:
    return sum(1 for i in range(n) if i % 2)


def main() -> None:
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, memory_limit="1GiB", dashboard_address=None
        ) as cluster,
        Client(cluster),
    ):
        began = time.time()
        x = da.random.default_rng(0).random((2000, 2000), chunks=(500, 500))
        print(float((x + x.T).mean().compute()))
        parts = [dask.delayed(count_odd)(2_000_000 + i) for i in range(8)]
        print(dask.delayed(sum)(parts).compute())
        print(f"elapsed {time.time() - began:.3f}")


if __name__ == "__main__":
    main()
