package iolab.batch

import scala.concurrent.duration.Duration
import scala.concurrent.{Await, ExecutionContext, Future}

/** E3's shape: one `Future` per call on an ExecutionContext, then `Future.sequence` awaited.
  * A task not started when the batch is cancelled is skipped. */
object FutureBatch {
  def run(ctx: Ctx)(body: Int => Future[Unit])(implicit ec: ExecutionContext): Unit = {
    val all = (0 until ctx.len).map { i =>
      Future(if (ctx.cancelled) Future.unit else body(i)).flatten
    }
    Await.ready(Future.sequence(all), Duration.Inf)
  }

  /** The calling pool thread does the whole task, blocked while it sleeps. */
  def blocking(ctx: Ctx)(implicit ec: ExecutionContext): Unit =
    run(ctx) { i => ctx.runBlocking(i); Future.unit }
}
