package iolab.batch

/** E1's messages, as in the article: the master sends a task, a worker answers `Done` when
  * the task is finished and `Ready` when it can take another. */
object Messages {
  final case class Work(i: Int)
  final case class Ready(worker: Int)
  case object Done
}
