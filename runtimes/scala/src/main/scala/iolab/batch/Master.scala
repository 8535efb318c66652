package iolab.batch

import akka.actor.{Actor, ActorRef, Props}

import scala.concurrent.Promise

import Messages._

/** E1's master: starts W workers, sends one task to each, then the next untaken task to
  * whichever worker says `Ready`, and completes `finished` once every task handed out is
  * `Done` (all of them, unless the batch was cancelled). */
final class Master(ctx: Ctx, workers: Int, worker: Worker.Kind, finished: Promise[Unit]) extends Actor {
  private var next = 0
  private var done = 0
  private val outs: Vector[ActorRef] =
    Vector.tabulate(workers)(id => context.actorOf(Props(new Worker(ctx, id, worker, self)), s"worker-$id"))

  override def preStart(): Unit = {
    outs.foreach(handOut)
    checkFinished()
  }

  def receive: Receive = {
    case Ready(w) => handOut(outs(w))
    case Done =>
      done += 1
      checkFinished()
  }

  private def handOut(to: ActorRef): Unit =
    if (next < ctx.len && !ctx.cancelled) {
      to ! Work(next)
      next += 1
    }

  private def checkFinished(): Unit = {
    val target = if (ctx.cancelled) next else ctx.len
    if (done >= target && finished.trySuccess(())) context.stop(self) // and its workers
  }
}
