package perfmodel.spark;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * Marks task boundaries in Java Flight Recorder recordings, enabled purely by configuration.
 *
 * <p>JFR keeps the name a thread had when it started, so samples of Spark's task threads cannot
 * be tied to tasks by name. Spark runs {@link ExecutorPlugin#onTaskStart()} and the end callbacks
 * on the task thread itself, so an event emitted there carries exactly the thread that the
 * following samples will name. Enable with {@code spark.plugins.defaultList=perfmodel.spark.
 * PerfmodelPlugin} (or {@code spark.plugins}); it costs two tiny events per task and does nothing
 * when no recording runs. With a recording running it also takes threads that only ever wait out
 * of sampling ({@link IdleThreadExcluder}), so JFR's native samples go to the threads that work.
 * With {@value TaskSampler#DIR} set, it samples the task threads itself instead ({@link
 * TaskSampler}), and JFR need not run at all.
 *
 * <p>On the driver, when {@code spark.perfmodel.record.dir} is set, the plugin writes {@code
 * apps/<appId>.json} there with the settings that decide where the event log went, so {@code
 * perfmodel record} finds the log even when the user's own configuration chose its location.
 */
public final class PerfmodelPlugin implements SparkPlugin {
  static final String RECORD_DIR = "spark.perfmodel.record.dir";
  static final String EXCLUDE_IDLE_THREADS = "spark.perfmodel.excludeIdleThreads";

  @Override
  public DriverPlugin driverPlugin() {
    return new Driver();
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new Executor();
  }

  /** Driver and executor alike (one JVM in local mode): see {@link IdleThreadExcluder}. */
  static void startExcluder(SparkConf conf) {
    try {
      if (conf.getBoolean(EXCLUDE_IDLE_THREADS, true)) {
        IdleThreadExcluder.startOnce();
      }
    } catch (RuntimeException | LinkageError e) {
      System.err.println("perfmodel plugin: could not start the idle-thread excluder: " + e);
    }
  }

  /** Records where the application's event log goes; never fails the application. */
  static final class Driver implements DriverPlugin {
    private SparkContext sc;

    @Override
    public Map<String, String> init(SparkContext sc, PluginContext ctx) {
      this.sc = sc;
      startExcluder(sc.getConf());
      return Collections.emptyMap();
    }

    /** Spark calls this once the application id is known (it is not yet in {@code init}). */
    @Override
    public void registerMetrics(String appId, PluginContext ctx) {
      if (sc == null) {
        return;
      }
      SparkConf conf = sc.getConf();
      String dir = conf.get(RECORD_DIR, "");
      if (!dir.isEmpty()) {
        try {
          writeAppInfo(Paths.get(dir), appId, sc, conf);
        } catch (IOException | RuntimeException e) {
          System.err.println("perfmodel plugin: could not write application info: " + e);
        }
      }
    }

    private static void writeAppInfo(Path dir, String appId, SparkContext sc, SparkConf conf)
        throws IOException {
      Map<String, String> info = new TreeMap<>();
      info.put("app_id", appId);
      info.put("app_attempt_id", sc.applicationAttemptId().getOrElse(() -> ""));
      info.put("app_name", sc.appName());
      info.put("master", sc.master());
      info.put("spark_version", sc.version());
      info.put("start_ms", Long.toString(sc.startTime()));
      info.put("driver_pid", Long.toString(ProcessHandle.current().pid()));
      for (String key :
          new String[] {
            "spark.eventLog.enabled",
            "spark.eventLog.dir",
            "spark.eventLog.compress",
            "spark.eventLog.compression.codec",
            "spark.eventLog.rolling.enabled",
            "spark.plugins",
            "spark.plugins.defaultList",
          }) {
        info.put(key, conf.get(key, ""));
      }
      StringBuilder json = new StringBuilder("{");
      boolean first = true;
      for (Map.Entry<String, String> e : info.entrySet()) {
        if (!first) {
          json.append(',');
        }
        first = false;
        json.append('\n').append("  ").append(quote(e.getKey())).append(": ");
        json.append(quote(e.getValue()));
      }
      json.append("\n}\n");
      Path apps = dir.resolve("apps");
      Files.createDirectories(apps);
      String name = appId.replaceAll("[^A-Za-z0-9._-]", "_");
      Path tmp = apps.resolve(name + ".json.tmp");
      Files.write(tmp, json.toString().getBytes(StandardCharsets.UTF_8));
      Files.move(tmp, apps.resolve(name + ".json"), StandardCopyOption.REPLACE_EXISTING);
    }

    static String quote(String s) {
      StringBuilder out = new StringBuilder("\"");
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        switch (c) {
          case '"':
            out.append("\\\"");
            break;
          case '\\':
            out.append("\\\\");
            break;
          case '\n':
            out.append("\\n");
            break;
          case '\r':
            out.append("\\r");
            break;
          case '\t':
            out.append("\\t");
            break;
          default:
            if (c < 0x20) {
              out.append(String.format("\\u%04x", (int) c));
            } else {
              out.append(c);
            }
        }
      }
      return out.append('"').toString();
    }
  }

  /**
   * Marks tasks on the task thread: JFR events, or, when {@value TaskSampler#DIR} is set, the
   * in-process {@link TaskSampler} instead of JFR (no JFR event is then created at all). With
   * {@value TaskSampler#WITH_JFR} as well, both: the same run sampled both ways, to compare the
   * samplers' predictions without the run-to-run noise of separate runs.
   */
  static final class Executor implements ExecutorPlugin {
    private TaskSampler sampler;
    private boolean jfrEvents = true;

    @Override
    public void init(PluginContext ctx, Map<String, String> extraConf) {
      // In local mode the executor starts before the application id is assigned.
      String appId = ctx.conf().get("spark.app.id", "");
      try {
        sampler = TaskSampler.startOnce(ctx.conf(), ctx.executorID(), hostname(ctx), appId);
      } catch (RuntimeException | LinkageError e) {
        System.err.println("perfmodel plugin: could not start the task sampler: " + e);
      }
      jfrEvents = sampler == null || ctx.conf().getBoolean(TaskSampler.WITH_JFR, false);
      if (!jfrEvents) {
        return;
      }
      try {
        ExecutorInfoEvent event = new ExecutorInfoEvent();
        event.appId = appId;
        event.executorId = ctx.executorID();
        event.host = hostname(ctx);
        event.commit();
      } catch (RuntimeException e) {
        System.err.println("perfmodel plugin: could not record executor info: " + e);
      }
      startExcluder(ctx.conf());
    }

    /**
     * The executor's host, or "" where Spark cannot say: an executor's RPC environment has no
     * address of its own on some cluster managers, and {@code hostname()} then throws. The
     * reader takes the host from the executor's {@code --hostname} argument instead.
     */
    private static String hostname(PluginContext ctx) {
      try {
        return ctx.hostname();
      } catch (RuntimeException e) {
        return "";
      }
    }

    @Override
    public void shutdown() {
      if (sampler != null) {
        sampler.stop();
      }
    }

    /**
     * The task this thread runs (task attempt id, stage id, stage attempt). Spark clears {@link
     * TaskContext} before the end callbacks run, so the start callback remembers the ids.
     */
    private final ThreadLocal<long[]> current = new ThreadLocal<>();

    @Override
    public void onTaskStart() {
      TaskContext tc = TaskContext.get();
      if (tc == null) {
        current.remove();
        return;
      }
      long[] task = {tc.taskAttemptId(), tc.stageId(), tc.stageAttemptNumber()};
      current.set(task);
      if (sampler != null) {
        sampler.taskStarted(task[0], (int) task[1], (int) task[2]);
      }
      if (!jfrEvents) {
        return;
      }
      TaskStartEvent event = new TaskStartEvent();
      event.taskId = task[0];
      event.stageId = (int) task[1];
      event.stageAttempt = (int) task[2];
      event.partitionId = tc.partitionId();
      event.attemptNumber = tc.attemptNumber();
      event.commit();
    }

    @Override
    public void onTaskSucceeded() {
      end("SUCCESS");
    }

    @Override
    public void onTaskFailed(TaskFailedReason failureReason) {
      end("FAILED");
    }

    private void end(String status) {
      long[] task = current.get();
      current.remove();
      if (task == null) {
        return;
      }
      if (sampler != null) {
        sampler.taskEnded(task[0], (int) task[1], (int) task[2], status);
      }
      if (!jfrEvents) {
        return;
      }
      TaskEndEvent event = new TaskEndEvent();
      event.taskId = task[0];
      event.stageId = (int) task[1];
      event.stageAttempt = (int) task[2];
      event.status = status;
      event.commit();
    }
  }
}
