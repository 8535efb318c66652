package iolab.batch

import akka.actor.{ActorSystem, Props}
import com.typesafe.config.ConfigFactory

import scala.concurrent.duration.Duration
import scala.concurrent.{Await, Promise}
import scala.jdk.CollectionConverters._

/** E1 on Akka: a master and W worker actors on the actor system's default dispatcher, which
  * also runs the `shared-pool` workers' futures. The dispatcher is a fork-join pool sized as
  * Akka sizes it: ceil(cores x parallelism-factor) clamped to [parallelism-min, parallelism-max].
  * The factor is Akka 2.3's 3.0, the article's (Akka 2.6 ships 1.0; min 8 and max 64 are
  * unchanged), so D = 8 on 2 cores, 24 on the article's 8 threads. `shared_pool` in the spec
  * pins D (min = max = D). */
final class ActorBatch(m: MasterSpec) extends Runner {
  private val cores = Runtime.getRuntime.availableProcessors
  private val (factor, pMin, pMax) = m.sharedPool.fold((ActorBatch.Factor, ActorBatch.Min, ActorBatch.Max))(d => (ActorBatch.Factor, d, d))
  /** Akka's ThreadPoolConfig.scaledPoolSize. */
  val dispatcherThreads: Int = math.min(math.max(math.ceil(cores * factor).toInt, pMin), pMax)
  private var system: ActorSystem = _

  override def prepare(): Unit = {
    val fj = "akka.actor.default-dispatcher.fork-join-executor"
    val conf = ConfigFactory.parseMap(Map[String, AnyRef](
      s"$fj.parallelism-factor" -> java.lang.Double.valueOf(factor),
      s"$fj.parallelism-min" -> Integer.valueOf(pMin),
      s"$fj.parallelism-max" -> Integer.valueOf(pMax),
      // Logs go to stderr anyway (Main keeps stdout for the document); keep them few.
      "akka.loglevel" -> "WARNING",
      "akka.stdout-loglevel" -> "WARNING",
      "akka.log-dead-letters" -> "off",
      "akka.log-dead-letters-during-shutdown" -> "off",
      // Main owns SIGTERM: it cancels the hand-out and prints what was measured.
      "akka.coordinated-shutdown.run-by-jvm-shutdown-hook" -> "off",
      "akka.jvm-shutdown-hooks" -> "off"
    ).asJava).withFallback(ConfigFactory.load())
    system = ActorSystem("iolab", conf)
  }

  def run(ctx: Ctx): Outcome = {
    val finished = Promise[Unit]()
    system.actorOf(Props(new Master(ctx, m.workers, Worker.kind(m.worker), finished)))
    Await.ready(finished.future, Duration.Inf)
    val seen = Thread.getAllStackTraces.keySet.asScala.count(_.getName.contains("akka.actor.default-dispatcher"))
    val kindParam = m.worker match {
      case "shared-pool" => Map("shared_pool" -> dispatcherThreads)
      case "timer"       => Map("loop_threads" -> dispatcherThreads)
      case _             => Map.empty[String, Any]
    }
    Outcome(
      params = Map[String, Any](
        "dispatcher" -> "fork-join",
        "dispatcher_threads" -> dispatcherThreads,
        "parallelism_factor" -> factor,
        "parallelism_min" -> pMin,
        "parallelism_max" -> pMax
      ) ++ kindParam,
      counters = Map(
        "dispatcher_threads" -> dispatcherThreads.toDouble,
        "dispatcher_threads_seen" -> seen.toDouble,
        "scheduler_tick_ms" -> system.settings.config.getDuration("akka.scheduler.tick-duration").toMillis.toDouble
      )
    )
  }

  override def close(): Unit = if (system != null) Await.ready(system.terminate(), Duration(10, "s"))
}

object ActorBatch {
  val Factor = 3.0
  val Min = 8
  val Max = 64
}
