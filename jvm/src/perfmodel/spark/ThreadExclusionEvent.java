package perfmodel.spark;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A thread the plugin took out of the recording because it only ever waits, or (with an empty
 * thread name) the reason it could not, so readers can say what is missing and why.
 */
@Name("perfmodel.ThreadExclusion")
@Label("Thread Excluded From Sampling")
@Category({"perfmodel", "Spark"})
@Description("A thread that only waits, no longer recorded; or why exclusion is unavailable")
@StackTrace(false)
public final class ThreadExclusionEvent extends Event {
  @Label("Thread Name")
  public String threadName;

  @Label("Java Thread Id")
  public long javaThreadId;

  @Label("Reason")
  public String reason;
}
