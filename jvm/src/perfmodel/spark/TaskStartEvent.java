package perfmodel.spark;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * Emitted on the task thread when Spark starts running a task there.
 *
 * <p>JFR records the emitting thread with every event, so samples of that thread between this
 * event and the matching {@link TaskEndEvent} belong to this task attempt. Instant events (rather
 * than one duration event) survive a JVM that dies mid-task: the start is already in the
 * recording.
 */
@Name("perfmodel.TaskStart")
@Label("Spark Task Start")
@Category({"perfmodel", "Spark"})
@Description("A Spark task attempt started running on this thread")
@StackTrace(false)
public final class TaskStartEvent extends Event {
  @Label("Task Attempt Id")
  public long taskId;

  @Label("Stage Id")
  public int stageId;

  @Label("Stage Attempt")
  public int stageAttempt;

  @Label("Partition")
  public int partitionId;

  @Label("Task Attempt Number")
  public int attemptNumber;
}
