package iolab.batch

import java.util.concurrent.{Executors, ThreadPoolExecutor}

import scala.concurrent.ExecutionContext

/** `pool` with `threads` = N: E3's `ExecutionContext.fromExecutorService(Executors.newFixedThreadPool(N))`;
  * a call holds one of the N threads for its whole sleep, so T(n) = ceil(n/N) x S. */
final class FixedPool(threads: Int) extends Runner {
  private val pool = Executors.newFixedThreadPool(threads, Named.daemon("iolab-pool"))
  override def gauges: Map[String, () => Long] =
    Map("peak_pool_threads" -> (() => pool.asInstanceOf[ThreadPoolExecutor].getPoolSize.toLong))

  def run(ctx: Ctx): Outcome = {
    FutureBatch.blocking(ctx)(ExecutionContext.fromExecutorService(pool))
    Outcome(
      params = Map("threads" -> threads, "ec" -> "fixed-thread-pool"),
      counters = Map("threads_started" -> pool.asInstanceOf[ThreadPoolExecutor].getLargestPoolSize.toDouble),
      threadsHint = Some(threads.toLong)
    )
  }

  override def close(): Unit = pool.shutdownNow()
}
