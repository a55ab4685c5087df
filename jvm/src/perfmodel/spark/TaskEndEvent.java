package perfmodel.spark;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** Emitted on the task thread when a task attempt finishes there (successfully or not). */
@Name("perfmodel.TaskEnd")
@Label("Spark Task End")
@Category({"perfmodel", "Spark"})
@Description("A Spark task attempt stopped running on this thread")
@StackTrace(false)
public final class TaskEndEvent extends Event {
  @Label("Task Attempt Id")
  public long taskId;

  @Label("Stage Id")
  public int stageId;

  @Label("Stage Attempt")
  public int stageAttempt;

  @Label("Status")
  public String status;
}
