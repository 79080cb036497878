package io.ttlstore.spark

/**
 * A base class whose constructor runs [[BuiltFor.check]]: a class extending it first and Spark's
 * traits after is refused by name in a Spark of another line, before any of those traits
 * initialize (which is where a jar of another line would fail first, with a `NoSuchMethodError`).
 */
abstract class LineChecked {
  BuiltFor.check()
}
