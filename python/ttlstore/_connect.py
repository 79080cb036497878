"""Spark Connect: ttlstore on the server, a thin client anywhere.

Over Spark Connect (``SparkSession.builder.remote("sc://host:15002")``) the state stores run in the
server's JVM: the server is started with ttlstore's jar and session extension
(:func:`connect_server_command`, ``ttlstore connect-server``), and the client sets only SQL settings
(the provider and TTL), which :func:`ttlstore.configure` and :func:`ttlstore.apply_ttl` do as they do
for a classic session. What needs a JVM on the client's side runs in a plain one
(:func:`ttlstore.inspect_checkpoint` reads the checkpoint as ``ttlstore inspect`` does).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ttlstore.settings import EXTENSIONS_CLASS, EXTENSIONS_KEY, PROVIDER_CLASS, PROVIDER_CLASS_KEY

_REMOTE_KEY = "spark.remote"


def is_connect_session(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect client session (it has no JVM of its own)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def is_remote_builder(builder: Any) -> bool:
    """Whether ``builder`` will create a Spark Connect session: ``.remote(...)`` was called on it, or
    PySpark is in Connect mode (``SPARK_REMOTE`` or ``SPARK_CONNECT_MODE_ENABLED``)."""
    options = getattr(builder, "_options", {}) or {}
    return _REMOTE_KEY in options or bool(os.environ.get("SPARK_REMOTE")) or \
        os.environ.get("SPARK_CONNECT_MODE_ENABLED") == "1"


def hadoop_settings(spark: Any) -> dict[str, str]:
    """The Hadoop settings (``spark.hadoop.*``) a Connect session's configuration shows, to read a
    checkpoint from the client's side as the server would."""
    try:
        confs = dict(spark.conf.getAll)
    except Exception:  # a server or client without getAll
        return {}
    return {k: str(v) for k, v in confs.items() if k.startswith("spark.hadoop.")}


def connect_server_command(jar: str | None = None, **settings: str) -> list[str]:
    """The command that starts a Spark Connect server of the installed pyspark with ttlstore:
    ``start-connect-server.sh`` with ttlstore's jar (``jar``, default: the bundled one), its session
    extension and its provider, and ``--conf`` per further Spark setting in ``settings`` (by key).

    >>> import ttlstore
    >>> cmd = ttlstore.connect_server_command()
    >>> cmd[0].endswith("start-connect-server.sh"), cmd[1]
    (True, '--jars')
    """
    from pyspark.find_spark_home import _find_spark_home

    from ttlstore._jars import jar_path

    script = Path(_find_spark_home()) / "sbin" / "start-connect-server.sh"
    confs = {EXTENSIONS_KEY: EXTENSIONS_CLASS, PROVIDER_CLASS_KEY: PROVIDER_CLASS, **settings}
    command = [str(script), "--jars", jar or jar_path()]
    for key, value in confs.items():
        command += ["--conf", f"{key}={value}"]
    return command
