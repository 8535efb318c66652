package iolab.batch

import akka.actor.{Actor, ActorRef}
import akka.pattern.after

import scala.concurrent.duration._
import scala.concurrent.{ExecutionContext, Future}

import Messages._

/** E1's worker actor. A CPU task is always computed in place (holding a dispatcher thread, as
  * an actor does). An IO task depends on the kind:
  *  - `blocking`: sleeps in place, then `Done`, then `Ready`;
  *  - `shared-pool`: the article's "non-blocking" worker: the sleep goes into a `Future` on the
  *    actor system's own dispatcher and `Ready` is sent at once; `Done` when the sleep ends.
  *    Still a blocked thread: one of the same dispatcher the actors run on;
  *  - `timer`: the corrected one: Akka's scheduler completes a future after the sleep's time
  *    (`akka.pattern.after`), no thread is held meanwhile. */
final class Worker(ctx: Ctx, id: Int, kind: Worker.Kind, master: ActorRef) extends Actor {
  private implicit val dispatcher: ExecutionContext = context.dispatcher

  def receive: Receive = { case Work(i) =>
    (ctx.tasks.get(i), kind) match {
      case (IoTask(_), Worker.SharedPool) =>
        Future { ctx.runBlocking(i); master ! Done }
      case (IoTask(nanos), Worker.Timer) =>
        ctx.timings.begin(i)
        after(nanos.nanos, context.system.scheduler)(Future.unit).foreach { _ =>
          ctx.timings.end(i)
          master ! Done
        }
      case _ =>
        ctx.runBlocking(i)
        master ! Done
    }
    master ! Ready(id)
  }
}

object Worker {
  sealed trait Kind
  case object Blocking extends Kind
  case object SharedPool extends Kind
  case object Timer extends Kind

  def kind(name: String): Kind = name match {
    case "blocking"    => Blocking
    case "shared-pool" => SharedPool
    case "timer"       => Timer
  }
}
