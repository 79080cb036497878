"""Python's settings and enums against the JVM's table of record, read from the jar through py4j."""

from __future__ import annotations

from typing import Any

import hooks
from pyspark.sql import SparkSession

import ttlstore
from ttlstore import StateTtlConfig, StateVisibility, TimeCharacteristic, UpdateType, settings
from ttlstore._session import spark_options

from conftest import ROOT


def jvm_list(seq: Any) -> list[Any]:
    """A Scala Seq as a Python list."""
    return [seq.apply(i) for i in range(seq.size())]


def jvm_names(seq: Any) -> list[str]:
    return [v.name() for v in jvm_list(seq)]


def test_the_python_options_name_exactly_the_jvm_keys_and_defaults(spark: SparkSession):
    table = jvm_list(spark._jvm.io.ttlstore.config.TtlStoreConfig.all())  # type: ignore[union-attr]
    assert {key: default for key, default, _type in settings.OPTIONS.values()} == {k.key(): k.defaultText() for k in table}


def test_the_test_hooks_are_the_jvms_and_no_option_of_the_users(spark: SparkSession):
    jvm_hooks = {k.key() for k in jvm_list(spark._jvm.io.ttlstore.testkit.ConfTestHooks.all())}  # type: ignore[union-attr]
    assert {hooks.CLOCK_MS, hooks.NATIVE_FILTER_RESOURCE, hooks.LEAK, hooks.ROCKSDB_STATISTICS, hooks.READ_AHEAD} == jvm_hooks
    assert not jvm_hooks & {key for key, _default, _type in settings.OPTIONS.values()}
    assert not any(key in (ROOT / "docs" / "configuration.md").read_text() for key in jvm_hooks)


def test_the_python_enums_hold_exactly_the_names_the_jvm_accepts(spark: SparkSession):
    ttl = spark._jvm.io.ttlstore.ttl  # type: ignore[union-attr]
    config = spark._jvm.io.ttlstore.config  # type: ignore[union-attr]
    assert [m.value for m in UpdateType] == jvm_names(ttl.UpdateType.all())
    assert [m.value for m in StateVisibility] == jvm_names(ttl.StateVisibility.all())
    assert [m.value for m in TimeCharacteristic] == jvm_names(ttl.TimeCharacteristic.all())
    assert list(settings.NATIVE_FILTER_MODES) == jvm_names(config.NativeMode.all())
    assert list(settings.LEGACY_ROW_TIMESTAMPS) == jvm_names(ttl.LegacyRowTimestamp.all())


def test_a_state_ttl_config_sets_exactly_the_settings_the_jvm_scopes(spark: SparkSession):
    table = jvm_list(spark._jvm.io.ttlstore.config.TtlStoreConfig.all())  # type: ignore[union-attr]
    scoped = {k.key() for k in table if k.scoped()} - {settings.PREFIX + "allowTtlOnStreamStreamJoin"}
    config = StateTtlConfig("1h", time_characteristic="EventTime", event_time_column="ts")
    assert set(config.to_spark_conf()) == scoped


def test_python_refuses_exactly_the_numbers_and_names_the_jvm_refuses(spark: SparkSession):
    table = {k.key(): k for k in jvm_list(spark._jvm.io.ttlstore.config.TtlStoreConfig.all())}  # type: ignore[union-attr]

    def jvm_accepts(option: str, text: str) -> bool:
        return not table[settings.OPTIONS[option][0]].parse().apply(text).isEmpty()

    for option, (low, high) in settings.RANGES.items():
        step = 0.01 if isinstance(low, float) else 1
        for value, accepted in ((low, True), (high, True), (low - step, False), (high + step, False)):
            assert jvm_accepts(option, str(value)) is accepted, (option, value)
            # block_cache_size_mb sizes the cache only without bounded memory (else refused as the other mode's).
            mode = {"bounded_memory_usage": False} if option == "block_cache_size_mb" else {}
            try:
                spark_options(**{option: value}, **mode)
                assert accepted, (option, value)
            except ValueError:
                assert not accepted, (option, value)
    for name in settings.SST_COMPRESSIONS:
        assert jvm_accepts("sst_compression", name) and spark_options(sst_compression=name)
    assert not jvm_accepts("sst_compression", "gzip")


def test_the_python_conditions_are_exactly_the_jvm_s_with_their_sqlstates(spark: SparkSession):
    table = spark._jvm.io.ttlstore.errors.ErrorConditions.sqlStates()  # type: ignore[union-attr]
    jvm = {k: table.apply(k) for k in jvm_list(table.keys().toSeq())}
    assert ttlstore.errors.CONDITIONS == jvm
