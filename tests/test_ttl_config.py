"""The Python TTL surface: StateTtlConfig, configure(ttl=..., operators=...), apply_ttl."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pyspark.sql import SparkSession

import ttlstore
from ttlstore import StateTtlConfig, StateVisibility, TimeCharacteristic, UpdateType
from ttlstore._session import spark_options
from ttlstore._ttl import duration_ms

from conftest import ROOT

P = ttlstore.settings.PREFIX


def test_a_config_accepts_timedelta_strings_and_milliseconds_alike():
    assert {StateTtlConfig(t).ttl_ms for t in (timedelta(minutes=10), "10 minutes", "600s", 600_000)} == {600_000}


def test_a_config_takes_enum_names_as_strings_and_is_frozen():
    config = StateTtlConfig("1h", update_type="OnReadAndWrite", state_visibility="return_expired_if_not_cleaned_up")
    assert config.update_type is UpdateType.ON_READ_AND_WRITE
    assert config.state_visibility is StateVisibility.RETURN_EXPIRED_IF_NOT_CLEANED_UP
    with pytest.raises(AttributeError):
        config.ttl = "2h"  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"ttl": "-5s"}, "cannot read '-5s' as a TTL"),
        ({"ttl": timedelta(seconds=-1)}, "non-negative"),
        ({"ttl": "soon"}, "10 minutes"),
        ({"ttl": "1h", "update_type": "OnRead"}, "update_type must be one of OnCreateAndWrite, OnReadAndWrite"),
        ({"ttl": "1h", "time_characteristic": TimeCharacteristic.EVENT_TIME}, "event time needs event_time_column"),
        ({"ttl": "1h", "event_time_column": "window."}, "field path"),
    ],
)
def test_bad_values_fail_when_the_config_is_made(kwargs, message):
    with pytest.raises(ValueError, match=message):
        StateTtlConfig(**kwargs)


def test_a_config_becomes_global_operator_or_store_settings():
    config = StateTtlConfig("10 minutes", time_characteristic="EventTime", event_time_column="window.end")
    assert config.to_spark_conf() == {
        P + "ttl": "600000",
        P + "updateType": "OnCreateAndWrite",
        P + "stateVisibility": "NeverReturnExpired",
        P + "timeCharacteristic": "EventTime",
        P + "eventTimeColumn": "window.end",
    }
    assert P + "operator.3.ttl" in config.to_spark_conf(operator_id=3)
    assert P + "operator.3.store.left-keyToNumValues.ttl" in config.to_spark_conf(3, "left-keyToNumValues")
    with pytest.raises(ValueError, match="store_name needs operator_id"):
        config.to_spark_conf(store_name="default")


def test_configure_sets_ttl_options_per_operator_and_the_session_extension():
    builder = ttlstore.configure(
        SparkSession.Builder(),
        ttl=timedelta(hours=1),
        update_type=UpdateType.ON_READ_AND_WRITE,
        operators={2: StateTtlConfig("5 minutes"), (4, "default"): StateTtlConfig(0)},
    )
    options = builder._options
    assert options[P + "ttl"] == "3600000" and options[P + "updateType"] == "OnReadAndWrite"
    assert options[P + "operator.2.ttl"] == "300000" and options[P + "operator.4.store.default.ttl"] == "0"
    assert options["spark.sql.extensions"] == "io.ttlstore.TtlStoreExtensions"


def test_configure_keeps_other_session_extensions():
    builder = SparkSession.Builder().config("spark.sql.extensions", "com.example.Ext")
    builder = ttlstore.configure(ttlstore.configure(builder))
    assert builder._options["spark.sql.extensions"] == "com.example.Ext,io.ttlstore.TtlStoreExtensions"


def test_configure_rejects_bad_ttl_options_naming_them():
    with pytest.raises(ValueError, match="as a TTL"):
        ttlstore.configure(SparkSession.Builder(), ttl="forever")
    with pytest.raises(TypeError, match="'ttl'.*timedelta or str or int"):
        ttlstore.configure(SparkSession.Builder(), ttl=1.5)
    with pytest.raises(ValueError, match="state_visibility must be one of"):
        ttlstore.configure(SparkSession.Builder(), state_visibility="Sometimes")
    with pytest.raises(TypeError, match="operators"):
        ttlstore.configure(SparkSession.Builder(), operators={"dedup": StateTtlConfig("1h")})  # type: ignore[dict-item]


def test_the_native_filter_options_take_python_values():
    options = spark_options(native_filter=False, periodic_compaction=timedelta(hours=2),
                                     compact_expired_share=0.25)
    assert options == {
        P + "nativeFilter.enabled": "false",
        P + "nativeFilter.periodicCompaction": "7200000",
        P + "nativeFilter.compactExpiredShare": "0.25",
    }
    assert spark_options(native_filter="auto") == {P + "nativeFilter.enabled": "auto"}
    with pytest.raises(ValueError, match="native_filter.*True, False or one of auto, true, false, got 'sometimes'"):
        spark_options(native_filter="sometimes")


def test_apply_ttl_sets_a_running_sessions_conf(spark: SparkSession):
    key = P + "operator.9.ttl"
    try:
        ttlstore.apply_ttl(spark, StateTtlConfig(timedelta(seconds=30)), operator_id=9)
        assert spark.conf.get(key) == "30000"
    finally:
        for suffix in ("ttl", "updateType", "stateVisibility", "timeCharacteristic"):
            spark.conf.unset(P + "operator.9." + suffix)


def test_python_and_jvm_durations_agree_on_the_golden_examples(spark: SparkSession):
    """tests and ScalaTest read the same table; here Python's parser and the JVM's (through py4j)
    must both give what it says."""
    durations = spark._jvm.io.ttlstore.ttl.Durations  # type: ignore[union-attr]
    golden = ROOT / "jvm" / "src" / "test" / "resources" / "golden" / "durations.tsv"
    cases = [line.split("\t") for line in golden.read_text().splitlines() if not line.startswith("#")]
    assert len(cases) > 20
    for text, expected in cases:
        jvm = durations.parseMillis(text)
        if expected == "refused":
            with pytest.raises(ValueError, match="cannot read"):
                duration_ms(text)
            assert jvm.isEmpty(), text
        else:
            assert duration_ms(text) == int(expected), text
            assert jvm.get() == int(expected), text
