"""The warm worker's scan of the native pools, reused by the processes it forks only while they
have loaded no shared library since."""

from __future__ import annotations

import ctypes
import ctypes.util
from pathlib import Path

import numpy as np  # noqa: F401 - loads a BLAS pool to limit
import pytest
from threadpoolctl import threadpool_info

from mlcompare.measure import threads


def _a_library_not_loaded() -> str | None:
    maps = Path("/proc/self/maps").read_text() if Path("/proc/self/maps").exists() else ""
    for name in ("uuid", "lzma", "bz2", "gdbm", "ncursesw", "crypt", "ffi", "readline", "sqlite3", "gmp", "mpfr",
                 "zstd", "lz4", "xxhash", "acl", "attr", "cap", "magic", "yaml", "jpeg", "png16", "xml2", "pcre2-8",
                 "expat", "tinfo", "idn2", "unistring", "tasn1", "p11-kit", "gnutls", "nettle", "hogweed"):
        found = ctypes.util.find_library(name)
        if found and found.split(".so")[0] not in maps:
            return found
    return None


def test_the_loaded_objects_are_counted_and_a_new_library_is_one_more():
    before = threads.loaded_objects()
    if before is None:
        pytest.skip("no dl_iterate_phdr here")
    # the shared objects' files mapped into this process, and the program and the kernel's vDSO
    files = [line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()]
    mapped = {name for name in files if ".so" in name}
    assert len(mapped) <= before <= len(mapped) + 3
    library = _a_library_not_loaded()
    if library is None:
        pytest.skip("every candidate library is loaded already")
    ctypes.CDLL(library)
    assert threads.loaded_objects() > before


def test_the_remembered_pools_are_limited_and_read_until_a_library_is_loaded(monkeypatch):
    monkeypatch.setattr(threads, "_remembered", None)
    assert threads._still_loaded() is None  # nothing remembered: a new scan
    threads.remember_pools()
    if threads._remembered is None:
        pytest.skip("no dl_iterate_phdr here")
    fresh = sorted({f"{i['internal_api']}:{i['num_threads']}" for i in threadpool_info()})
    assert threads.thread_pools() == " ".join(fresh)  # the same answer as a new scan
    assert threads._still_loaded() is threads._remembered[0]
    with threads.limit_pools(1):
        # limited through the remembered controllers, and the new scan agrees
        assert {i["num_threads"] for i in threadpool_info() if i["internal_api"] != "mkl"} <= {1}
        assert all(pool.endswith(":1") for pool in threads.thread_pools().split())
    assert threads.thread_pools() == " ".join(fresh)  # restored after the block
    library = _a_library_not_loaded()
    if library is None:
        pytest.skip("every candidate library is loaded already")
    ctypes.CDLL(library)
    assert threads._still_loaded() is None  # a library loaded since: scanned again


def test_a_forked_process_sets_no_pool_already_of_the_asked_size():
    """In a process forked from the warm worker, setting OpenBLAS's pool starts its threads (which
    then spin, both cores busy): a pool the worker already sized is left alone, one of another
    size is set. Counted as the child's threads."""
    import json
    import os

    threads.remember_pools()
    tasks = lambda: len(os.listdir("/proc/self/task"))  # noqa: E731
    with threads.limit_pools(1):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: one thread, the pools as the parent left them (1)
            seen = {"start": tasks()}
            with threads.limit_pools(1):
                seen["same"] = tasks()
            with threads.limit_pools(2):
                seen["other"] = tasks()
            os.write(write, json.dumps(seen).encode())
            os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        seen = json.loads(os.read(read, 1000))
    if not any(i["internal_api"] == "openblas" for i in threadpool_info()):
        pytest.skip("no OpenBLAS here")
    assert seen["start"] == seen["same"] == 1
    assert seen["other"] > 1  # what the check avoids: a pool set, its threads started
