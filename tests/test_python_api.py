"""The Python surface: configure(), jar_path(), the version, and the settings table."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import hooks
import pytest
from pyspark.sql import SparkSession

import ttlstore

from conftest import ROOT, RUNNING_LINE, RUNNING_SCALA, SPARK_LINES


def test_the_version_matches_the_bundled_jar_of_the_installed_spark_line():
    import pyspark

    jar = Path(ttlstore.jar_path())
    line = ttlstore.spark_line(pyspark.__version__)
    assert jar.name == f"ttlstore-spark-{line}_{RUNNING_SCALA}-{ttlstore.__version__}.jar"
    with zipfile.ZipFile(jar) as z:
        built_for = dict(row.split("=", 1) for row in z.read("io/ttlstore/build.properties").decode().split())
        assert built_for["spark.line"] == line and built_for["spark.compiledAgainst"] == pyspark.__version__
        manifest = z.read("META-INF/MANIFEST.MF").decode()
        assert f"Implementation-Version: {ttlstore.__version__}" in manifest
        assert "io/ttlstore/TtlStateStoreProvider.class" in z.namelist()
        services = z.read("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister").decode()
        assert services.split() == ["io.ttlstore.TtlStateSource"]
        assert not [n for n in z.namelist() if n.startswith("org/rocksdb/")], "rocksdbjni must never be bundled"


def test_the_jar_that_ships_holds_nothing_of_the_test_module_which_has_a_jar_of_its_own():
    with zipfile.ZipFile(ttlstore.jar_path()) as z:
        service = "META-INF/services/io.ttlstore.config.TestHookSource"
        assert [n for n in z.namelist() if n.startswith("io/ttlstore/testkit") or n == service] == []
    with zipfile.ZipFile(hooks.testkit_jar()) as z:
        assert "META-INF/services/io.ttlstore.config.TestHookSource" in z.namelist()
        files = [n for n in z.namelist() if not n.endswith("/")]
        assert all(n.startswith(("io/ttlstore/testkit/", "META-INF/")) for n in files), files


def test_the_jar_carries_its_native_libraries_for_linux_x86_64_and_aarch64_each_built_for_its_machine():
    """What `make test`, `make publish-local` and `make dist` build (`make` and `make demo` build the
    host's alone, which needs no cross compiler)."""
    machines = {"linux-x86_64": 62, "linux-aarch64": 183}  # ELF e_machine: EM_X86_64, EM_AARCH64
    with zipfile.ZipFile(ttlstore.jar_path()) as z:
        built = dict(row.split("=", 1) for row in z.read("io/ttlstore/build.properties").decode().split())
        assert built["native.platforms"].split(",") == list(machines), (
            f"the jar carries the native filter for {built['native.platforms']} alone: `make` builds the host's, "
            "`make test` every platform")
        for platform, machine in machines.items():
            library = z.read(f"io/ttlstore/native/{platform}/libttlstore_filter.so")
            assert library[:4] == b"\x7fELF" and library[4] == 2, f"{platform}: a 64-bit ELF"
            assert int.from_bytes(library[18:20], "little") == machine, platform
            assert b"Java_io_ttlstore_store_nativelib_NativeTtlFilterLib_bind" in library, platform
            assert b"Java_io_ttlstore_store_nativelib_NativeReadsLib_get" in library, platform
            assert b"Java_io_ttlstore_store_lazyfs_LazyFileSystem_makeRocksdbjniGlobal" in library, platform
            lazy = z.read(f"io/ttlstore/native/{platform}/libttlstore_lazy_fs.so")
            assert lazy[:4] == b"\x7fELF" and lazy[4] == 2, f"{platform}: a 64-bit ELF"
            assert int.from_bytes(lazy[18:20], "little") == machine, platform
            assert b"Java_io_ttlstore_store_lazyfs_LazyFileSystem_create" in lazy, platform


def test_the_jar_carries_the_license():
    with zipfile.ZipFile(ttlstore.jar_path()) as z:
        assert z.read("META-INF/LICENSE").decode() == (ROOT / "LICENSE").read_text()
    assert "Apache License" in (ROOT / "LICENSE").read_text()


def test_ttlstore_jar_prints_the_bundled_jar_for_spark_submit(capsys):
    from ttlstore.cli import main

    assert main(["jar"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == ttlstore.jar_path() and Path(printed).is_file()


def test_ttlstore_jar_coordinates_prints_the_maven_coordinates_for_packages(capsys):
    import pyspark

    from ttlstore.cli import main

    assert main(["jar", "--coordinates"]) == 0
    expected = f"io.ttlstore:ttlstore-spark-{ttlstore.spark_line(pyspark.__version__)}_{RUNNING_SCALA}:{ttlstore.__version__}"
    assert capsys.readouterr().out.strip() == expected
    assert ttlstore.MAVEN_COORDINATES == ttlstore.maven_coordinates() == expected


def test_configure_takes_a_jar_by_path_and_refuses_a_path_with_no_file(tmp_path: Path):
    builder = ttlstore.configure(SparkSession.Builder(), jar=ttlstore.jar_path())
    assert builder._options["spark.jars"] == ttlstore.jar_path()
    assert "spark.jars.packages" not in builder._options
    coordinates = re.escape(f"io.ttlstore:ttlstore-spark-{RUNNING_LINE}_{RUNNING_SCALA}:{ttlstore.__version__}")
    with pytest.raises(FileNotFoundError, match=rf"no jar at .*missing\.jar.*ttlstore jar.*{coordinates}"):
        ttlstore.configure(SparkSession.Builder(), jar=str(tmp_path / "missing.jar"))


def test_the_installed_command_prints_the_same_path():
    import shutil
    import subprocess
    import sys

    command = shutil.which("ttlstore", path=str(Path(sys.executable).parent))
    assert command, "the ttlstore console script is installed beside the interpreter"
    out = subprocess.run([command, "jar"], capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == ttlstore.jar_path()


def test_configure_sets_the_provider_and_adds_the_jar():
    builder = ttlstore.configure(SparkSession.builder)
    assert builder._options[ttlstore.settings.PROVIDER_CLASS_KEY] == "io.ttlstore.TtlStateStoreProvider"
    assert builder._options["spark.jars"] == ttlstore.jar_path()


def test_configure_keeps_jars_already_set_and_does_not_add_its_own_twice():
    builder = SparkSession.Builder().config("spark.jars", "/opt/a.jar, /opt/b.jar")
    builder = ttlstore.configure(ttlstore.configure(builder))
    assert builder._options["spark.jars"].split(",") == ["/opt/a.jar", "/opt/b.jar", ttlstore.jar_path()]


def test_configure_keeps_master_and_app_name_and_returns_the_same_builder():
    builder = SparkSession.Builder().master("local[3]").appName("mine")
    assert ttlstore.configure(builder) is builder
    assert builder._options["spark.master"] == "local[3]"
    assert builder._options["spark.app.name"] == "mine"


def test_configure_translates_options_into_spark_settings():
    builder = ttlstore.configure(SparkSession.Builder(), max_memory_usage_mb=128, sst_compression="zstd")
    assert builder._options["spark.sql.streaming.stateStore.ttlstore.maxMemoryUsageMB"] == "128"
    assert builder._options["spark.sql.streaming.stateStore.ttlstore.sstCompression"] == "zstd"


def test_over_spark_connect_configure_sets_the_provider_and_options_and_leaves_jars_to_the_server():
    builder = ttlstore.configure(SparkSession.Builder().remote("sc://localhost:15002"), ttl="1 hour")
    assert builder._options[ttlstore.settings.PROVIDER_CLASS_KEY] == ttlstore.settings.PROVIDER_CLASS
    assert builder._options[ttlstore.settings.PREFIX + "ttl"] == "3600000"
    assert "spark.jars" not in builder._options and ttlstore.settings.EXTENSIONS_KEY not in builder._options
    with pytest.raises(ValueError, match="jar=.*Spark Connect.*ttlstore connect-server"):
        ttlstore.configure(SparkSession.Builder().remote("sc://localhost:15002"), jar=ttlstore.jar_path())


def test_ttlstore_connect_server_prints_the_server_command_with_the_jar_extension_and_provider(capsys):
    from ttlstore.cli import main

    assert main(["connect-server", "--conf", "spark.master=local[2]"]) == 0
    command = capsys.readouterr().out.strip()
    assert command.split()[0].endswith("sbin/start-connect-server.sh")
    for part in ("--jars " + ttlstore.jar_path(), "spark.sql.extensions=io.ttlstore.TtlStoreExtensions",
                 "spark.sql.streaming.stateStore.providerClass=io.ttlstore.TtlStateStoreProvider", "spark.master=local[2]"):
        assert part in command
    assert main(["connect-server", "--conf", "nokey"]) == 2


def test_ttlstore_s_python_errors_answer_as_pyspark_s_do():
    error = ttlstore.MigrationError("[NOT_A_CHECKPOINT] /x is not a checkpoint.")
    assert isinstance(error, ttlstore.TtlStoreError)
    assert (error.getCondition(), error.getErrorClass(), error.getSqlState()) == ("NOT_A_CHECKPOINT",) * 2 + ("55019",)
    assert ttlstore.condition_of(error) == "NOT_A_CHECKPOINT"
    assert ttlstore.condition_of(RuntimeError("[STREAM_FAILED] Query failed: [NOT_SPARK_S] nothing")) is None


def test_configure_rejects_what_is_not_a_builder():
    with pytest.raises(TypeError, match="SparkSession.Builder"):
        ttlstore.configure("local[*]")  # type: ignore[arg-type]


def test_configure_rejects_out_of_range_values_when_called_not_when_a_query_starts():
    with pytest.raises(ValueError, match="'block_cache_size_mb'.*from 0 to 1048576, got -1"):
        ttlstore.configure(SparkSession.Builder(), bounded_memory_usage=False, block_cache_size_mb=-1)
    with pytest.raises(ValueError, match="'sst_compression'.*one of lz4, zstd, snappy, none, got 'gzip'"):
        ttlstore.configure(SparkSession.Builder(), sst_compression="gzip")
    with pytest.raises(ValueError, match="'compact_expired_share'.*from 0.0 to 1.0"):
        ttlstore.configure(SparkSession.Builder(), compact_expired_share=1.5)


def test_configure_after_a_session_without_the_jar_started_says_what_to_do(tmp_path: Path):
    import subprocess
    import sys

    script = """
import ttlstore
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
try:
    ttlstore.configure(SparkSession.builder)
except RuntimeError as e:
    print("REFUSED", e)
spark.stop()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert "REFUSED A SparkSession is already running" in done.stdout, done.stdout + done.stderr[-2000:]
    assert "spark.stop()" in done.stdout and "restart the kernel" in done.stdout


def test_configure_refuses_a_size_of_the_memory_mode_that_is_off():
    with pytest.raises(ValueError, match="'block_cache_size_mb' applies only with bounded_memory_usage=False.*max_memory_usage_mb"):
        ttlstore.configure(SparkSession.Builder(), block_cache_size_mb=128)
    with pytest.raises(ValueError, match="'max_memory_usage_mb' applies only with bounded memory"):
        ttlstore.configure(SparkSession.Builder(), bounded_memory_usage=False, max_memory_usage_mb=128)
    unbounded = ttlstore.configure(SparkSession.Builder(), bounded_memory_usage=False, block_cache_size_mb=128)
    assert unbounded._options["spark.sql.streaming.stateStore.ttlstore.blockCacheSizeMB"] == "128"


def test_configure_rejects_unknown_options_and_wrong_types_naming_them():
    with pytest.raises(TypeError, match="unknown option 'block_cache'; did you mean 'block_cache_size_mb'"):
        ttlstore.configure(SparkSession.Builder(), block_cache=1)
    with pytest.raises(TypeError, match="'block_cache_size_mb'.*must be a int.*'big'"):
        ttlstore.configure(SparkSession.Builder(), block_cache_size_mb="big")
    with pytest.raises(TypeError, match="must be a int"):
        ttlstore.configure(SparkSession.Builder(), write_buffer_size_mb=True)


def test_the_python_options_name_exactly_the_documented_keys_and_defaults():
    text = (ROOT / "docs" / "configuration.md").read_text()
    ours = text[: text.index("## Spark's own state store settings")]  # the rest: Spark's settings, not ttlstore's
    documented = dict(re.findall(r"^\| `([^`]+)` \| `([^`]*)` \|", ours, flags=re.M))
    assert documented, "docs/configuration.md lists no keys"
    assert {key: default for key, default, _type in ttlstore.settings.OPTIONS.values()} == documented


def run_dedup_with(spark: SparkSession, tmp_path: Path, key: str, value: str, error: str) -> None:
    """Starts a one-batch dedup with `key` set to `value`; the query must fail with `error`."""
    spark.conf.set(key, value)
    try:
        (tmp_path / "in").mkdir()
        (tmp_path / "in" / "a.json").write_text('{"k": "a"}\n')
        query = (
            spark.readStream.schema("k string").json(str(tmp_path / "in"))
            .dropDuplicates(["k"])
            .writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(availableNow=True)
            .start()
        )
        with pytest.raises(Exception, match=error) as failure:
            query.awaitTermination()
        # Caught by condition, as Spark's own errors are: ttlstore's condition is among the failure's causes.
        assert ttlstore.condition_of(failure.value) == error.split(".*")[0]
    finally:
        spark.conf.unset(key)


def test_an_invalid_setting_fails_the_query_naming_the_key(spark: SparkSession, tmp_path: Path):
    assert spark.conf.get(ttlstore.settings.PROVIDER_CLASS_KEY) == ttlstore.settings.PROVIDER_CLASS
    run_dedup_with(spark, tmp_path, "spark.sql.streaming.stateStore.ttlstore.writeBufferSizeMB", "0",
                   r"INVALID_CONFIG.*writeBufferSizeMB")


@pytest.mark.parametrize("key", ["spark.sql.streaming.stateStore.ttl", "spark.sql.streaming.stateStore.operator.0.ttl"])
def test_a_ttlstore_setting_without_its_prefix_fails_the_query_instead_of_being_ignored(
    spark: SparkSession, tmp_path: Path, key: str
):
    run_dedup_with(spark, tmp_path, key, "1 hour", r"SETTING_WITHOUT_TTLSTORE_PREFIX.*stateStore\.ttlstore\.")


def _build_wheel(source: Path, out: Path):  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        capture_output=True, text=True,
    )


def test_the_built_wheel_bundles_the_jar_its_license_and_complete_metadata(tmp_path: Path):
    import subprocess
    import sys

    built = _build_wheel(ROOT / "python", tmp_path)
    assert built.returncode == 0, built.stderr
    assert "ttlstore.jars" not in built.stderr, "setuptools warns of package data outside a declared package"
    (wheel,) = tmp_path.glob("ttlstore-*.whl")
    assert wheel.name == f"ttlstore-{ttlstore.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        (entry_points,) = [n for n in names if n.endswith("entry_points.txt")]
        assert "ttlstore = ttlstore.cli:main" in z.read(entry_points).decode()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = z.read(metadata).decode()
    jars = {f"ttlstore/jars/ttlstore-spark-{line.line}_{line.scala}-{ttlstore.__version__}.jar" for line in SPARK_LINES}
    assert jars <= set(names), "the wheel bundles every line's jar"
    assert {"ttlstore/py.typed", "ttlstore/log4j2-cli.properties"} <= set(names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: Apache-2.0" in meta and "Author: ttlstore contributors" in meta
    assert "Classifier: Programming Language :: Python :: 3" in meta and "Project-URL: Documentation" in meta
    twine = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel)], capture_output=True, text=True)
    assert twine.returncode == 0 and "PASSED" in twine.stdout, twine.stdout + twine.stderr


def test_a_wheel_is_never_built_without_the_jar_it_bundles(tmp_path: Path):
    import shutil

    source = tmp_path / "python"
    shutil.copytree(ROOT / "python", source, ignore=shutil.ignore_patterns("*.jar", "build", "*.egg-info", "__pycache__"))
    built = _build_wheel(source, tmp_path / "out")
    assert built.returncode != 0 and not list((tmp_path / "out").glob("*.whl"))
    assert f"ttlstore-spark-{SPARK_LINES[0].line}_{SPARK_LINES[0].scala}-{ttlstore.__version__}.jar, is missing" in built.stderr + built.stdout
    assert "make jar" in built.stderr + built.stdout
