package iolab.batch

import java.lang.management.ManagementFactory
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.{Files, Paths, StandardOpenOption}
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

/** Reads `/proc/self/status` through one open channel into one buffer, re-read from offset 0
  * (procfs regenerates the text), and scans its bytes: a sample every 5 ms for minutes
  * allocates next to nothing, so the probe does not grow the heap (and the RSS) it measures. */
final class ProcReader {
  private val ch = Try(FileChannel.open(Paths.get("/proc/self/status"), StandardOpenOption.READ)).toOption
  private val buf = ByteBuffer.allocate(16384)

  def read(): ProcStatus = synchronized {
    ch.fold(ProcStatus(0, 0, 0)) { c =>
      buf.clear()
      var pos = 0L
      var n = 0
      while ({ n = c.read(buf, pos); n > 0 && buf.hasRemaining }) pos += n
      ProcStatus(field("Threads:"), field("VmRSS:"), field("VmHWM:"))
    }
  }

  /** The number after `key` at the start of a line, or 0. */
  private def field(key: String): Long = {
    val a = buf.array
    val end = buf.position()
    var i = 0
    while (i < end) {
      if ((i == 0 || a(i - 1) == '\n') && matches(a, i, end, key)) {
        var j = i + key.length
        while (j < end && (a(j) == ' ' || a(j) == '\t')) j += 1
        var v = 0L
        while (j < end && a(j) >= '0' && a(j) <= '9') { v = v * 10 + (a(j) - '0'); j += 1 }
        return v
      }
      i += 1
    }
    0L
  }

  private def matches(a: Array[Byte], at: Int, end: Int, key: String): Boolean =
    at + key.length <= end && key.indices.forall(k => a(at + k) == key.charAt(k).toByte)
}

object ProcStatus {
  private lazy val reader = new ProcReader
  def read(): ProcStatus = reader.read()
}
