package io.ttlstore.spark;

/**
 * A base class whose constructor runs {@link BuiltFor#check}: a class extending it first and Spark's
 * traits after is refused by name in a Spark of another line, before any of those traits initialize
 * (which is where a jar of another line would fail first, with a {@code NoSuchMethodError}). Java, so
 * that it runs on either Scala.
 */
public abstract class LineChecked {
  protected LineChecked() {
    BuiltFor.check();
  }
}
