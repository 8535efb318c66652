package iolab.batch

import java.util.concurrent.{Executors, ScheduledExecutorService, TimeUnit}

import scala.concurrent.{ExecutionContext, Future, Promise}

/** `loop-async`: E3's non-blocking service, a `Promise` that one scheduler thread completes
  * after S; no thread is held while a call waits, so T(n) stays about S until the scheduler
  * or the pool's callbacks saturate. Callbacks run on a fixed pool of `workers` threads (the
  * article's pool of 8), or on the global EC when `workers` is not given.
  *
  * The article built a new single-thread scheduler per call (a thread per call, shut down
  * after it fired); one shared scheduler is what it meant and what scales. */
final class ScheduledPromise(workers: Option[Int]) extends Runner {
  private val pool = workers.map(w => Executors.newFixedThreadPool(w, Named.daemon("iolab-loop")))
  private val scheduler: ScheduledExecutorService =
    Executors.newSingleThreadScheduledExecutor(Named.daemon("iolab-scheduler"))

  private def callNonBlocking(nanos: Long): Future[Unit] = {
    val p = Promise[Unit]()
    scheduler.schedule((() => { p.success(()); () }): Runnable, nanos, TimeUnit.NANOSECONDS)
    p.future
  }

  def run(ctx: Ctx): Outcome = {
    implicit val ec: ExecutionContext = pool.fold(GlobalEc.ec)(ExecutionContext.fromExecutorService(_))
    FutureBatch.run(ctx) { i =>
      ctx.tasks.get(i) match {
        case IoTask(nanos) =>
          ctx.timings.begin(i)
          callNonBlocking(nanos).map(_ => ctx.timings.end(i))
        case CpuTask(_) =>
          ctx.runBlocking(i); Future.unit
      }
    }
    Outcome(
      params = Map("workers" -> workers.getOrElse(GlobalEc.parallelism), "ec" -> workers.fold("global")(_ => "fixed-thread-pool")),
      counters = Map("timer_threads" -> 1.0)
    )
  }

  override def close(): Unit = { scheduler.shutdownNow(); pool.foreach(_.shutdownNow()) }
}
