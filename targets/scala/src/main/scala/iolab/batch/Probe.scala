package iolab.batch

import java.lang.management.ManagementFactory
import java.nio.file.{Files, Paths}
import java.util.concurrent.atomic.AtomicBoolean

import scala.util.Try

/** Process-wide measures over one batch (iolab's `ProcessPeaks`). */
final case class Peaks(
    threads: Long,
    threadsBefore: Long,
    rssMb: Double,
    rssBeforeMb: Double,
    cpuUtilisation: Double,
    /** Highest value each extra gauge reached (e.g. a ForkJoinPool's size). */
    gauges: Map[String, Long]
)

/** Samples `/proc/self/status` (threads, RSS) every 5 ms on its own thread while a batch runs,
  * and the process CPU time around it, as iolab's `measure::Probe`. Extra gauges (a pool's own
  * thread count) are sampled at the same pace. */
final class Probe(gauges: Map[String, () => Long]) {
  private val before = ProcStatus.read()
  // Reset the kernel's peak-RSS mark so VmHWM covers this batch only (when allowed).
  private val hwmReset = Try(Files.writeString(Paths.get("/proc/self/clear_refs"), "5")).isSuccess
  private val cpuBefore = Probe.cpuNs()
  private val wallStart = System.nanoTime()
  private val stop = new AtomicBoolean(false)
  @volatile private var peakThreads, peakRssKb = 0L
  private val peakGauges = new java.util.concurrent.ConcurrentHashMap[String, java.lang.Long]()

  private val sampler = new Thread(() => {
    var done = false
    while (!done) {
      sample()
      done = stop.get()
      if (!done) Thread.sleep(5)
    }
  }, "iolab-probe")
  sampler.setDaemon(true)
  sampler.start()

  private def sample(): Unit = {
    val s = ProcStatus.read()
    peakThreads = math.max(peakThreads, s.threads)
    peakRssKb = math.max(peakRssKb, s.rssKb)
    for ((k, g) <- gauges) peakGauges.merge(k, g(), (a, b) => math.max(a.longValue, b.longValue))
  }

  /** Stop sampling; `threadsHint` is an executor's exact count of threads it had alive at once. */
  def finish(threadsHint: Option[Long]): Peaks = {
    val wall = (System.nanoTime() - wallStart) / 1e9
    val cpu = (Probe.cpuNs() - cpuBefore) / 1e9
    stop.set(true)
    sampler.join(1000)
    sample()
    val after = ProcStatus.read()
    val hwm = if (hwmReset) after.hwmKb else 0L
    val cores = Runtime.getRuntime.availableProcessors.toDouble
    import scala.jdk.CollectionConverters._
    Peaks(
      threads = math.max(peakThreads, threadsHint.fold(0L)(before.threads + _)),
      threadsBefore = before.threads,
      rssMb = math.max(peakRssKb, hwm) / 1024.0,
      rssBeforeMb = before.rssKb / 1024.0,
      cpuUtilisation = if (wall > 0) cpu / (wall * cores) else 0.0,
      gauges = peakGauges.asScala.map { case (k, v) => k -> v.longValue }.toMap
    )
  }
}

object Probe {
  /** User + system CPU time of the whole process so far, ns. */
  def cpuNs(): Long = ManagementFactory.getOperatingSystemMXBean match {
    case os: com.sun.management.OperatingSystemMXBean => os.getProcessCpuTime
    case _                                            => 0L
  }
}

/** The lines of `/proc/self/status` a batch cares about. */
final case class ProcStatus(threads: Long, rssKb: Long, hwmKb: Long)

object ProcStatus {
  def read(): ProcStatus = {
    val lines = Try(Files.readAllLines(Paths.get("/proc/self/status"))).toOption
    val kv = lines.toSeq.flatMap(_.toArray(Array.empty[String]).toSeq).flatMap { l =>
      l.split("\\s+") match {
        case Array(k, v, _*) => v.toLongOption.map(k -> _)
        case _               => None
      }
    }.toMap
    ProcStatus(kv.getOrElse("Threads:", 0L), kv.getOrElse("VmRSS:", 0L), kv.getOrElse("VmHWM:", 0L))
  }
}
