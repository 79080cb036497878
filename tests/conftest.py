"""Shared fixtures: one local SparkSession with ttlstore's jar, and a runner for streaming rounds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import class_archive
import pytest
from hooks import with_testkit
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql.types import StructType

import ttlstore

ROOT = Path(__file__).resolve().parent.parent
HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
TTL_PROVIDER = ttlstore.settings.PROVIDER_CLASS



@dataclass(frozen=True)
class SparkLine:
    """A row of jvm/spark/lines.tsv: a Spark line, its latest and oldest releases, the Scala of one artifact
    of it, and where that build's Spark jars come from (its pyspark, or Maven Central for a Scala no
    pyspark ships)."""

    line: str
    latest: str
    oldest: str
    scala_version: str
    jars: str

    @property
    def scala(self) -> str:
        """The Scala binary version ("2.13"), the artifact's suffix."""
        return ".".join(self.scala_version.split(".")[:2])

    @property
    def from_pyspark(self) -> bool:
        """Whether the line's pyspark release ships this Scala (else its environment swaps the jars)."""
        return self.jars == "pyspark"


def read_spark_lines(table: Path = ROOT / "jvm" / "spark" / "lines.tsv") -> tuple[SparkLine, ...]:
    rows = [r.split() for r in table.read_text().splitlines() if r.strip() and not r.startswith("#")]
    return tuple(SparkLine(*row) for row in rows)


#: The Spark lines ttlstore is built for; the last is the development line, which runs every test.
SPARK_LINES = read_spark_lines()


def _line_number(line: str) -> int:
    major, minor = line.split(".")
    return int(major) * 100 + int(minor)


#: The line and Scala binary version of the installed pyspark, which this run tests.
RUNNING_LINE, RUNNING_SCALA = ttlstore._lines.installed_line()
#: Whether the line's pyspark releases ship the Scala under test (not so for Spark 3.5 with Scala 2.13,
#: whose environment runs pyspark with Spark's 2.13 jars from Maven Central in place of its own).
PYSPARK_SHIPS_RUNNING_SCALA = any(
    row.line == RUNNING_LINE and row.scala == RUNNING_SCALA and row.from_pyspark for row in SPARK_LINES)


def read_capabilities(line: str) -> dict[str, bool | str]:
    """``jvm/spark/<line>.capabilities``: what a Spark line has that ttlstore's code and tests ask about
    (the build generates ``io.ttlstore.spark.LineCapabilities`` from the same file; what each key means is
    in ``project/SparkLines.scala``). true and false read as booleans, any other value as a word."""
    pairs = [line_text.split("=", 1) for line_text in (ROOT / "jvm" / "spark" / f"{line}.capabilities").read_text().splitlines()
             if line_text.strip() and not line_text.startswith("#")]
    return {k.strip(): {"true": True, "false": False}.get(v.strip(), v.strip()) for k, v in pairs}


#: What the Spark line under test has.
CAPABILITIES = read_capabilities(RUNNING_LINE)
#: What Spark 4.0 brought and Spark 3.5 lacks, so that ttlstore refuses it by name there
#: (test_spark_lines.py): the state data source (``format("statestore")``, which ``read_state`` wraps),
#: checkpoint format v2, and the operator metadata offline repartition reads.
HAS_STATE_READER = bool(CAPABILITIES["stateReader"])
HAS_FORMAT_V2 = bool(CAPABILITIES["checkpointFormatV2"])
HAS_OPERATOR_METADATA = bool(CAPABILITIES["operatorMetadata"])
NOT_IN_SPARK_3_5 = "Spark 3.5 lacks it; test_spark_lines.py asserts the refusal by name"


def adapter_dirs(line: str) -> list[Path]:
    """The adapter directories of jvm/spark/ that `line` compiles ("4.0", "4.1+", "4.0-4.2"), as
    build.sbt (project/SparkLines.scala) picks them."""
    n = _line_number(line)

    def covers(name: str) -> bool:
        if name.endswith("+"):
            return n >= _line_number(name[:-1])
        low, _, high = name.partition("-")
        return _line_number(low) <= n <= _line_number(high or low)

    return sorted(d for d in (ROOT / "jvm" / "spark").iterdir() if d.is_dir() and covers(d.name))


def core_params(values: list | dict, core: list) -> list:
    """``values`` as parameters (a dict's keys name its values), those named in ``core`` marked every_line (the
    per-line run takes only them)."""
    named = values if isinstance(values, dict) else {str(v): v for v in values}
    missing = [c for c in core if c not in named]
    assert not missing, f"core values {missing} are not among {list(named)}"
    return [pytest.param(v, id=n, marks=pytest.mark.every_line if n in core else ()) for n, v in named.items()]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "every_line: the suite's core, which `make test-lines` also runs on every other Spark line")
    config.addinivalue_line(
        "markers", "long: a long fault, soak or speed run (a minute or more): `make chaos` runs these, "
        "`make test` leaves them out")


# Python workers must run this interpreter (the one with pyspark, pandas and ttlstore), also where
# the Makefile exports the development line's for a run on another line.
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
# The suite's JVMs (its session's, each script's, each killed driver's) live for seconds to minutes and
# spend much of their CPU compiling with C2: on C1 alone they take a quarter to a third less CPU, which
# make test spends running six Spark lines side by side on two cores. What the tests assert is
# behaviour, never speed; the runs that measure speed (bench/, test_no_cliff) start their JVMs
# with the full JIT (processes.run_script, which bench/ladder.py runs in). They also map Spark's classes from
# an archive instead of loading and verifying them anew (tests/class_archive.py). They keep what they compiled:
# C1 alone sizes the code cache at 48 MiB, which the development suite's session filled within three minutes; the
# sweeper then evicted the code of the queries' generated classes between rounds for C1 to compile again (the
# differential and migration files: compiler threads 34 CPU-s, sweeper 17, the JVM 218). So the cache may grow to
# 512 MiB (reserved, not resident) and nothing in it is flushed. The flags are conf/quick-jvm.options, which sbt's
# build of every line and ScalaTest's JVM read too (Makefile, build.sbt). A JDK_JAVA_OPTIONS of the caller's is kept.
QUICK_JVM = (ROOT / "conf" / "quick-jvm.options").read_text().strip()
# And they collect with the serial collector (docs/development.md says why, with the figures).
SUITE_JVM = f"{QUICK_JVM} -XX:+UseSerialGC"
if "JDK_JAVA_OPTIONS" not in os.environ:
    os.environ["JDK_JAVA_OPTIONS"] = f"{SUITE_JVM} {class_archive.jvm_options()}".strip()
# Functions defined in test modules are pickled by reference: workers must be able to import them.
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH", "")) if p
)


def local_session_builder(app_name: str) -> SparkSession.Builder:
    """A small local-mode builder: 2 cores, 2 shuffle partitions, quiet logs, no UI, the test hooks (the testkit)."""
    log_conf = f"-Dlog4j2.configurationFile={ROOT / 'conf' / 'log4j2.properties'}"
    return with_testkit(
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.extraJavaOptions", log_conf)
        .config("spark.sql.streaming.stateStore.maintenanceInterval", "1s")
    )


@pytest.fixture(scope="session")
def spark() -> SparkSession:
    session = ttlstore.configure(local_session_builder("ttlstore-tests")).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@dataclass
class StreamRun:
    """What one query emitted, round by round, and the progress of its last batch."""

    outputs: list[list[Row]] = field(default_factory=list)
    last_progress: dict | None = None
    progress: list[dict | None] = field(default_factory=list)
    checkpoint: Path | None = None
    schema: StructType | None = None


def write_round(directory: Path, round_index: int, rows: list[dict]) -> None:
    """Adds one JSON-lines file to a source directory (written aside, then renamed into place)."""
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".round-{round_index:04d}.json.tmp"
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tmp.rename(directory / f"round-{round_index:04d}.json")


def unload_state_stores(spark: SparkSession) -> None:
    """Stops Spark's state store maintenance and unloads every provider of this session's executor.

    A stopped query's providers stay loaded, and Spark's maintenance goes on uploading their
    snapshots in the background: a test that copies, damages or inspects a checkpoint's files
    calls this first, so that nothing writes there behind its back."""
    state = spark._jvm.org.apache.spark.sql.execution.streaming.state  # type: ignore[union-attr]
    if CAPABILITIES["storeStop"] == "stopMaintenanceFirst":
        stop_maintenance_without_lock(state)
    state.StateStore.stop()


def stop_maintenance_without_lock(state: Any) -> None:
    """What Spark 4.3's ``StateStore.stop()`` does first: stops the maintenance task, then waits for the work its
    pool runs, without the providers' lock. Spark 4.0 to 4.2 wait for that work holding the lock, which the work
    may wait for until the pool's shutdown timeouts (6 minutes). Their fields, through Java's reflection: 4.0 has
    no method that does it."""
    module = getattr(getattr(state, "StateStore$"), "MODULE$")
    for name in ("maintenanceTask", "maintenanceThreadPool"):
        member = module.getClass().getDeclaredField(name)
        member.setAccessible(True)
        running = member.get(module)
        if running is not None:
            running.stop()


@contextmanager
def restoring(spark: SparkSession, keys: Iterable[str]) -> Iterator[None]:
    """Puts the session's `keys` back as they were when the block ends: restored, not unset, since unsetting
    the provider would drop the session back to Spark's default."""
    previous = {key: spark.conf.get(key, None) for key in keys}
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def run_rounds(
    spark: SparkSession,
    provider: str,
    workdir: Path,
    schema: StructType,
    build: Callable[..., DataFrame],
    rounds: list[list[dict]] | list[tuple[list[dict], ...]],
    output_mode: str,
    sources: int = 1,
    extra_conf: dict[str, str] | None = None,
    round_conf: Callable[[int], dict[str, str]] | None = None,
    first_round: int = 0,
    checkpoint_uri: str | None = None,
) -> StreamRun:
    """Runs `build(*streams)` once per round, each time restarted from the same checkpoint.

    Each round adds one file per source and runs the query with ``availableNow``, so every round is
    exactly one micro-batch and the query stops and restarts between batches. ``round_conf(i)``
    gives settings for round ``i`` only (such as the test clock), applied before it starts.
    ``first_round`` numbers the input files, to continue an earlier run on the same checkpoint.
    ``checkpoint_uri`` puts the checkpoint elsewhere than ``workdir/checkpoint`` (``hdfs://...``).
    """
    checkpoint = workdir / "checkpoint"
    inputs = [workdir / f"input-{i}" for i in range(sources)]
    run = StreamRun(checkpoint=checkpoint)
    settings = {ttlstore.settings.PROVIDER_CLASS_KEY: provider, **(extra_conf or {})}
    per_round = [round_conf(i) for i in range(len(rounds))] if round_conf else []
    with restoring(spark, {*settings, *(k for c in per_round for k in c)}):
        for key, value in settings.items():
            spark.conf.set(key, value)
        for index, round_rows in enumerate(rounds):
            for key, value in (per_round[index] if per_round else {}).items():
                spark.conf.set(key, value)
            per_source = round_rows if sources > 1 else (round_rows,)
            for directory, rows in zip(inputs, per_source, strict=False):
                write_round(directory, first_round + index, list(rows))
            streams = [
                spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(d))
                for d in inputs
            ]
            emitted: list[Row] = []

            def collect(df: DataFrame, _batch_id: int, emitted: list[Row] = emitted) -> None:
                run.schema = df.schema
                emitted.extend(df.collect())

            query = (
                build(*streams)
                .writeStream.outputMode(output_mode)
                .foreachBatch(collect)
                .option("checkpointLocation", checkpoint_uri or str(checkpoint))
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination()
            run.outputs.append(emitted)
            run.last_progress = query.lastProgress
            run.progress.append(query.lastProgress)
    return run


@pytest.fixture(scope="session")
def shared_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the scenario runs that tests only read are made, once per session (operator_scenarios.shared_run)."""
    return tmp_path_factory.mktemp("shared-runs")


@pytest.fixture(scope="session")
def hdfs_reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The crash loop's four queries on Spark's HDFS provider, without faults: what every crash loop
    (local disk, HDFS, S3) must compute. Run once per session."""
    from chaos import crash_loop
    from crash_scenario import run_without_faults

    work = tmp_path_factory.mktemp("reference")
    results = run_without_faults(work, crash_loop.VARIANTS["TTL off"])
    assert list(work.glob("checkpoints/*/state/*/*/*.delta")), "the reference did not run on the HDFS provider"
    return results


def run_script(python: Path | str, script: Path, *args: object, cwd: Path | None = None) -> dict:
    """Runs a script of tests/lines with `python` (a fresh JVM) and returns what it printed as ``RESULT {json}``."""
    ran = subprocess.run([str(python), str(script), *map(str, args)], capture_output=True, text=True, timeout=600,
                         cwd=cwd)
    results = [x.removeprefix("RESULT ") for x in ran.stdout.splitlines() if x.startswith("RESULT ")]
    assert len(results) == 1, ran.stdout + ran.stderr[-3000:]
    return json.loads(results[0])
