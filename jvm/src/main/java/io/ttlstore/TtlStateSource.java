package io.ttlstore;

import java.util.Map;

import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import io.ttlstore.reader.TimedStateSource;
import io.ttlstore.spark.BuiltFor;

/**
 * {@code spark.read.format("ttlstore_state")}: ttlstore's state reader ({@link TimedStateSource}).
 *
 * <p>Spark instantiates every registered data source to find one by name, in every session that has
 * this jar: a source that fails to load breaks every lookup ({@code spark.readStream.json} included).
 * So the registered class is plain Java, loadable in any Spark and on either Scala, and does nothing
 * but answer its name until a read comes; a read checks the jar's line first ({@link BuiltFor}).
 *
 * <p>One exception: a jar of another line in a session that asks for ttlstore's provider, which could
 * not run there anyway. A streaming query looks its source up before Spark instantiates the provider,
 * whose classes a Spark of another line may not even load (4.x's jar in Spark 3.5 fails with {@code
 * NoClassDefFoundError}), so the lookup is where the mismatch is named first
 * ({@link BuiltFor#refuseIfAskedFor}), in sessions without ttlstore's extension, which would have
 * refused the session itself.
 */
public final class TtlStateSource implements TableProvider, DataSourceRegister {

  public TtlStateSource() {
    BuiltFor.refuseIfAskedFor();
  }

  @Override
  public String shortName() {
    return "ttlstore_state";
  }

  private static TableProvider reader() {
    BuiltFor.check();
    return new TimedStateSource();
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return reader().inferSchema(options);
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return reader().getTable(schema, partitioning, properties);
  }

  @Override
  public boolean supportsExternalMetadata() {
    return false;
  }
}
