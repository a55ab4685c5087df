package perfmodel.jfr;

import java.io.IOException;
import java.io.Writer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Writes the sample line format (described in {@link SampleDump}) with its dictionaries of
 * frames, stacks and threads, so each is written once and referred to by id after that.
 *
 * <p>Both writers of the format use it: {@link SampleDump} for JFR recordings, and the plugin's
 * own sampler ({@code perfmodel.spark.TaskSampler}) for the files it writes. Ids count from 0 in
 * each instance. Not thread-safe: one thread writes.
 */
public final class SampleLines {
  private final Writer out;
  private final Map<String, Integer> frameIds = new HashMap<>();
  private final Map<StackKey, Integer> stackIds = new HashMap<>();
  private final Map<Long, Integer> threadIds = new HashMap<>();

  public SampleLines(Writer out) {
    this.out = out;
  }

  /** A line as given (it must end with a newline). */
  public void write(String line) throws IOException {
    out.write(line);
  }

  /** {@code I key value}: a fact about the recorded JVM. */
  public void info(String key, String value) throws IOException {
    out.write("I\t" + key + "\t" + clean(value == null ? "" : value) + "\n");
  }

  /** The id of a frame named {@code package.Class.method}, written on first use. */
  public int frame(String name) throws IOException {
    Integer id = frameIds.get(name);
    if (id == null) {
      id = frameIds.size();
      frameIds.put(name, id);
      out.write("F\t" + id + "\t" + clean(name) + "\n");
    }
    return id;
  }

  /** The id of a stack (frame ids and line numbers, root first), written on first use. */
  public int stack(int[] frames, int[] lines, boolean truncated) throws IOException {
    StackKey key = new StackKey(frames, lines, truncated);
    Integer id = stackIds.get(key);
    if (id == null) {
      id = stackIds.size();
      stackIds.put(key, id);
      StringBuilder line = new StringBuilder(16 + 12 * frames.length);
      line.append("K\t").append(id).append('\t');
      join(line, frames);
      line.append('\t');
      join(line, lines);
      out.write(line.append('\t').append(truncated ? '1' : '0').append('\n').toString());
    }
    return id;
  }

  /** The reference of the thread keyed {@code key}, written on first use with its ids and name. */
  public int thread(long key, long javaId, long osId, String name) throws IOException {
    Integer ref = threadIds.get(key);
    if (ref == null) {
      ref = threadIds.size();
      threadIds.put(key, ref);
      out.write(
          "H\t" + ref + "\t" + javaId + "\t" + osId + "\t" + clean(name == null ? "" : name) + "\n");
    }
    return ref;
  }

  /** {@code S}: a sample; a wait ({@code W}) also carries how long it stands for. */
  public void sample(long epochNanos, char kind, int threadRef, int stackId, long waitNanos)
      throws IOException {
    out.write("S\t" + epochNanos + "\t" + kind + "\t" + threadRef + "\t" + stackId);
    if (kind == 'W') {
      out.write("\t" + waitNanos);
    }
    out.write('\n');
  }

  /** {@code T}: the plugin's task start ({@code B}) or end ({@code E}) on a thread. */
  public void task(
      long epochNanos,
      char phase,
      int threadRef,
      long taskId,
      int stageId,
      int stageAttempt,
      String status)
      throws IOException {
    out.write(
        "T\t" + epochNanos + "\t" + phase + "\t" + threadRef + "\t" + taskId + "\t" + stageId
            + "\t" + stageAttempt + "\t" + clean(status == null ? "" : status) + "\n");
  }

  /** A value as one field: tabs and line breaks would split it. */
  public static String clean(String s) {
    return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
  }

  private static void join(StringBuilder out, int[] values) {
    for (int i = 0; i < values.length; i++) {
      if (i > 0) {
        out.append(',');
      }
      out.append(values[i]);
    }
  }

  /** Value key of a stack: identical frames and lines share one dictionary entry. */
  private static final class StackKey {
    final int[] ids;
    final int[] lines;
    final boolean truncated;
    final int hash;

    StackKey(int[] ids, int[] lines, boolean truncated) {
      this.ids = ids;
      this.lines = lines;
      this.truncated = truncated;
      this.hash = 31 * (31 * Arrays.hashCode(ids) + Arrays.hashCode(lines)) + (truncated ? 1 : 0);
    }

    @Override
    public int hashCode() {
      return hash;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof StackKey)) {
        return false;
      }
      StackKey other = (StackKey) o;
      return truncated == other.truncated
          && Arrays.equals(ids, other.ids)
          && Arrays.equals(lines, other.lines);
    }
  }
}
