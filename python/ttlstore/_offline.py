"""The plain JVM the offline tools run in (``ttlstore inspect``, ``ttlstore repartition``).

It runs a ``main`` of ttlstore's jar with the jars of the installed pyspark on the class path and
no Spark session, found through ``JAVA_HOME`` or ``java`` on the ``PATH``. The ``main`` answers in
JSON lines on stdout, ending with ``{"error": ...}`` when it cannot go on.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class OfflineJvmError(Exception):
    """The offline JVM could not start, or ended with an error (the message names it and the fix)."""


def command(main: str, args: list[str], hadoop_conf: Mapping[str, str] | None = None,
            jars: Sequence[str | os.PathLike[str]] = (), brief: bool = False) -> list[str]:
    """The java command that runs ``io.ttlstore.<main>`` with ``args`` and ``--conf`` per Hadoop setting.

    ``jars`` go on the class path too: the file system's own jars where pyspark has none, such as
    hadoop-aws and the AWS SDK for ``s3a://`` (a directory stands for every jar in it). ``brief``: the
    work is short, so the JVM compiles with its quick compiler only (C1), about a second less to start."""
    import pyspark

    from ttlstore._jars import jar_path

    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise OfflineJvmError("no Java found to read the checkpoint with: set JAVA_HOME, or put java on the PATH "
                              "(the one Spark runs on).")
    log_conf = Path(__file__).resolve().parent / "log4j2-cli.properties"
    extra = [str(Path(j) / "*") if Path(j).is_dir() else os.fspath(j) for j in jars]
    missing = [j for j in extra if not j.endswith("*") and not Path(j).is_file()]
    if missing:
        raise OfflineJvmError(f"the jar {missing[0]} does not exist: pass existing jar files or directories.")
    classpath = os.pathsep.join([str(Path(pyspark.__file__).resolve().parent / "jars" / "*"), jar_path(), *extra])
    quick = ["-XX:TieredStopAtLevel=1"] if brief else []
    line = [java, "-Xss4m", *quick, f"-Dlog4j2.configurationFile={log_conf}", "-cp", classpath, f"io.ttlstore.{main}",
            *args]
    for key, value in (hadoop_conf or {}).items():
        line += ["--conf", f"{key}={value}"]
    return line


@contextmanager
def json_lines(line: list[str]) -> Iterator[Iterator[dict[str, Any]]]:
    """Runs ``line`` and yields its JSON lines; an ``error`` line, or an exit without any line,
    raises :class:`OfflineJvmError`."""
    with subprocess.Popen(line, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as jvm:
        assert jvm.stdout is not None

        def lines() -> Iterator[dict[str, Any]]:
            seen = False
            for text in jvm.stdout:  # type: ignore[union-attr]
                if not text.startswith("{"):
                    continue
                seen = True
                parsed = json.loads(text)
                if "error" in parsed:
                    raise OfflineJvmError(parsed["error"])
                yield parsed
            if not seen:
                jvm.wait()
                stderr = jvm.stderr.read() if jvm.stderr else ""
                raise OfflineJvmError(f"the JVM ended without an answer: {stderr.strip()[-2000:]}")

        yield lines()
