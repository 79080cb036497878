package io.ttlstore.compat

import scala.collection.convert.{AsJavaExtensions, AsScalaExtensions}

/** `asScala` and `asJava` (Scala 2.13's `scala.jdk.CollectionConverters`), by one name on every Scala. */
object CollectionConverters extends AsJavaExtensions with AsScalaExtensions
