package perfmodel.spark;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * Names the Spark executor this JVM is, so one recording per executor maps to the executor ids
 * in the event log without relying on file names or command-line parsing.
 */
@Name("perfmodel.ExecutorInfo")
@Label("Spark Executor Info")
@Category({"perfmodel", "Spark"})
@Description("The Spark application and executor this JVM runs")
@StackTrace(false)
public final class ExecutorInfoEvent extends Event {
  @Label("Application Id")
  public String appId;

  @Label("Executor Id")
  public String executorId;

  @Label("Host")
  public String host;
}
