package iolab.batch

import java.io.{FileDescriptor, FileOutputStream, PrintStream}
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.{CountDownLatch, TimeUnit}

/** The batch launcher: `--spec FILE.json` runs one batch and prints one `iolab.batch/1`
  * document on stdout, exit 0. Bad input: one line on stderr, exit 2. SIGTERM/SIGINT stop
  * the hand-out; what ran is still printed (tasks not started counted as skipped). */
object Main {
  // The document is the only thing on stdout: everything else (Akka's logger included)
  // writes to System.out, which is pointed at stderr.
  private val out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8")
  private val printed = new AtomicBoolean(false)
  private val finished = new CountDownLatch(1)
  @volatile private var current: Option[(AtomicBoolean, Batch)] = None

  def main(args: Array[String]): Unit = {
    System.setOut(System.err)
    onSignal()
    val path = args.toList match {
      case List("--spec", p)                                 => p
      case List(h) if h == "-h" || h == "--help"             => usage(); exiting = true; sys.exit(0)
      case _ => bad("usage: start --spec FILE.json (a {\"spec\": BatchSpec, \"executor\": {...}} file)")
    }
    val file = try Spec.read(path) catch { case e: BadSpec => bad(e.getMessage) }
    val runner = try Models.runner(file) catch { case e: BadSpec => bad(e.getMessage) }
    val model = file.executor.map(_.model)
    val cancel = new AtomicBoolean(false)
    val batch = new Batch(file.spec, model, runner, cancel)
    current = Some((cancel, batch))
    System.err.println(s"batch: ${file.spec.tasks.len} tasks, ${model.getOrElse("E1 master/worker")}")
    try {
      emit(batch.run())
      finished.countDown()
      batch.close()
    } catch {
      case e: Throwable =>
        exiting = true
        System.err.println(s"error: the batch could not run: $e")
        sys.exit(1)
    }
    exiting = true
    sys.exit(0)
  }

  private def emit(r: BatchResult): Unit =
    if (printed.compareAndSet(false, true)) out.println(Result.document(Seq(r)))

  /** On SIGTERM/SIGINT: no new task is handed out; the batch gets 8 s to finish what it
    * started, else what was measured so far is printed. Exit 0 either way (before a batch
    * started, at once). A normal exit (finished, or bad input) passes through. */
  private def onSignal(): Unit =
    Runtime.getRuntime.addShutdownHook(new Thread(() => {
      if (!exiting) {
        current.foreach { case (cancel, batch) =>
          cancel.set(true)
          if (!finished.await(8, TimeUnit.SECONDS)) batch.partial().foreach(emit)
        }
        out.flush()
        Runtime.getRuntime.halt(0)
      }
    }, "iolab-sigterm"))

  @volatile private var exiting = false

  private def bad(msg: String): Nothing = {
    System.err.println(s"error: $msg")
    exiting = true
    sys.exit(2)
  }

  private def usage(): Unit = System.err.println(
    """usage: start --spec FILE.json
      |  FILE.json: {"spec": BatchSpec, "executor": {"model": M, "params": {knobs}}}
      |  models: sequential; pool [threads: fixed pool, else Scala's global EC];
      |  thread-per-request [max_threads] (global EC + blocking{}); loop-async [workers]
      |  (a promise a scheduler completes). spec.master set: E1 on Akka actors
      |  (worker: blocking, shared-pool, timer). IO backend: sleep only.""".stripMargin)
}
