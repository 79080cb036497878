# ttlstore's build. `make` builds every Spark line's jar and installs the Python package (with pyspark
# and the test tools) into .venv; `make demo` builds only what the demo runs on (the development line's
# jar, pyspark and matplotlib) and `make test` everything, so each works as the first command on a
# fresh machine. Everything is fetched by this file through each client's default
# repository: sbt's launcher and the build's dependencies from Maven Central, pyspark and the test
# tools from PyPI. No repository host is written here.

SHELL := /bin/bash
.DEFAULT_GOAL := all

PYTHON ?= python3
CC ?= cc
VENV := .venv
PY := $(VENV)/bin/python
VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' python/ttlstore/_version.py)
# The Spark lines ttlstore is built for (jvm/spark/lines.tsv): one jar a row, compiled against and
# tested on the jars of the line's latest release (those its pyspark ships, or Spark's from Maven
# Central for a Scala no pyspark ships). A row's key is its line ("4.2"), with its Scala where its jars
# come from Maven Central ("3.5_2.13"). The last is the development line: .venv runs it, with the whole
# test suite; every other row runs the suite's core in its own environment.
LINES_TSV := jvm/spark/lines.tsv
ROW_KEY := ($$5 == "maven" ? $$1 "_" substr($$4, 1, 4) : $$1)
SPARK_LINES := $(shell awk '$$1 !~ /^\#/ && NF {print $(ROW_KEY)}' $(LINES_TSV))
DEV_LINE := $(lastword $(SPARK_LINES))
OTHER_LINES := $(filter-out $(DEV_LINE),$(SPARK_LINES))
# The rows whose jars come from Maven (column 5 below), not from a pyspark.
MAVEN_LINES := $(shell awk '$$1 !~ /^\#/ && NF && $$5 == "maven" {print $(ROW_KEY)}' $(LINES_TSV))
DEV_PROJECT := spark$(subst .,,$(DEV_LINE))
# $(call line_field,KEY,N): column N of KEY's row (1 line, 2 latest release, 3 oldest, 4 Scala version,
# 5 where its jars come from: pyspark or maven).
line_field = $(shell awk -v key=$(1) '$$1 !~ /^\#/ && NF && $(ROW_KEY) == key {print $$$(2)}' $(LINES_TSV))
line_jar = jvm/target/jars/ttlstore-spark-$(call line_field,$(1),1)_$(basename $(call line_field,$(1),4))-$(VERSION).jar
JARS := $(foreach l,$(SPARK_LINES),$(call line_jar,$(l)))
# The Maven artifacts io.ttlstore:ttlstore-spark-<line>_<scala> in a Maven repository on disk
# (`make publish-local`).
MAVEN_REPO := jvm/target/maven-repo
# The tests' (make test and its parts) leave the Scaladoc jars out, which take most of a publish and which no
# test reads; make publish-local, make dist and make release write them (each kind of repository has its
# stamp, and a publish starts from an empty repository).
TEST_GOALS := test test-python test-lines test-suites run-suites test-matrix
SCALADOC := $(if $(filter publish-local dist release,$(MAKECMDGOALS)),true,$(if $(filter $(TEST_GOALS),$(MAKECMDGOALS)),false,true))
PUBLISHED := $(MAVEN_REPO)/.published$(if $(filter false,$(SCALADOC)),-without-scaladoc)
SBT_VERSION := $(shell sed -n 's/^sbt.version=//p' project/build.properties)
SBT_LAUNCHER := .build/sbt-launch-$(SBT_VERSION).jar
# sbt from its launcher, resolving only from sbt's predefined `maven-central` (project/repositories).
SBT_JVM := java -Xmx2g -Xss4m -Dsbt.repository.config=project/repositories \
	-Dsbt.override.build.repos=true -Dsbt.server.forcestart=false -Dsbt.supershell=false \
	-Dsbt.color=false -Dsbt.log.noformat=true -Dsbt.ci=true
SBT := $(SBT_JVM) -jar $(SBT_LAUNCHER)
# The same with C1 alone (conf/quick-jvm.options, as the suites' JVMs: tests/conftest.py), for the builds of every
# line's jar:
# their six compiles keep both processors busy, where C2's compiler threads only compete (sbt's package of the six
# jars took 205 CPU-s instead of 376, 131 of them in C2's threads, and 117 s instead of 199). C1 alone sizes the code
# cache at 48 MiB, which that build outgrows (186 MiB used); a full cache fails linking a method handle
# ("InternalError: no such method: MethodHandle.linkToStatic", in scalac). A compile of one project gains
# nothing: C2 runs beside it on the other processor.
QUICK_JVM := $(shell cat conf/quick-jvm.options)
SBT_ALL_LINES := $(SBT_JVM) $(QUICK_JVM) -jar $(SBT_LAUNCHER)
# The jar carries the native filter for linux-x86_64 and linux-aarch64: the other architecture's is
# built with Debian's cross compiler, and its C tests run under Debian's qemu-user.
CROSS_ARCH := $(if $(filter aarch64 arm64,$(shell uname -m)),x86_64,aarch64)
CROSS_CC := $(CROSS_ARCH)-linux-gnu-gcc
CROSS_CXX := $(CROSS_ARCH)-linux-gnu-g++
CROSS_QEMU := qemu-$(CROSS_ARCH)
CROSS_PACKAGES := gcc-$(subst _,-,$(CROSS_ARCH))-linux-gnu g++-$(subst _,-,$(CROSS_ARCH))-linux-gnu qemu-user
# The platforms the jar's native filter is built for (build.sbt reads TTLSTORE_NATIVE_PLATFORMS):
# `make`, `make demo` and the other goals that only run the code build this machine's alone, which
# needs no cross compiler; the tests, publish-local and dist build every platform the jar ships.
HOST_ONLY_GOALS := all install jar dev-jar demo bench bench-sweep bench-ladder bench-reads bench-recovery bench-remote bench-line chaos soak soak-memory soak-container soak-remote docs fmt
NATIVE_PLATFORMS ?= $(or $(TTLSTORE_NATIVE_PLATFORMS),$(if $(filter-out $(HOST_ONLY_GOALS),$(or $(MAKECMDGOALS),all)),all,host))
export TTLSTORE_NATIVE_PLATFORMS := $(NATIVE_PLATFORMS)
# Python workers must run the interpreter that has pyspark and ttlstore installed.
export PYSPARK_PYTHON := $(CURDIR)/$(PY)
export PYSPARK_DRIVER_PYTHON := $(CURDIR)/$(PY)

.PHONY: all hooks venv spark-jars line-venvs toolchain jar dev-jar install publish-local dist test lint fmt test-native test-native-fs test-shipped-vtables test-jvm \
	test-python test-lines test-suites run-suites test-matrix demo pipeline-demo bench bench-sweep bench-ladder bench-reads bench-recovery bench-remote bench-line chaos soak soak-memory soak-container soak-remote docs release site clean

all: install hooks

# git runs .ci/hooks/commit-msg in a checkout of this repository: it warns when a commit message departs from
# docs/development.md's (never refuses one). Outside a git checkout (an unpacked sdist) there is nothing to set.
hooks:
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git config core.hooksPath .ci/hooks; fi

# sbt's launcher by its Maven coordinates, from Maven's default repository (Maven Central); copied
# into a fresh directory first, so that an interrupted fetch never leaves a launcher behind.
$(SBT_LAUNCHER):
	rm -rf .build/launcher.tmp
	mkdir -p .build/launcher.tmp
	mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
		-Dartifact=org.scala-sbt:sbt-launch:$(SBT_VERSION) -DoutputDirectory=.build/launcher.tmp
	mv .build/launcher.tmp/sbt-launch-$(SBT_VERSION).jar $@
	rm -rf .build/launcher.tmp

DEV_PYSPARK = $(call line_field,$(DEV_LINE),2)
$(VENV)/.installed: python/pyproject.toml $(LINES_TSV)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "pyspark==$(DEV_PYSPARK)" -e "python[test]"
	touch $@

# What the demo needs alone: the development line's pyspark and the chart's matplotlib (the test tools
# include both, so a test environment serves the demo too).
$(VENV)/.demo: python/pyproject.toml $(LINES_TSV)
	if [ ! -f $(VENV)/.installed ]; then \
		$(PYTHON) -m venv $(VENV) && $(PY) -m pip install --quiet --upgrade pip && \
		$(PY) -m pip install --quiet "pyspark==$(DEV_PYSPARK)" -e "python[demo]"; fi
	touch $@

venv: $(VENV)/.installed

# Each row's Spark jars into .build/spark-<key>/jars, what build.sbt compiles that row against:
# unpacked from its line's pyspark release (PyPI's sdist carries them in deps/jars, a wheel in
# pyspark/jars), or, for a row whose Scala no pyspark ships, Spark's artifacts from Maven Central
# (jvm/spark/maven-jars.xml).
.build/spark-%/jars/.fetched: $(LINES_TSV) jvm/spark/maven-jars.xml
	rm -rf .build/spark-$*/download .build/spark-$*/jars
	mkdir -p .build/spark-$*/download .build/spark-$*/jars
	if [ "$(call line_field,$*,5)" = maven ]; then \
		mvn -B -q -f jvm/spark/maven-jars.xml org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
			-Dspark.version=$(call line_field,$*,2) -Dscala.binary=$(basename $(call line_field,$*,4)) \
			-DincludeScope=runtime -DoutputDirectory=$(CURDIR)/.build/spark-$*/jars; \
	else \
		$(PYTHON) -m pip download --quiet --no-deps -d .build/spark-$*/download "pyspark==$(call line_field,$*,2)" && \
		cd .build/spark-$*/download && for f in pyspark-*; do case $$f in \
			*.whl) unzip -q -j $$f 'pyspark/jars/*' -d ../jars ;; \
			*.tar.gz) tar -xzf $$f -C ../jars --strip-components=3 --wildcards 'pyspark-*/deps/jars/*' ;; \
			*) echo "unexpected pyspark download: $$f" >&2; exit 1 ;; esac; done; \
	fi
	rm -rf .build/spark-$*/download
	touch $@

# The development line's are those of the pyspark .venv runs (the demo needs no second download of it).
.build/spark-$(DEV_LINE)/jars/.fetched: $(VENV)/.demo
	rm -rf .build/spark-$(DEV_LINE)/jars
	mkdir -p .build/spark-$(DEV_LINE)/jars
	cp $(VENV)/lib/python3*/site-packages/pyspark/jars/*.jar .build/spark-$(DEV_LINE)/jars/
	touch $@

spark-jars: $(foreach l,$(SPARK_LINES),.build/spark-$(l)/jars/.fetched)

# An environment per other line, for its tests: its latest pyspark with ttlstore and the test tools
# the end-to-end tests use. (Each line's oldest release runs tests/test_install.py's wheel test.)
# A line's test environment keeps to tests/lines/pins-<line>.txt where there is one (what its pyspark
# works with).
# A row whose jars come from Maven Central runs its line's pyspark with those jars in place of its own.
line_pins = $(if $(wildcard tests/lines/pins-$(call line_field,$(1),1).txt),-c tests/lines/pins-$(call line_field,$(1),1).txt)
.build/spark-%/venv/.installed: python/pyproject.toml $(LINES_TSV) $(wildcard tests/lines/pins-*.txt) \
		.build/spark-%/jars/.fetched
	rm -rf .build/spark-$*/venv
	$(PYTHON) -m venv .build/spark-$*/venv
	.build/spark-$*/venv/bin/python -m pip install --quiet --upgrade pip
	.build/spark-$*/venv/bin/python -m pip install --quiet "pyspark==$(call line_field,$*,2)" -e "python[lines]" \
		$(call line_pins,$*)
	if [ "$(call line_field,$*,5)" = maven ]; then \
		jars=$$(echo .build/spark-$*/venv/lib/python3*/site-packages/pyspark/jars) && \
		rm -f $$jars/*.jar && cp .build/spark-$*/jars/*.jar $$jars/; fi
	touch $@

# The lines' environments are made side by side (mostly downloads).
LINE_VENVS := $(foreach l,$(OTHER_LINES),.build/spark-$(l)/venv/.installed)
line-venvs:
	@$(MAKE) --no-print-directory -j$(words $(OTHER_LINES)) $(LINE_VENVS)

# Hadoop's HDFS mini cluster, for the tests that keep checkpoints on HDFS: hadoop-client-minicluster
# of the Hadoop version whose client jars pyspark ships, and the JUnit API it needs beside them.
MINICLUSTER := .build/minicluster
MINICLUSTER_EXTRAS := org.junit.jupiter:junit-jupiter-api:5.11.4 org.junit.platform:junit-platform-commons:1.11.4 \
	org.opentest4j:opentest4j:1.3.0 org.apiguardian:apiguardian-api:1.1.2
$(MINICLUSTER)/.fetched: $(VENV)/.installed
	rm -rf $(MINICLUSTER).tmp
	mkdir -p $(MINICLUSTER).tmp
	hadoop=$$(ls $(VENV)/lib/python3*/site-packages/pyspark/jars | sed -n 's/^hadoop-client-api-\(.*\)\.jar$$/\1/p'); \
	for artifact in org.apache.hadoop:hadoop-client-minicluster:$$hadoop $(MINICLUSTER_EXTRAS); do \
		mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
			-Dartifact=$$artifact -DoutputDirectory=$(MINICLUSTER).tmp || exit 1; \
	done
	rm -rf $(MINICLUSTER)
	mv $(MINICLUSTER).tmp $(MINICLUSTER)
	touch $@

# The jars for s3a:// checkpoints (tests/test_object_store.py): hadoop-aws of pyspark's Hadoop
# version and the AWS SDK v2 modules S3A uses (tests/s3a/pom.xml), without what pyspark's jars have.
S3A_JARS := .build/s3a
$(S3A_JARS)/.fetched: $(VENV)/.installed tests/s3a/pom.xml
	rm -rf $(S3A_JARS).tmp
	hadoop=$$(ls $(VENV)/lib/python3*/site-packages/pyspark/jars | sed -n 's/^hadoop-client-api-\(.*\)\.jar$$/\1/p'); \
	mvn -B -q -f tests/s3a/pom.xml org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-Dhadoop.version=$$hadoop -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(S3A_JARS).tmp \
		-DexcludeGroupIds=io.netty,org.slf4j,commons-logging,commons-codec,org.apache.httpcomponents
	rm -rf $(S3A_JARS)
	mv $(S3A_JARS).tmp $(S3A_JARS)
	touch $@

# The Kafka pipeline's parts (tests/test_kafka_pipeline.py, `make pipeline-demo`): a Kafka broker
# (tests/pipeline/broker.xml), and Spark's Kafka connector for the Spark sessions of the development line and of
# Delta's (tests/pipeline/connector.xml) without what pyspark's jars hold. KAFKA_CONNECTOR is the connector's
# release: the newest Spark 4 release of it the registry serves (4.2.0; none of 4.3 yet), which runs on Spark 4.3
# as the test shows.
KAFKA := .build/kafka
KAFKA_CONNECTOR := 4.2.0
KAFKA_SCALA := $(basename $(call line_field,$(DEV_LINE),4))
$(KAFKA)/.fetched: tests/pipeline/broker.xml tests/pipeline/connector.xml
	rm -rf $(KAFKA).tmp
	mvn -B -q -f tests/pipeline/broker.xml org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(KAFKA).tmp/broker
	mvn -B -q -f tests/pipeline/connector.xml org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-Dspark.version=$(KAFKA_CONNECTOR) -Dscala.binary=$(KAFKA_SCALA) -DincludeScope=runtime \
		-DoutputDirectory=$(CURDIR)/$(KAFKA).tmp/connector -DexcludeArtifactIds=spark-tags_$(KAFKA_SCALA) \
		-DexcludeGroupIds=org.scala-lang,org.scala-lang.modules,org.apache.hadoop,org.slf4j,com.google.code.findbugs,at.yawk.lz4,org.xerial.snappy
	rm -rf $(KAFKA)
	mv $(KAFKA).tmp $(KAFKA)
	touch $@

# Delta Lake's jars for the pipeline's Delta table (tests/pipeline/delta.xml, which names the one line its release
# supports; the test runs on that line): Delta's own artifacts, without what pyspark's jars hold.
DELTA := .build/delta
$(DELTA)/.fetched: tests/pipeline/delta.xml
	rm -rf $(DELTA).tmp
	mvn -B -q -f tests/pipeline/delta.xml org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-DincludeScope=runtime -DincludeGroupIds=io.delta -DoutputDirectory=$(CURDIR)/$(DELTA).tmp
	rm -rf $(DELTA)
	mv $(DELTA).tmp $(DELTA)
	touch $@

# Debian's cross compiler and qemu-user (see CROSS_ARCH), for the goals that build every platform:
# installed with apt-get when missing, as root or through a sudo that asks no password; else the
# build stops saying what to install. Only on Linux: elsewhere the jar carries the host's alone.
toolchain:
ifeq ($(shell uname -s)-$(NATIVE_PLATFORMS),Linux-all)
	@if ! { command -v $(CROSS_CC) && command -v $(CROSS_CXX) && command -v $(CROSS_QEMU); } >/dev/null; then \
		if [ "$$(id -u)" = 0 ]; then sudo=; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; else \
			echo "make $(or $(MAKECMDGOALS),all) builds the native libraries for linux-$(CROSS_ARCH) too, with Debian's" \
				"$(CROSS_PACKAGES), which are missing: install them (sudo apt-get install $(CROSS_PACKAGES))" \
				"and run it again. \`make\` and \`make demo\` build this machine's libraries alone and need neither." >&2; \
			exit 1; \
		fi; \
		echo "installing Debian's $(CROSS_PACKAGES)"; \
		$$sudo apt-get update -qq && \
		$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CROSS_PACKAGES) >/dev/null; \
	fi
endif

# The Python package's table of options (python/ttlstore/settings.json), written from the JVM's by the
# sbt run that builds the jars (io.ttlstore.config.PythonSettings).
WRITE_PY_SETTINGS := "$(DEV_PROJECT)/runMain io.ttlstore.config.PythonSettings $(CURDIR)/python/ttlstore/settings.json"

# Every line's jar, each built against its line's Spark jars (see build.sbt); the Python package
# bundles them all and picks the installed pyspark's.
jar: venv spark-jars $(SBT_LAUNCHER) toolchain
	$(SBT_ALL_LINES) package $(WRITE_PY_SETTINGS)
	mkdir -p python/ttlstore/jars
	rm -f python/ttlstore/jars/*.jar
	cp $(JARS) python/ttlstore/jars/

install: jar

# The development line's jar alone, into the Python package: what `make demo` runs on.
dev-jar: $(VENV)/.demo .build/spark-$(DEV_LINE)/jars/.fetched $(SBT_LAUNCHER)
	$(SBT) $(DEV_PROJECT)/package $(WRITE_PY_SETTINGS)
	mkdir -p python/ttlstore/jars
	cp $(call line_jar,$(DEV_LINE)) python/ttlstore/jars/

# Every line's jar, its sources and its Scaladoc with a pom (Spark, rocksdbjni and Scala `provided`)
# in the Maven repository $(MAVEN_REPO): spark-submit --packages
# io.ttlstore:ttlstore-spark-4.3_2.13:$(VERSION) --repositories file://$(CURDIR)/$(MAVEN_REPO).
# Published again only when a jar changed.
publish-local: jar $(PUBLISHED)

# The jars are what `jar` writes: a parallel make builds them before what reads them.
$(JARS): | jar ;

# Published again when a jar or what the poms are made from (build.sbt, the addresses in pyproject.toml)
# changed.
$(PUBLISHED): $(JARS) build.sbt python/pyproject.toml
	rm -rf $(MAVEN_REPO)
	TTLSTORE_SCALADOC=$(SCALADOC) $(SBT_ALL_LINES) publish
	touch $@

# First, side by side, the native tests beside the development environment; then the lint, the other
# environments and downloads beside sbt's build of the jars, which starts once the lines' Spark jars are in
# (pip and Maven wait on the network and on single-threaded unpacking, sbt on the processors; the development
# line's Spark jars are copied from its environment before that step, so that sbt waits on the other lines'
# downloads alone, not on the environments queued before the copy; sbt's goals are named before the lines'
# environments, so that a parallel make gives sbt the first slot that frees once the Spark jars are in; the
# environments are named here, not through line-venvs, whose make of its own would fetch their Spark jars a
# second time beside sbt). Then the suites.
test:
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-native venv hooks
	@$(MAKE) --no-print-directory .build/spark-$(DEV_LINE)/jars/.fetched
	@$(MAKE) --no-print-directory -j3 --output-sync=target SCALADOC=$(SCALADOC) \
		lint spark-jars $(SUITES_NEED) $(LINE_VENVS) test-native-fs
	@$(MAKE) --no-print-directory run-suites

# Python: ruff (lint) and mypy (types) with the settings in python/pyproject.toml.
lint: venv
	$(VENV)/bin/ruff check --config python/pyproject.toml python tests bench conf jvm/src/main/cpp jvm/src/test/cpp
	cd python && ../$(VENV)/bin/mypy --cache-dir ../.build/mypy

# The native filter's decision, with the golden vectors shared with the Scala tests and a bounded
# fuzz run, built with AddressSanitizer and UndefinedBehaviorSanitizer (Debian's gcc ships both).
NATIVE_SRC := jvm/src/main/c
NATIVE_TEST := jvm/target/native/test_ttl_expiry
GOLDEN := jvm/src/test/resources/golden
FUZZ_ITERATIONS ?= 200000

test-native: toolchain
	mkdir -p $(dir $(NATIVE_TEST))
	$(CC) -std=c11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
		-fsanitize=address,undefined -fno-sanitize-recover=all -I$(NATIVE_SRC) \
		-o $(NATIVE_TEST) $(NATIVE_SRC)/ttl_expiry.c jvm/src/test/c/test_ttl_expiry.c
	$(NATIVE_TEST) $(GOLDEN)/expiry-vectors.tsv $(GOLDEN)/timestamped-values.tsv $(FUZZ_ITERATIONS)
ifeq ($(shell uname -s)-$(NATIVE_PLATFORMS),Linux-all)
	# The same tests built for $(CROSS_ARCH), with UndefinedBehaviorSanitizer only (AddressSanitizer's
	# leak checker fails under qemu-user).
	$(CROSS_CC) -std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=undefined -fno-sanitize-recover=all \
		-I$(NATIVE_SRC) \
		-o $(NATIVE_TEST)-$(CROSS_ARCH) $(NATIVE_SRC)/ttl_expiry.c jvm/src/test/c/test_ttl_expiry.c
	$(CROSS_QEMU) -L /usr/$(CROSS_ARCH)-linux-gnu $(NATIVE_TEST)-$(CROSS_ARCH) \
		$(GOLDEN)/expiry-vectors.tsv $(GOLDEN)/timestamped-values.tsv $(FUZZ_ITERATIONS)
endif

# Issue 51's first step, proven before the product relies on it: a RocksDB FileSystem of ttlstore's own
# inside each line's real librocksdbjni, built with the RocksDB headers jvm/spark/rocksdb-headers.tsv
# names (cargo fetches them), its vtables checked slot by slot against the binary's, and a DB written,
# read and compacted through it under AddressSanitizer and UndefinedBehaviorSanitizer
# (jvm/src/test/cpp/prove_file_system.py).
test-native-fs: venv spark-jars
	$(PY) jvm/src/test/cpp/prove_file_system.py

# The lazy file system every line's jar carries, for each platform it carries (the other architecture's too,
# which cannot run here), slot by slot against that platform's librocksdbjni in the line's rocksdbjni
# (jvm/src/test/cpp/shipped_vtables.py); a build for every platform must carry both.
SHIPPED_VTABLES = $(PY) jvm/src/test/cpp/shipped_vtables.py $(if $(filter all,$(NATIVE_PLATFORMS)),--require linux-x86_64 linux-aarch64)
test-shipped-vtables: jar
	$(SHIPPED_VTABLES)

# ScalaTest on the development line, after checking the Scala sources' formatting, every line's
# adapters included (.scalafmt.conf; `make fmt` applies it).
JVM_TESTS = $(SBT) scalafmtCheckAll $(DEV_PROJECT)/test
test-jvm: jar
	$(JVM_TESTS)

fmt: $(SBT_LAUNCHER)
	$(SBT) scalafmtAll

# The development line's suite, without the tests marked long (the long fault, soak and speed runs, which
# `make chaos` runs). (tests/test_line_upgrade.py continues a checkpoint from line to line, with each
# line's environment.)
SUITE := $(PY) -m pytest tests python/ttlstore --doctest-modules -q --durations=25 -m "not long"
test-python: install publish-local line-venvs $(MINICLUSTER)/.fetched $(S3A_JARS)/.fetched $(KAFKA)/.fetched
	$(SUITE)

# What `make test` runs of the suite's core (LINE_TESTS, below) on each other line, its line check: the files
# whose proofs go through what is built or chosen per line (the line's adapters under jvm/spark: its operators,
# state reader, checkpoint formats, maintenance hooks, metrics and provider checks; its rocksdbjni under the native
# libraries; its artifact and pyspark; the Delta table on the one line Delta's release supports). The rest of the
# core (migration, repartition, an executor lost, recovery, read_state) runs the same code over those parts: make
# test runs it on the development line, `make test-lines` on every line.
LINE_CHECK_TESTS := tests/test_spark_lines.py tests/test_install.py tests/test_operators_differential.py \
	tests/test_ttl.py tests/test_native_filter.py tests/test_checkpoint_v2.py tests/test_state_reader.py \
	tests/test_remote_mode.py tests/test_provider_per_query.py tests/test_store_figures.py tests/test_kafka_pipeline.py
# The suite's core (the tests marked every_line, in these files) on each other line's latest pyspark
# (`make test-lines`).
LINE_TESTS := $(LINE_CHECK_TESTS) tests/test_migrate.py tests/test_read_state.py tests/test_repartition.py \
	tests/test_recovery.py tests/test_local_cluster.py
# A row whose Scala no pyspark ships shares its line's adapters and its line's other row runs the whole
# core: it runs what its Scala changes (the jar of its own, its artifact by --packages with a query that
# forgets, jars of the other Scala refused, the native filter on it).
SCALA_VARIANT_TESTS := tests/test_spark_lines.py tests/test_install.py tests/test_native_filter.py
# $(call line_tests,KEY,FILES): the files KEY's row runs of FILES (the core or the line check).
line_tests = $(if $(filter $(1),$(MAVEN_LINES)),$(SCALA_VARIANT_TESTS),$(2))
# For release checks: every test of the suite on every other line's latest pyspark, one line after
# the other, each with the suite's full test tools and the hadoop-aws of its Hadoop version.
.build/spark-%/venv/.matrix: .build/spark-%/venv/.installed
	.build/spark-$*/venv/bin/python -m pip install --quiet "pyspark==$(call line_field,$*,2)" -e "python[test]" \
		$(call line_pins,$*)
	touch $@

.build/spark-%/s3a/.fetched: tests/s3a/pom.xml | spark-jars
	rm -rf .build/spark-$*/s3a.tmp
	hadoop=$$(ls .build/spark-$*/jars | sed -n 's/^hadoop-client-api-\(.*\)\.jar$$/\1/p'); \
	mvn -B -q -f tests/s3a/pom.xml org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-Dhadoop.version=$$hadoop -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/.build/spark-$*/s3a.tmp \
		-DexcludeGroupIds=io.netty,org.slf4j,commons-logging,commons-codec,org.apache.httpcomponents
	rm -rf .build/spark-$*/s3a
	mv .build/spark-$*/s3a.tmp .build/spark-$*/s3a
	touch $@

test-matrix: install publish-local $(MINICLUSTER)/.fetched \
		$(foreach l,$(OTHER_LINES),.build/spark-$(l)/venv/.matrix .build/spark-$(l)/s3a/.fetched)
	@status=0; for line in $(OTHER_LINES); do \
		echo "== Spark $$line: every test, into .build/spark-$$line/matrix.log"; \
		.build/spark-$$line/venv/bin/python -m pytest tests -q --durations=10 -p no:cacheprovider \
			--basetemp=.build/spark-$$line/pytest-matrix > .build/spark-$$line/matrix.log 2>&1 || status=1; \
		tail -n 25 .build/spark-$$line/matrix.log; \
	done; exit $$status

# The other lines' cores (or line checks: $(2)) in the background, LINE_SLOTS at a time, the newest lines (the longest
# runs) first and the Maven rows (three files only) last, each into .build/spark-<line>/tests.log ($(1): a command
# prefix, such as nice), and their logs once all are done (status 1 if any failed). Why two, with the figures:
# docs/development.md, "How the suite keeps its time".
LINE_SLOTS := 2
reverse = $(if $(1),$(call reverse,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))
LINE_ORDER := $(call reverse,$(filter-out $(MAVEN_LINES),$(OTHER_LINES))) $(MAVEN_LINES)
define RUN_LINES
( $(foreach line,$(LINE_ORDER),\
	while [ "$$(jobs -rp | wc -l)" -ge $(LINE_SLOTS) ]; do wait -n; done; \
	( $(1) .build/spark-$(line)/venv/bin/python -m pytest $(call line_tests,$(line),$(2)) -m every_line -q --durations=5 \
		-p no:cacheprovider --basetemp=.build/spark-$(line)/pytest > .build/spark-$(line)/tests.log 2>&1; \
	  echo $$? > .build/spark-$(line)/tests.rc ) &) wait ) & true
endef
define SHOW_LINES
status=0; for line in $(OTHER_LINES); do \
	echo "== Spark $$(.build/spark-$$line/venv/bin/python -c 'import pyspark; print(pyspark.__version__)') ($$line)"; \
	cat .build/spark-$$line/tests.log; [ "$$(cat .build/spark-$$line/tests.rc)" = 0 ] || status=1; \
done
endef

test-lines: install publish-local line-venvs $(KAFKA)/.fetched $(DELTA)/.fetched
	@$(call RUN_LINES,,$(LINE_TESTS)); wait; $(SHOW_LINES); exit $$status

# make test's last part: the development line's suite, with the jars' vtables (test-shipped-vtables) and ScalaTest
# (test-jvm) beside it at the same priority into .build/jvm-tests.log, and the other lines' checks beside both at
# a lower one (LINES_NICE). The machine is CPU-bound throughout, and a second pytest process for the suite cost
# more than it saved. ScalaTest takes some 3 CPU-minutes: at a lower priority it starved until the suite ended and
# then ran alone for 6-7 minutes on one core. Each log is shown once all are done; any failure fails the target.
# (run-suites: the same without building what they need.) Why nice 5, not 19: docs/development.md, "How the suite
# keeps its time".
LINES_NICE := 5
SUITES_NEED := install publish-local $(MINICLUSTER)/.fetched $(S3A_JARS)/.fetched $(KAFKA)/.fetched \
	$(DELTA)/.fetched
test-suites: $(SUITES_NEED) line-venvs
	@$(MAKE) --no-print-directory run-suites
run-suites:
	@$(call RUN_LINES,nice -n $(LINES_NICE),$(LINE_CHECK_TESTS)); \
	( { $(SHIPPED_VTABLES) && $(JVM_TESTS); } > .build/jvm-tests.log 2>&1; \
	  echo $$? > .build/jvm-tests.rc ) & \
	$(SUITE); dev=$$?; \
	wait; echo "== ScalaTest and the shipped vtables"; cat .build/jvm-tests.log; $(SHOW_LINES); \
	[ $$dev = 0 ] && [ "$$(cat .build/jvm-tests.rc)" = 0 ] || status=1; exit $$status

demo: dev-jar
	$(PY) -m ttlstore.demo

# The Kafka pipeline of docs/pipeline.md on this machine, a line per batch (tests/pipeline/demo.py): a Kafka broker,
# events with redeliveries, a TTL'd deduplication on ttlstore into a Parquet table, and what the table holds.
pipeline-demo: venv dev-jar $(KAFKA)/.fetched
	PYTHONPATH=tests $(PY) -m pipeline.demo

# The long fault runs: the suite's tests marked long (a driver killed with its checkpoints on HDFS, a
# flaky object store, bounded soaks, 200 stores in bounded memory, a store outgrowing a tiny block
# cache), many fuzzed files per reader, the damage matrix with its outcomes, and the crash loop
# (hundreds of SIGKILLs); the last three rewrite their sections of docs/reliability.md.
chaos: install $(MINICLUSTER)/.fetched $(S3A_JARS)/.fetched
	$(PY) -m pytest tests -m long -q --durations=12
	mkdir -p bench-output
	TTLSTORE_FUZZ_INPUTS=1000 TTLSTORE_FUZZ_REPORT=$(CURDIR)/bench-output/fuzz.json \
		$(SBT) "$(DEV_PROJECT)/testOnly io.ttlstore.fuzz.ReaderFuzzSuite"
	TTLSTORE_DAMAGE_REPORT=$(CURDIR)/bench-output/damage.json $(PY) -m pytest tests/test_damage_matrix.py -q
	PYTHONPATH=tests $(PY) tests/chaos/report.py
	PYTHONPATH=tests $(PY) tests/chaos/crash_loop.py chaos

# The soak (tests/chaos/soak.py): a TTL'd deduplication and an aggregation with steady churn on local-cluster
# executors for SOAK_BATCHES batches on ttlstore, then SOAK_ANCHOR_BATCHES on Spark's RocksDB provider (the
# same live set through watermarks; its batches take longer, and its figures are there to read against);
# tests/chaos/soak_report.py writes the figures, their drift and bands into docs/reliability.md and
# docs/soak.png, and fails if a figure of ttlstore's grew beyond its band. About 50 minutes and 40 more here.
SOAK_BATCHES ?= 3000
SOAK_ANCHOR_BATCHES ?= 2000
soak: install
	mkdir -p bench-output
	for run in ttlstore:$(SOAK_BATCHES) rocksdb:$(SOAK_ANCHOR_BATCHES); do \
		provider=$${run%%:*}; batches=$${run#*:}; \
		rm -rf .build/soak-$$provider && mkdir -p .build/soak-$$provider && \
		$(PY) tests/chaos/soak.py .build/soak-$$provider --provider $$provider --batches $$batches \
			--out bench-output/soak-$$provider.json > bench-output/soak-$$provider.log 2>&1 || exit 1; \
	done
	PYTHONPATH=tests/chaos $(PY) tests/chaos/soak_report.py

# The memory soak (issue 72; tests/chaos/soak.py --shape, tests/chaos/memory_report.py): each provider with its
# default settings on the soak's two queries (local-cluster) and on a watermarked deduplication in one local[2] JVM
# (140,000 rows in state), SOAK_MEMORY_BATCHES batches each, the JVMs sampled with Native Memory Tracking; then
# ttlstore on the soak's queries whose input falls tenfold after SOAK_MEMORY_DROP_AFTER seconds, to see its memory fall
# back with the live set. The report writes docs/memory.md's measured section and docs/memory.png. About 55 minutes.
SOAK_MEMORY_BATCHES ?= 600
SOAK_MEMORY_DROP_AFTER ?= 300
soak-memory: install
	mkdir -p bench-output
	for run in soak:ttlstore soak:rocksdb watermarked-dedup:ttlstore watermarked-dedup:rocksdb; do \
		shape=$${run%%:*}; provider=$${run#*:}; rate=$$([ $$shape = soak ] && echo 10000 || echo 5600); \
		rm -rf .build/soak-memory && mkdir -p .build/soak-memory && \
		$(PY) tests/chaos/soak.py .build/soak-memory --shape $$shape --provider $$provider --rate $$rate \
			--batches $(SOAK_MEMORY_BATCHES) --out bench-output/soak-memory-$$shape-$$provider.json \
			> bench-output/soak-memory-$$shape-$$provider.log 2>&1 || exit 1; \
	done
	rm -rf .build/soak-memory && mkdir -p .build/soak-memory
	$(PY) tests/chaos/soak.py .build/soak-memory --provider ttlstore --drop-after $(SOAK_MEMORY_DROP_AFTER) \
		--batches $$(($(SOAK_MEMORY_DROP_AFTER) + 150)) --out bench-output/soak-memory-soak-ttlstore-fall-back.json \
		> bench-output/soak-memory-soak-ttlstore-fall-back.log 2>&1
	PYTHONPATH=tests/chaos $(PY) tests/chaos/memory_report.py

# The container soak (issue 72): ttlstore with its defaults for SOAK_CONTAINER_BATCHES batches (an hour) on two
# local-cluster executors of 2 GiB, whose overhead Spark's default makes 384 MiB: the soak's deduplication beside an
# aggregation whose state, several times the budget, is read and rewritten all over as the batches go by, so the cache
# fills again and again. Each executor's highest RSS must stay below the limit YARN or Kubernetes would set its
# container, heap plus overhead; memory_report.py writes it into docs/memory.md and fails if one did not.
SOAK_CONTAINER_BATCHES ?= 3600
soak-container: install
	mkdir -p bench-output
	rm -rf .build/soak-container && mkdir -p .build/soak-container
	$(PY) tests/chaos/soak.py .build/soak-container --shape cache-churn --provider ttlstore --executor-memory 2048 \
		--ttl 300 --batches $(SOAK_CONTAINER_BATCHES) --out bench-output/soak-container-ttlstore.json \
		> bench-output/soak-container-ttlstore.log 2>&1
	PYTHONPATH=tests/chaos $(PY) tests/chaos/memory_report.py --container

# Remote mode's soak: the same two queries on ttlstore in remote mode with SOAK_REMOTE_MB MiB of local SST files per
# executor (the live set's files are some 10 MiB over both executors, so most of them stay in the checkpoint), for
# SOAK_BATCHES batches, into reliability.md's section "Soak in remote mode" and docs/soak-remote.png; it fails if a
# figure drifted out of its band. About 50 minutes here.
SOAK_REMOTE_MB ?= 1
soak-remote: install
	mkdir -p bench-output
	rm -rf .build/soak-ttlstore-remote && mkdir -p .build/soak-ttlstore-remote
	$(PY) tests/chaos/soak.py .build/soak-ttlstore-remote --provider ttlstore --remote-mb $(SOAK_REMOTE_MB) \
		--batches $(SOAK_BATCHES) --out bench-output/soak-ttlstore-remote.json > bench-output/soak-ttlstore-remote.log 2>&1
	PYTHONPATH=tests/chaos $(PY) tests/chaos/soak_report.py --remote

# make bench writes docs/benchmarks.md (the headline: the write path at 2 shuffle partitions against Spark's
# providers, to measure a change by while it is made), make bench-sweep docs/benchmarks-sweep.md (everything
# else, with the store-level benches first), make bench-ladder docs/ladders.md: each page whole from one run,
# with the commit measured.
bench: install
	mkdir -p bench-output
	$(PY) bench/run_bench.py

bench-sweep: install
	mkdir -p bench-output
	$(SBT) -error "$(DEV_PROJECT)/Test/runMain io.ttlstore.bench.TtlOverheadBench bench-output/ttl-overhead.json" \
		"$(DEV_PROJECT)/Test/runMain io.ttlstore.bench.ExpiryCpuBench bench-output/expiry-cpu.json" \
		"$(DEV_PROJECT)/Test/runMain io.ttlstore.bench.DiskChurnBench bench-output/disk-churn.json" \
		"$(DEV_PROJECT)/Test/runMain io.ttlstore.bench.AdoptionBench bench-output/adoption.json"
	$(PY) bench/run_bench.py --sweep

bench-ladder: install
	mkdir -p bench-output
	$(SBT) -error $(DEV_PROJECT)/Test/compile
	$(PY) bench/run_bench.py --workloads ladder

# RocksDB's own figures per steady-state read of ttlstore's stores (bench/read_profile.py): printed, not a page.
bench-reads: install
	$(SBT) -error $(DEV_PROJECT)/Test/compile
	$(PY) bench/read_profile.py

# Recovery against state size (bench/recoveries.py): a restart on a new cluster and a lost executor, with the
# checkpoint on an emulated object store, per provider (and ttlstore opening lazily, lazyLoad.enabled), at 0.7, 3
# and 8 GB of state (and on HDFS, Hadoop's mini cluster, at 0.7 GB), into docs/recovery.md and docs/recovery.png.
# About 100 minutes and 30 GB of free disk.
# BEFORE_JAR=<a ttlstore jar of before issue 50> adds its arm; without it the arm is ttlstore with one download
# at a time.
bench-recovery: install $(MINICLUSTER)/.fetched
	$(SBT) -error $(DEV_PROJECT)/Test/compile
	$(PY) bench/recoveries.py $(if $(BEFORE_JAR),--arms rocksdb-changelog ttlstore-before ttlstore ttlstore-lazy --before-jar $(BEFORE_JAR))

# Remote mode's batches against fully local's, with the read-ahead and without (bench/remote.py): 0.7 GB over 16
# stores restarted from the emulated object store (LATENCY_MS a request), into docs/lazy-load.md and docs/remote.png.
# About 30 minutes.
LATENCY_MS ?= 30
bench-remote: install
	$(SBT) -error $(DEV_PROJECT)/Test/compile
	$(PY) bench/remote.py --latency-ms $(LATENCY_MS)

# The headline workloads (aggregation, dropDuplicates) on another line's pyspark, against that line's
# own providers, into docs/benchmarks-spark-<line>.md (BENCH_LINE=3.5, the oldest, by default).
BENCH_LINE ?= $(firstword $(OTHER_LINES))
bench-line: install line-venvs
	PYSPARK_PYTHON=$(CURDIR)/.build/spark-$(BENCH_LINE)/venv/bin/python \
	PYSPARK_DRIVER_PYTHON=$(CURDIR)/.build/spark-$(BENCH_LINE)/venv/bin/python \
	.build/spark-$(BENCH_LINE)/venv/bin/python bench/run_bench.py --workloads aggregation dropDuplicates \
		--providers rocksdb rocksdb-changelog hdfs ttlstore ttlstore-ttl \
		--repeated rocksdb rocksdb-changelog hdfs ttlstore ttlstore-ttl

docs: venv $(SBT_LAUNCHER)
	$(SBT) -error "$(DEV_PROJECT)/runMain io.ttlstore.config.ConfigDocs" > docs/configuration.md

# The wheel, with the jar it bundles (the build refuses to make one without it), into dist/, and
# the Maven artifact into the Maven repository dist/maven/.
dist: jar publish-local
	rm -rf dist
	$(PY) -m pip wheel --no-deps --no-build-isolation --quiet -w dist ./python
	cp -r $(MAVEN_REPO) dist/maven

# What a maintainer uploads, into dist/release/ (docs/releasing.md), from every line's artifact with its
# Scaladoc (publish-local); nothing leaves the machine:
# - python/: the sdist and the wheel built from it (py3-none-any: the jars inside carry every
#   platform's native library), both passing `twine check --strict`;
# - maven/: a bundle per line (jar, pom, sources and Scaladoc jars, with md5, sha1, sha256 and sha512,
#   and signatures when GPG_KEY names a key), each pom checked for what Maven Central requires
#   (python/_build/release.py);
# - site/: the docs site (`make site`).
release: jar publish-local
	rm -rf dist/release
	$(PY) -m build --no-isolation --sdist --wheel --outdir dist/release/python python
	$(PY) -m twine check --strict dist/release/python/*
	$(PY) python/_build/release.py $(MAVEN_REPO) dist/release/maven $(if $(GPG_KEY),--gpg-key $(GPG_KEY))
	$(MAKE) --no-print-directory site SITE=dist/release/site

# The docs site: docs/ with README.md as its home page, by MkDocs (conf/mkdocs.yml), strict: a link to a
# page or an anchor that is not there fails it.
SITE ?= .build/site
site: venv
	$(VENV)/bin/mkdocs build --strict --quiet -f conf/mkdocs.yml -d $(CURDIR)/$(SITE)

clean:
	rm -rf jvm/target target project/target python/ttlstore/jars/*.jar .build demo-output bench-output dist
