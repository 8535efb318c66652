package iolab.batch

/** `sequential`: E3's plain loop; the calling thread runs every task, one after another. */
object Sequential extends Runner {
  def run(ctx: Ctx): Outcome = {
    var i = 0
    while (i < ctx.len && !ctx.cancelled) { ctx.runBlocking(i); i += 1 }
    Outcome(threadsHint = Some(0L))
  }
}
