package iolab.batch

import java.util.concurrent.ForkJoinPool

import scala.concurrent.ExecutionContext

/** Scala's global ExecutionContext: a ForkJoinPool of `cores` threads
  * (`scala.concurrent.context.numThreads`, default x1) that `blocking {}` may grow by at most
  * `scala.concurrent.context.maxExtraThreads` (default 256) compensating threads. Its sizes are
  * read once, at first use: set the properties before touching [[ec]]. */
object GlobalEc {
  val MaxExtraProp = "scala.concurrent.context.maxExtraThreads"
  val DefaultMaxExtra = 256

  def ec: ExecutionContext = ExecutionContext.global

  /** The pool behind it (in 2.13 the global EC is a ForkJoinPool itself). */
  def pool: Option[ForkJoinPool] = ExecutionContext.global match {
    case p: ForkJoinPool => Some(p)
    case _               => None
  }

  def parallelism: Int = pool.fold(Runtime.getRuntime.availableProcessors)(_.getParallelism)

  def maxExtra: Int = Option(System.getProperty(MaxExtraProp)).flatMap(_.toIntOption).getOrElse(DefaultMaxExtra)

  def poolSize(): Long = pool.fold(0L)(_.getPoolSize.toLong)
}
