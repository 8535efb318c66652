package iolab.batch

import scala.concurrent.{Future, blocking}

/** `thread-per-request`: E3's global ExecutionContext with the sleep inside `blocking {}`.
  * The pool's ForkJoinPool then starts a compensating thread for each blocked one
  * (`ForkJoinPool.managedBlock`), but Scala hands out only `maxExtraThreads` (256) such
  * permits: past cores + 256 calls in flight a `blocking {}` just blocks its thread, and
  * T(n) climbs again as ceil(n/(cores + 256)) x S. `max_threads` sets that ceiling
  * (extra = max_threads - cores), through the real system property. */
final class GlobalBlocking(maxThreads: Option[Int]) extends Runner {
  // Before anything touches the global EC, which reads the property once.
  maxThreads.foreach { m =>
    val cores = Runtime.getRuntime.availableProcessors
    System.setProperty(GlobalEc.MaxExtraProp, math.max(0, m - cores).toString)
  }

  override def gauges: Map[String, () => Long] = Map("peak_pool_threads" -> (() => GlobalEc.poolSize()))

  def run(ctx: Ctx): Outcome = {
    implicit val ec = GlobalEc.ec
    FutureBatch.run(ctx) { i =>
      ctx.tasks.get(i) match {
        case IoTask(_)  => blocking(ctx.runBlocking(i))
        case CpuTask(_) => ctx.runBlocking(i)
      }
      Future.unit
    }
    val p = GlobalEc.parallelism
    Outcome(
      params = Map("max_threads" -> (p + GlobalEc.maxExtra), "ec" -> "global+blocking"),
      counters = Map("parallelism" -> p.toDouble, "max_extra_threads" -> GlobalEc.maxExtra.toDouble)
    )
  }
}
