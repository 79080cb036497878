package io.ttlstore.compat

import scala.collection.convert.{DecorateAsJava, DecorateAsScala}

/** `asScala` and `asJava` (Scala 2.12's `JavaConverters`), by Scala 2.13's name on every Scala. */
object CollectionConverters extends DecorateAsJava with DecorateAsScala
